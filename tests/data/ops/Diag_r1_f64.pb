
H
in0Const*
dtype0*-
value$B""dÈ¢ži(ò?š 0i*Mö?(ZhçÐ¿

DiagDiagin0*
T0

yIdentityDiag*
T0
{
dyConst*
dtype0*a
valueXBV"H–Âõº®îý?X[_j¥é¿â¯5PYý?ø<ˆâø?pƒ©ª&ë¿tM,€qø¿@‚&#"ö¿†5õa,ø?êÝwW;÷?
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
_
gradients/Diag_grad/DiagPartDiagPartgradients/grad_ys_0*
T0*
_class
	loc:@Diag
9
grad_0Identitygradients/Diag_grad/DiagPart*
T0

initNoOp"ª