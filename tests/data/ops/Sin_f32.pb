
d
in0Const*
dtype0*I
value@B>"0Øñ¿Õÿ:>KIK¿rš¿XMÖ=ÉÑ?]ƒ¿(øñ¿M¯?\’…¼¾¦¡¿c?

SinSinin0*
T0

yIdentitySin*
T0
c
dyConst*
dtype0*I
value@B>"0Û€Ó¿ÄÞç¿N¾5«?
Ý>0R\?]?/¿›ÉH¿£v¢¿ÓÁ¡=¥¹¿ÍÐE?
j
gradients/grad_ys_0Identitydy*
T0*&
 _has_manual_control_dependencies(*
_class

loc:@y
Y
gradients/Sin_grad/CosCosin0^gradients/grad_ys_0*
T0*
_class

loc:@Sin
k
gradients/Sin_grad/mulMulgradients/grad_ys_0gradients/Sin_grad/Cos*
T0*
_class

loc:@Sin
3
grad_0Identitygradients/Sin_grad/mul*
T0

initNoOp"ª