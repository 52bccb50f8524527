
X
in0Const*
dtype0*=
value4B2
"(ƒ%…¾*Tp=hï…>Tî¿o©¾?Ô…¿W>è4ü¿Oïæ¿¼Ùİ?
"
SoftsignSoftsignin0*
T0
 
yIdentitySoftsign*
T0
W
dyConst*
dtype0*=
value4B2
"(cÁ?Û¸?è/ê?²Ï‰?@;?ö> »ºç¿ÿqÿ?lŞ¿}²¿
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
t
$gradients/Softsign_grad/SoftsignGradSoftsignGradgradients/grad_ys_0in0*
_class
loc:@Softsign*
T0
A
grad_0Identity$gradients/Softsign_grad/SoftsignGrad*
T0

initNoOp"ª