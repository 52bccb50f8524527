
d
in0Const*
dtype0*I
value@B>"0qž?—ó¢=ö=ñ?úÿ¤?­•Ô¿S,¦½ŽÁ?›Q/¿Ÿ´Ë¿»Ä‘?™Ž¼¾v}O?

SinSinin0*
T0

yIdentitySin*
T0
c
dyConst*
dtype0*I
value@B>"0GBÆ?t§?o.ò?‹Úð>	w?má=3P:? d¡¿Â¬>6¤t=rµ?ë·«¿
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
_class

loc:@y*
T0
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