
d
in0Const*
dtype0*I
value@B>"0'£Î?ðï?m	°¿ÂS¸¿»,ç¿¨¿?ª6è¾Á?ÁS¯<µ÷¾¿‡9?øú¿

ExpExpin0*
T0

yIdentityExp*
T0
c
dyConst*
dtype0*I
value@B>"0Ûã\¾ž‘¾ÛF÷¿ÿÈ?hÉ¿¿<¢¿)¡¾ôÔ¿wNš¿™Ø©>Q‰?Rƒ¿
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
_class

loc:@y*
T0
X
gradients/Exp_grad/mulMulgradients/grad_ys_0Exp*
_class

loc:@Exp*
T0
3
grad_0Identitygradients/Exp_grad/mul*
T0

initNoOp"ª