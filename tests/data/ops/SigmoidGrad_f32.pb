
d
in0Const*
dtype0*I
value@B>"0°?±ŞÂ>ç4?5i>Àª> t_?e3	?[õ>¼tS>JK?:6?]Õ>
d
in1Const*
dtype0*I
value@B>"0®Ã§?Ç»?Çl¿­Æ¿ªA?(;¹¿ı—ğ?gèì¿„¥¿Ó‡Ñ?Kƒ¥¿³¿
-
SigmoidGradSigmoidGradin0in1*
T0
#
yIdentitySigmoidGrad*
T0

initNoOp"ª