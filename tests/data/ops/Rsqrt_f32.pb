
d
in0Const*I
value@B>"0 s‚>›ç?_c<?İ.>PÖ?ï9 ?&+?9ûÃ?[”‰?XÙ²?–0?aw{?*
dtype0

RsqrtRsqrtin0*
T0

yIdentityRsqrt*
T0
c
dyConst*I
value@B>"0·¹ê¿MN¿¦¹!¿z%«¿Ò?#é¿Œ¦²¾ÜK¿¸ø¾;H¶·?Eg¿Œ3?*
dtype0
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