
d
in0Const*
dtype0*I
value@B>"0ÂWº?ðc?ùZ?ã£B?iuÀ?òðJ?uÓÑ>.?ñÌ>·š7>¬N>ÎDÄ?

SqrtSqrtin0*
T0

yIdentitySqrt*
T0
c
dyConst*
dtype0*I
value@B>"0×ù?2žÙ¾W¯>nQ*?¦÷Q?aœ@¾žzˆ¿¸?¯ÐÄ>JÂ½Ûä…?ÎÝ"?
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