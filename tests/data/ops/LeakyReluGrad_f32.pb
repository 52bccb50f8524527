
d
in0Const*
dtype0*I
value@B>"0®Ã§?Ç»?Çl¿­Æ¿ªA?(;¹¿ý—ð?gèì¿„¥¿Ó‡Ñ?Kƒ¥¿Ž³¿
d
in1Const*
dtype0*I
value@B>"0¶‹š¿oéó?4¥•¿Û!¿ò•D>T¸É?[Bø¿–C$¾¶ÊÃ¿©„¿Mq©¿=Àî¿
A
LeakyReluGradLeakyReluGradin0in1*
T0*
alpha%š™™>
%
yIdentityLeakyReluGrad*
T0

initNoOp"ª