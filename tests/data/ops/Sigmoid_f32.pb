
d
in0Const*I
value@B>"0iI'?*áî?j<V?d—¿›nÍ?ÄH? “4>I”Ž¿Ž<‡¿!vì>·+ß?€4¿*
dtype0
 
SigmoidSigmoidin0*
T0

yIdentitySigmoid*
T0
c
dyConst*I
value@B>"0yÃ¿" ‚¿3¤#¿ 0l>8¤Ô> ¢A¿‘Û?¢Õ•?­ðâ½^É…¿0s“?¨÷ò>*
dtype0
j
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y*&
 _has_manual_control_dependencies(
t
"gradients/Sigmoid_grad/SigmoidGradSigmoidGradSigmoidgradients/grad_ys_0*
T0*
_class
loc:@Sigmoid
?
grad_0Identity"gradients/Sigmoid_grad/SigmoidGrad*
T0

initNoOp"ª