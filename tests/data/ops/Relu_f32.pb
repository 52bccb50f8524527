
d
in0Const*
dtype0*I
value@B>"0^Ò¼}Ÿ¿†ÎÅ¿06¿9—±¿¢*?®½?1R¿+Ue?7'>îjŸ=YØˆ½

ReluReluin0*
T0

yIdentityRelu*
T0
c
dyConst*
dtype0*I
value@B>"0•œ‰¿Ú¬­¿¸%«¿Èˆ)¿0•è>Ú«Ã¿+'…?¼fi¾èÊ¿Fëh¿6ñ¢?¬³%?
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