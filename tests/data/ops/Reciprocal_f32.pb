
d
in0Const*I
value@B>"0å\?lÞ$?¼Þ‘?B??÷?-•?C@?õJ€?ÝŸê?OÐÈ?š•?ËáŽ?*
dtype0
&

Reciprocal
Reciprocalin0*
T0
"
yIdentity
Reciprocal*
T0
c
dyConst*I
value@B>"0	V¬?Õ—>ÖùÃ¾Ø÷Ï¿–£½–-ò¿nÖ?>Ï¿ÚÉ?\®?÷ë¿‹'‹½*
dtype0
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
ƒ
(gradients/Reciprocal_grad/ReciprocalGradReciprocalGrad
Reciprocalgradients/grad_ys_0*
_class
loc:@Reciprocal*
T0
E
grad_0Identity(gradients/Reciprocal_grad/ReciprocalGrad*
T0

initNoOp"ª