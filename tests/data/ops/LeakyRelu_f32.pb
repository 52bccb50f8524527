
d
in0Const*
dtype0*I
value@B>"0¸Ÿ?9œú¿º°z>¸  ?’ûz?Ì,Ÿ¿Ûü¿VI‹?úhê?ÎÈN?¥GO¿X6‰?
4
	LeakyRelu	LeakyReluin0*
alpha%ÍÌÌ=*
T0
!
yIdentity	LeakyRelu*
T0
c
dyConst*
dtype0*I
value@B>"0µŠé¿þÙ¾­FÑ¿—H\¿«È³¾D9ÿ?º¬È?ŠþÈ?x0r>Ë¾¦¿é‘=>‘Ã¯¿
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
ˆ
&gradients/LeakyRelu_grad/LeakyReluGradLeakyReluGradgradients/grad_ys_0in0*
alpha%ÍÌÌ=*
_class
loc:@LeakyRelu*
T0
C
grad_0Identity&gradients/LeakyRelu_grad/LeakyReluGrad*
T0

initNoOp"ª