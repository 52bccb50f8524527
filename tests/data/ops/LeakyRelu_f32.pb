
d
in0Const*I
value@B>"0¸Ÿ?9œú¿º°z>¸  ?’ûz?Ì,Ÿ¿Ûü¿VI‹?úhê?ÎÈN?¥GO¿X6‰?*
dtype0
4
	LeakyRelu	LeakyReluin0*
T0*
alpha%ÍÌÌ=
!
yIdentity	LeakyRelu*
T0
c
dyConst*I
value@B>"0„£¿Ö@?OO?úÈ!¿qÏÕ?ûjU?¦¥Ÿ?¬($>tZ¾Õğ9?£ˆ¼ğñ¢¿*
dtype0
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
ˆ
&gradients/LeakyRelu_grad/LeakyReluGradLeakyReluGradgradients/grad_ys_0in0*
_class
loc:@LeakyRelu*
T0*
alpha%ÍÌÌ=
C
grad_0Identity&gradients/LeakyRelu_grad/LeakyReluGrad*
T0

initNoOp"ª