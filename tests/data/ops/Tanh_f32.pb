
d
in0Const*
dtype0*I
value@B>"0 Õ¾Yõ½%3?¼ÏŒ?›¶¿×x?]É?å¶>WXd?#Ëì¿&{ó?ÕÿQ?

TanhTanhin0*
T0

yIdentityTanh*
T0
c
dyConst*
dtype0*I
value@B>"0W4º?˜ å¿4WË?Wa×?à$Ê¿_‡Ñ?„>×¿í?Jêú¼<Ë?%k3?Ž¶,¾
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
_class

loc:@y*
T0
e
gradients/Tanh_grad/TanhGradTanhGradTanhgradients/grad_ys_0*
_class
	loc:@Tanh*
T0
9
grad_0Identitygradients/Tanh_grad/TanhGrad*
T0

initNoOp"ª