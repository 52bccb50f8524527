
\
in0Const*
dtype0*A
value8B6"(U	“>[&ö½äÏ=uz4¿ãÅ?Õ~¿“c¹?ßp
?àôI?chð¿
4
	LeakyRelu	LeakyReluin0*
alpha%ÍÌL>*
T0
!
yIdentity	LeakyRelu*
T0
[
dyConst*
dtype0*A
value8B6"(™¹ü?tŒÂ¿(è¿¶xº?tÃ¿DÖô?¨Üä?í/¼?E¿^Ca?
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
ˆ
&gradients/LeakyRelu_grad/LeakyReluGradLeakyReluGradgradients/grad_ys_0in0*
alpha%ÍÌL>*
_class
loc:@LeakyRelu*
T0
C
grad_0Identity&gradients/LeakyRelu_grad/LeakyReluGrad*
T0

initNoOp"ª