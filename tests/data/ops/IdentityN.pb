
L
in0Const*
dtype0*1
value(B&"`‰?7!å¾
q'?Ò¢¿ø±?Îª?
@
in1Const*
dtype0*%
valueB"Ü¾kÌŒ¿¢íü¿3I&>
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
dyConst*
dtype0*1
value(B&"â¯¿ÙÑâ¿F¢?´Ä?Ë+\?€¿
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
U
gradients/zeros_like	ZerosLikeIdentityN:1*
_class
loc:@IdentityN*
T0
0
grad_0Identitygradients/grad_ys_0*
T0
1
grad_1Identitygradients/zeros_like*
T0

initNoOp"ª