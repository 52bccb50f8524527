
d
in0Const*
dtype0*I
value@B>"0¸Ÿ?9œú¿º°z>¸  ?’ûz?Ì,Ÿ¿Ûü¿VI‹?úhê?ÎÈN?¥GO¿X6‰?
4
	LeakyRelu	LeakyReluin0*
T0*
alpha%ÍÌÌ=
!
yIdentity	LeakyRelu*
T0
c
dyConst*
dtype0*I
value@B>"0>÷s¾…²¿ü¨þ¾1ä—¿H¹B¿ËÇå=7×¿ó“ó½“èÐ?c˜{?Ïfø?â³¿
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
ˆ
&gradients/LeakyRelu_grad/LeakyReluGradLeakyReluGradgradients/grad_ys_0in0*
T0*
alpha%ÍÌÌ=*
_class
loc:@LeakyRelu
C
grad_0Identity&gradients/LeakyRelu_grad/LeakyReluGrad*
T0

initNoOp"ª