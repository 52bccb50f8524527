
d
in0Const*
dtype0*I
value@B>"0|¿Â>4#x?6R)?Ýù?‰›ç?,#Ô?èPq?˜}W>	uã?j›m?C×?Ñ‘?

RsqrtRsqrtin0*
T0

yIdentityRsqrt*
T0
c
dyConst*
dtype0*I
value@B>"0>]Þ>Iëû¿f&º¿¢Òà?US¿$;¤>ÿM}?Êª½Ý@ó½ûŸÈ?á`Ö¿²Lð¿
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
j
gradients/Rsqrt_grad/RsqrtGrad	RsqrtGradRsqrtgradients/grad_ys_0*
_class

loc:@Rsqrt*
T0
;
grad_0Identitygradients/Rsqrt_grad/RsqrtGrad*
T0

initNoOp"ª