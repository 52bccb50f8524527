
X
in0Const*=
value4B2
"(¡L¾çÑ³?˜â¿h[˜¿¾?’XÒ>šè©?õIñ¿"3Q?f§†?*
dtype0

SeluSeluin0*
T0

yIdentitySelu*
T0
W
dyConst*=
value4B2
"(T]¿ð5?šSÒ¿Ÿ“¿Mê?Õ)ì¾ÌñS>ØÓ¿teí¿òK¿*
dtype0
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
e
gradients/Selu_grad/SeluGradSeluGradgradients/grad_ys_0Selu*
T0*
_class
	loc:@Selu
9
grad_0Identitygradients/Selu_grad/SeluGrad*
T0

initNoOp"ª