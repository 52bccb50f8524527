
d
in0Const*
dtype0*I
value@B>"07_C¿KÖÑ>®¿½È>šý>ÿêÃ?ô­Å?à”:?;³þ?Y¿¶>TM¿r¿
 
SigmoidSigmoidin0*
T0

yIdentitySigmoid*
T0
c
dyConst*
dtype0*I
value@B>"0iÊT¾9`é¿…gç¿½ó¬?9Š¿Ö`¿¡T¥?\À>Ò?œ—ƒ?ÞI[¾:l¿
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
_class

loc:@y*
T0
t
"gradients/Sigmoid_grad/SigmoidGradSigmoidGradSigmoidgradients/grad_ys_0*
_class
loc:@Sigmoid*
T0
?
grad_0Identity"gradients/Sigmoid_grad/SigmoidGrad*
T0

initNoOp"ª