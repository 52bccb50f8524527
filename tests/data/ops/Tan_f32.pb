
d
in0Const*
dtype0*I
value@B>"0àÀ.¿‘4?Ñ!?¼À%¿?5.Y¿Rk¢¾‘6>·K ¿ð‡…¿Çou=˜?

TanTanin0*
T0

yIdentityTan*
T0
c
dyConst*
dtype0*I
value@B>"0±¶?•Q¿Ùaæ?Þžß>ßÉ=` p?#‰>ƒ?BÆÚ¿dR“?.¶¿&dÈ¿
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
T0*
_class

loc:@y
Y
gradients/Tan_grad/CosCosin0^gradients/grad_ys_0*
T0*
_class

loc:@Tan
d
gradients/Tan_grad/Reciprocal
Reciprocalgradients/Tan_grad/Cos*
T0*
_class

loc:@Tan
c
gradients/Tan_grad/SquareSquaregradients/Tan_grad/Reciprocal*
T0*
_class

loc:@Tan
n
gradients/Tan_grad/mulMulgradients/Tan_grad/Squaregradients/grad_ys_0*
T0*
_class

loc:@Tan
3
grad_0Identitygradients/Tan_grad/mul*
T0

initNoOp"ª