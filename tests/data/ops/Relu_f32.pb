
d
in0Const*I
value@B>"0^Ò¼}Ÿ¿†ÎÅ¿06¿9—±¿¢*?®½?1R¿+Ue?7'>îjŸ=YØˆ½*
dtype0

ReluReluin0*
T0

yIdentityRelu*
T0
c
dyConst*I
value@B>"0ºJ>/ú?ØŸí¿/÷‘?ET·¿‰¿žJ¾H§¼?(xW¿¨=Ó¿f´·?8­í¿*
dtype0
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
e
gradients/Relu_grad/ReluGradReluGradgradients/grad_ys_0Relu*
_class
	loc:@Relu*
T0
9
grad_0Identitygradients/Relu_grad/ReluGrad*
T0

initNoOp"ª