
d
in0Const*
dtype0*I
value@B>"0|DÉ@^øœ@­¸­ÀÓäe@/*gÀv7õ@ÑÕ;¾œôðÀ34!ÀòÚÌ@›£@ÔMØ?

Relu6Relu6in0*
T0

yIdentityRelu6*
T0
c
dyConst*
dtype0*I
value@B>"0b¼Å¿ät)¾:3š¿²W'¾ v?ù!Õ>PÌ‡?)Û*¿Qb‡>|Qñ?Rkï¾7Ÿ=
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
j
gradients/Relu6_grad/Relu6Grad	Relu6Gradgradients/grad_ys_0Relu6*
_class

loc:@Relu6*
T0
;
grad_0Identitygradients/Relu6_grad/Relu6Grad*
T0

initNoOp"ª