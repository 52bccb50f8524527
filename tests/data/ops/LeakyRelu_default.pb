
\
in0Const*
dtype0*A
value8B6"(U	“>[&ö½äÏ=uz4¿ãÅ?Õ~¿“c¹?ßp
?àôI?chð¿
4
	LeakyRelu	LeakyReluin0*
T0*
alpha%ÍÌL>
!
yIdentity	LeakyRelu*
T0
[
dyConst*
dtype0*A
value8B6"(_q†?dÌ¿ðd¿Ùcñ¾£±¹?Á§¤¿{LU¿t«?8Ú–¾‰uÌ¿
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
ˆ
&gradients/LeakyRelu_grad/LeakyReluGradLeakyReluGradgradients/grad_ys_0in0*
T0*
alpha%ÍÌL>*
_class
loc:@LeakyRelu
C
grad_0Identity&gradients/LeakyRelu_grad/LeakyReluGrad*
T0

initNoOp"ª