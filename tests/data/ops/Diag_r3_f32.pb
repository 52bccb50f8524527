
H
in0Const*
dtype0*-
value$B"" ì'?’an¾˜
=¿?£@=

DiagDiagin0*
T0

yIdentityDiag*
T0
ƒ
dyConst*
dtype0*i
value`B^"@U ¿ãˆ¿69ú¿‹€i»¼%ê¿BÙ‰=ed?õ•?xk¸>ùTŸ?Ho‰¿4£ð¿ÌØ¿œV«¿¿h?î~‰¿
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