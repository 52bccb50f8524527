
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
value@B>"0|—¿>Àˆ>[M?Û×¿Ž„=—??uÔö¿8¢²¿y»æ¿æÃ?º-r¿¾°¿*
dtype0
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
ˆ
&gradients/LeakyRelu_grad/LeakyReluGradLeakyReluGradgradients/grad_ys_0in0*
T0*
_class
loc:@LeakyRelu*
alpha%ÍÌÌ=
C
grad_0Identity&gradients/LeakyRelu_grad/LeakyReluGrad*
T0

initNoOp"ª