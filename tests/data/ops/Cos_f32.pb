
d
in0Const*
dtype0*I
value@B>"05Ü/?#›V?1,‚¿ 4È¿2–»>Ëº½ÔAs?À¦O?ôÓô>ÉxÑ¾¿³¾/ëc¿

CosCosin0*
T0

yIdentityCos*
T0
c
dyConst*
dtype0*I
value@B>"0˜…á¿‰¼Ï?£ˆ>+Tã?Òf?Õ•>´ã=h¡?"Œ•?å´ ¿Ï€Õ?t^ü?
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
_class

loc:@y*
T0
S
gradients/Cos_grad/NegNeggradients/grad_ys_0*
_class

loc:@Cos*
T0
Y
gradients/Cos_grad/SinSinin0^gradients/grad_ys_0*
_class

loc:@Cos*
T0
n
gradients/Cos_grad/mulMulgradients/Cos_grad/Neggradients/Cos_grad/Sin*
_class

loc:@Cos*
T0
3
grad_0Identitygradients/Cos_grad/mul*
T0

initNoOp"ª