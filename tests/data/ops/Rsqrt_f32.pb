
d
in0Const*
dtype0*I
value@B>"0fÅT?tÑ¨?Š=­?ØiD>ëæ£?œ]Ê?’GÖ?
Ã˜?ƒãT?*ã?o§?Tç?

RsqrtRsqrtin0*
T0

yIdentityRsqrt*
T0
c
dyConst*
dtype0*I
value@B>"0£¿@ü¿í:•?%-…?’æÇ¾åP>1ËÜ?RP¶¾¥Åš?àe7?*p…?ô¯¿
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
j
gradients/Rsqrt_grad/RsqrtGrad	RsqrtGradRsqrtgradients/grad_ys_0*
T0*
_class

loc:@Rsqrt
;
grad_0Identitygradients/Rsqrt_grad/RsqrtGrad*
T0

initNoOp"ª