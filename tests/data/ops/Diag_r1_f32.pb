
<
in0Const*
dtype0*!
valueB"Ø¾¾¦¿LÆÚ¿

DiagDiagin0*
T0

yIdentityDiag*
T0
W
dyConst*
dtype0*=
value4B2"$/$¥¿Çš¿¾>›ä’>&‹½Ô¿ºk²¾ĞpX¿­uŸ¿
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
_
gradients/Diag_grad/DiagPartDiagPartgradients/grad_ys_0*
T0*
_class
	loc:@Diag
9
grad_0Identitygradients/Diag_grad/DiagPart*
T0

initNoOp"ª