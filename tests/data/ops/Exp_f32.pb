
d
in0Const*I
value@B>"0'£Î?ðï?m	°¿ÂS¸¿»,ç¿¨¿?ª6è¾Á?ÁS¯<µ÷¾¿‡9?øú¿*
dtype0

ExpExpin0*
T0

yIdentityExp*
T0
c
dyConst*I
value@B>"0ìŠ¾”X=L®Ï¿,ÿ½?á“œ?´Á>O±t¿<ç>õŽ¿ù±³¼ÏEY?X×ý>*
dtype0
j
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0*&
 _has_manual_control_dependencies(
X
gradients/Exp_grad/mulMulgradients/grad_ys_0Exp*
_class

loc:@Exp*
T0
3
grad_0Identitygradients/Exp_grad/mul*
T0

initNoOp"ª