
d
in0Const*I
value@B>"0û‡È@F˜ ÀMıÏÀÙöÀtİÀÿãÀXUR¾¨cÀ#N@O—Àbİ–@1HE¿*
dtype0

Relu6Relu6in0*
T0

yIdentityRelu6*
T0
c
dyConst*I
value@B>"0êÍè?Ç›²¿œæ˜?ãº-?Á\’?ôaË¾~Hß¾-)Ó¿â¿‰à?#K%?¦7z¿*
dtype0
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