
d
in0Const*I
value@B>"0¸Ã¿æF?Ü0Â¿zå¹¿{Ÿ=žî¶?±®?¥èõ¿Óšš½†*}>èà?ÿY?*
dtype0

ReluReluin0*
T0

yIdentityRelu*
T0
c
dyConst*I
value@B>"0fu¥¿éM„½f÷Ò¿ìg¿wf¹¾3W?Ë¼v¿­»M¿H˜’>2†¿ô)ö¿ÂÅÜ>*
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