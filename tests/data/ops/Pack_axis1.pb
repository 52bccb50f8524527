
L
in0Const*
dtype0*1
value(B&"£ˆ¼ğñ¢¿N¶¿Vî£>µ(*¿î7ë?
L
in1Const*
dtype0*1
value(B&"z`&?ºy…¿Š,–¿«^¿"ø¾ç¬?
5
stackPackin0in1*
N*

axis*
T0

yIdentitystack*
T0
g
dyConst*
dtype0*M
valueDBB"0`¾N¤v?#	­?ì¿)9&?_k‹?¿¿üÒ½†'¾ÿP÷?¾ »¿gù½¼
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
u
gradients/stack_grad/unstackUnpackgradients/grad_ys_0*
T0*	
num*
_class

loc:@stack*

axis
9
grad_0Identitygradients/stack_grad/unstack*
T0
;
grad_1Identitygradients/stack_grad/unstack:1*
T0

initNoOp"ª