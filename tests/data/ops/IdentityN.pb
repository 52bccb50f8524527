
L
in0Const*1
value(B&"`‰?7!å¾
q'?Ò¢¿ø±?Îª?*
dtype0
@
in1Const*%
valueB"Ü¾kÌŒ¿¢íü¿3I&>*
dtype0
-
	IdentityN	IdentityNin0in1*
T
2
!
yIdentity	IdentityN*
T0
%
y_1IdentityIdentityN:1*
T0
K
dyConst*1
value(B&"&{ó?ÕÿQ?7_C¿KÖÑ>®¿½È>*
dtype0
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
U
gradients/zeros_like	ZerosLikeIdentityN:1*
T0*
_class
loc:@IdentityN
0
grad_0Identitygradients/grad_ys_0*
T0
1
grad_1Identitygradients/zeros_like*
T0

initNoOp"ª