
L
in0Const*
dtype0*1
value(B&"wh¿™p?Î7á?·ì¹¿¶ž¶¿§õ¿
L
in1Const*
dtype0*1
value(B&"°0ÿ¿>=¿×Wô¿ÿZk?o7ö¿º‚!¿
L
in2Const*
dtype0*1
value(B&"á£¿EÅ->ýj±¿Ìüè¾€õ:?6>
-
AddNAddNin0in1in2*
T0*
N

yIdentityAddN*
T0
K
dyConst*
dtype0*1
value(B&"¨u?zû->í
?b³?Nf^¿¼"È?
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
0
grad_0Identitygradients/grad_ys_0*
T0
0
grad_1Identitygradients/grad_ys_0*
T0
0
grad_2Identitygradients/grad_ys_0*
T0

initNoOp"ª