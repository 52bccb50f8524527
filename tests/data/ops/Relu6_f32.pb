
d
in0Const*I
value@B>"0u}Ø@ç~¤À½‚@hDâ?÷ú“@çlµÀµÈÀØ
E½ÂIÅ@·åÂ@4âe@zÓÀ*
dtype0

Relu6Relu6in0*
T0

yIdentityRelu6*
T0
c
dyConst*I
value@B>"0p2‰¾óª¿ìy‚?2™?Þ•š¿>„7¼gˆ³¿Þ“¿MîÒ>÷¥ß¾íLâ¿Ýží?*
dtype0
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
j
gradients/Relu6_grad/Relu6Grad	Relu6Gradgradients/grad_ys_0Relu6*
T0*
_class

loc:@Relu6
;
grad_0Identitygradients/Relu6_grad/Relu6Grad*
T0

initNoOp"ª