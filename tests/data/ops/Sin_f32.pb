
d
in0Const*I
value@B>"0qž?—ó¢=ö=ñ?úÿ¤?­•Ô¿S,¦½ŽÁ?›Q/¿Ÿ´Ë¿»Ä‘?™Ž¼¾v}O?*
dtype0

SinSinin0*
T0

yIdentitySin*
T0
c
dyConst*I
value@B>"0&a‘?)å¿…±[¿±ÔÀ?Œ5÷¾
—z¿eÊ?7½£?TÞ¿2ãÞ>¢Ùž?ª/Ô¿*
dtype0
j
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0*&
 _has_manual_control_dependencies(
Y
gradients/Sin_grad/CosCosin0^gradients/grad_ys_0*
_class

loc:@Sin*
T0
k
gradients/Sin_grad/mulMulgradients/grad_ys_0gradients/Sin_grad/Cos*
_class

loc:@Sin*
T0
3
grad_0Identitygradients/Sin_grad/mul*
T0

initNoOp"ª