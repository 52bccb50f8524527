
d
in0Const*I
value@B>"0QØ?µsÀ?ÁÕ÷>©ºë>­®7?ÕAñ?þƒº?H¿§?]¹_?¾ª½?l´>eÀö?*
dtype0

SqrtSqrtin0*
T0

yIdentitySqrt*
T0
c
dyConst*I
value@B>"0’`¿]1ò½]²¿"=f¿p¤½ˆ
Ü¿ÿµá>þ$‡?Cnæ?"¼”?‡•„¿üi§¿*
dtype0
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
e
gradients/Sqrt_grad/SqrtGradSqrtGradSqrtgradients/grad_ys_0*
_class
	loc:@Sqrt*
T0
9
grad_0Identitygradients/Sqrt_grad/SqrtGrad*
T0

initNoOp"ª