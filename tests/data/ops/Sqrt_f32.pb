
d
in0Const*I
value@B>"0Ô7S?Øow?gÎÕ?cº?Ýïù?ö”‰?¼>ù4R?i¬£?~¬€?ñÎs?k¥?*
dtype0

SqrtSqrtin0*
T0

yIdentitySqrt*
T0
c
dyConst*I
value@B>"0{Ýˆ=üu!¿úŽ½>÷AÎ¿ñ“«?Ð§ƒ?mö9¿xRÇ?ì[>ß½r£à=FÓ¿*
dtype0
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
e
gradients/Sqrt_grad/SqrtGradSqrtGradSqrtgradients/grad_ys_0*
T0*
_class
	loc:@Sqrt
9
grad_0Identitygradients/Sqrt_grad/SqrtGrad*
T0

initNoOp"ª