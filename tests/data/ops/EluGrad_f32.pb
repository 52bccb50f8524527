
d
in0Const*
dtype0*I
value@B>"0®Ã§?Ç»?Çl¿­Æ¿ªA?(;¹¿ı—ğ?gèì¿„¥¿Ó‡Ñ?Kƒ¥¿³¿
d
in1Const*I
value@B>"0¶‹š¿oéó?4¥•¿Û!¿ò•D>T¸É?[Bø¿–C$¾¶ÊÃ¿©„¿Mq©¿=Àî¿*
dtype0
%
EluGradEluGradin0in1*
T0

yIdentityEluGrad*
T0

initNoOp"ª