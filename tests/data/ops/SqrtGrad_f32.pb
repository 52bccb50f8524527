
d
in0Const*I
value@B>"0°?±ŞÂ>ç4?5i>Àª> t_?e3	?[õ>¼tS>JK?:6?]Õ>*
dtype0
d
in1Const*I
value@B>"0®Ã§?Ç»?Çl¿­Æ¿ªA?(;¹¿ı—ğ?gèì¿„¥¿Ó‡Ñ?Kƒ¥¿³¿*
dtype0
'
SqrtGradSqrtGradin0in1*
T0
 
yIdentitySqrtGrad*
T0

initNoOp"ª