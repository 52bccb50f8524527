
d
in0Const*
dtype0*I
value@B>"0‘¿¿á‹Õ¿)Ì2¿Ríπ¿´/1¿g8¿>O?[ö@_íª¿5/¥øx.Å<ûøé¿

Relu6Relu6in0*
T0

yIdentityRelu6*
T0
c
dyConst*
dtype0*I
value@B>"0‡ù?÷\*?‘2¢ø±Öøˆ5æªöÃ¯?!†sø≈üäøZÉΩfiGΩcªÂ?+ÁÊ>
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

initNoOp"™