
X
in0Const*=
value4B2
"(ƒ%…¾*Tp=hï…>Tî¿o©¾?Ô…¿W>è4ü¿Oïæ¿¼ÙÝ?*
dtype0
"
SoftsignSoftsignin0*
T0
 
yIdentitySoftsign*
T0
W
dyConst*=
value4B2
"(øh?Ì¤?ªæï?F†˜?ÕÓC?é}à¿$ú¾é¥›?¼Ê?jº¾*
dtype0
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
t
$gradients/Softsign_grad/SoftsignGradSoftsignGradgradients/grad_ys_0in0*
T0*
_class
loc:@Softsign
A
grad_0Identity$gradients/Softsign_grad/SoftsignGrad*
T0

initNoOp"ª