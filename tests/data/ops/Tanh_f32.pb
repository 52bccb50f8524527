
d
in0Const*
dtype0*I
value@B>"0Ò¸¦>Å3Ô¿3:¤>‚â
¿´ã>¿9-9¿Ë‹©>’ó_¿EŠM¿¨¸Œ?ÿ‹¿·¼¿

TanhTanhin0*
T0

yIdentityTanh*
T0
c
dyConst*
dtype0*I
value@B>"0‰·³?)SH¿'½¿‚³®>s²?,V¾¿NäÃ¾»IÅ¿wk«¿w“¥½rßâ¿ê§?
j
gradients/grad_ys_0Identitydy*
T0*&
 _has_manual_control_dependencies(*
_class

loc:@y
e
gradients/Tanh_grad/TanhGradTanhGradTanhgradients/grad_ys_0*
T0*
_class
	loc:@Tanh
9
grad_0Identitygradients/Tanh_grad/TanhGrad*
T0

initNoOp"ª