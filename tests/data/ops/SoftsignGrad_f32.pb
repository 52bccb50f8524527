
d
in0Const*I
value@B>"0®Ã§?Ç»?Çl¿­Æ¿ªA?(;¹¿ı—ğ?gèì¿„¥¿Ó‡Ñ?Kƒ¥¿³¿*
dtype0
d
in1Const*
dtype0*I
value@B>"0¶‹š¿oéó?4¥•¿Û!¿ò•D>T¸É?[Bø¿–C$¾¶ÊÃ¿©„¿Mq©¿=Àî¿
/
SoftsignGradSoftsignGradin0in1*
T0
$
yIdentitySoftsignGrad*
T0

initNoOp"ª