
X
in0Const*
dtype0*=
value4B2
"(¡L¾çÑ³?˜â¿h[˜¿¾?’XÒ>šè©?õIñ¿"3Q?f§†?

SeluSeluin0*
T0

yIdentitySelu*
T0
W
dyConst*
dtype0*=
value4B2
"(BÙ‰=ed?õ•?xk¸>ùTŸ?Ho‰¿4£ð¿ÌØ¿œV«¿¿h?
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
e
gradients/Selu_grad/SeluGradSeluGradgradients/grad_ys_0Selu*
_class
	loc:@Selu*
T0
9
grad_0Identitygradients/Selu_grad/SeluGrad*
T0

initNoOp"ª