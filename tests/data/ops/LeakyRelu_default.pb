
\
in0Const*A
value8B6"(U	“>[&ö½äÏ=uz4¿ãÅ?Õ~¿“c¹?ßp
?àôI?chð¿*
dtype0
4
	LeakyRelu	LeakyReluin0*
T0*
alpha%ÍÌL>
!
yIdentity	LeakyRelu*
T0
[
dyConst*A
value8B6"(]²¿"=f¿p¤½ˆ
Ü¿ÿµá>þ$‡?Cnæ?"¼”?‡•„¿üi§¿*
dtype0
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
ˆ
&gradients/LeakyRelu_grad/LeakyReluGradLeakyReluGradgradients/grad_ys_0in0*
_class
loc:@LeakyRelu*
T0*
alpha%ÍÌL>
C
grad_0Identity&gradients/LeakyRelu_grad/LeakyReluGrad*
T0

initNoOp"ª