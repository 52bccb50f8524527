
d
in0Const*I
value@B>"0ì/ö¼YƒÚ?½Ó¸?îÚ?^‘¾$-f¿Z•g¾­·¿¸¿tãŽ>?sŸ¿Ò¨¿*
dtype0

SinSinin0*
T0

yIdentitySin*
T0
c
dyConst*I
value@B>"0MÇ¾Öo?ÃÙ”>±„¿@©¤¿gŠ:¿#Õ?ÞhP¾äár¿‹2ÕºŸRø?c/?*
dtype0
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
_class

loc:@y*
T0
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