
d
in0Const*
dtype0*I
value@B>"0t.O?:!Ì?ûş?TÒ?Nš”>¢I»><«‘?I–?šÒ¸?´hz?ò[Ä>Ü?

SqrtSqrtin0*
T0

yIdentitySqrt*
T0
c
dyConst*
dtype0*I
value@B>"0¦¤?šı¿}L¿è¨Œ¿%£¾Xv/?Rˆo?ml¿Vµ~?Âs€?Eã—?4µ¿
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