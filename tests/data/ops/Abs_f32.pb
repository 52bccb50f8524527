
d
in0Const*I
value@B>"0Ý6ò?9¯Ý?¨×¿í¿ë£;·¼?tÇ¿ª¾§?âÁV?Øa¿n0 ¿ƒ¯L¿*
dtype0

AbsAbsin0*
T0

yIdentityAbs*
T0
c
dyConst*I
value@B>"0ÂJç?lH¿=Ðÿ¾ž±ì?Þûï?w¶?IÑ>?Ú¹¿¦N½,Ëï?•°Š¿J~>*
dtype0
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
E
gradients/Abs_grad/SignSignin0*
T0*
_class

loc:@Abs
l
gradients/Abs_grad/mulMulgradients/grad_ys_0gradients/Abs_grad/Sign*
T0*
_class

loc:@Abs
3
grad_0Identitygradients/Abs_grad/mul*
T0

initNoOp"ª