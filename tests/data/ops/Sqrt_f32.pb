
d
in0Const*I
value@B>"0t.O?:!Ì?ûþ?TÒ?Nš”>¢I»><«‘?I–?šÒ¸?´hz?ò[Ä>Ü?*
dtype0

SqrtSqrtin0*
T0

yIdentitySqrt*
T0
c
dyConst*I
value@B>"0õ³¬?c‹ã>õ|§?«D¾¼é¿p¨Û?
Üå?YOß¿nk¿º~Ø¿ìœÚ>S^M>*
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