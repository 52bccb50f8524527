
d
in0Const*I
value@B>"0ÖÕì?¥½{?Z‹?ŽK?ûÌã?yý¿3>¿z¼?Ãü?'+Þ¿TúÚ?åtH¿*
dtype0

CosCosin0*
T0

yIdentityCos*
T0
c
dyConst*I
value@B>"0+¼?ÆÏ?hÞù¿!i–¿Û,†?oÙ¿½ëƒ?ºc¿°ÎÌ¾m³¿1h€?@*A=*
dtype0
j
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y*&
 _has_manual_control_dependencies(
S
gradients/Cos_grad/NegNeggradients/grad_ys_0*
T0*
_class

loc:@Cos
Y
gradients/Cos_grad/SinSinin0^gradients/grad_ys_0*
T0*
_class

loc:@Cos
n
gradients/Cos_grad/mulMulgradients/Cos_grad/Neggradients/Cos_grad/Sin*
T0*
_class

loc:@Cos
3
grad_0Identitygradients/Cos_grad/mul*
T0

initNoOp"ª