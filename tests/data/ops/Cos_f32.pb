
d
in0Const*
dtype0*I
value@B>"0ˆé¿¯W¿¸/Å?t¯?Í–t¿w?žèø=Ø¼Ò?Æ&¾?|ù‹¿>sò¾_æ3¾

CosCosin0*
T0

yIdentityCos*
T0
c
dyConst*
dtype0*I
value@B>"0DE¯?óâ
=—?Éƒ˜¿!Ž>o‹¾>¡>ÃØ–?ø"i?Å'¿	F³?ü''?
j
gradients/grad_ys_0Identitydy*
T0*&
 _has_manual_control_dependencies(*
_class

loc:@y
S
gradients/Cos_grad/NegNeggradients/grad_ys_0*
T0*
_class

loc:@Cos
Y
gradients/Cos_grad/SinSinin0^gradients/grad_ys_0*
T0*
_class

loc:@Cos
n
gradients/Cos_grad/mulMulgradients/Cos_grad/Neggradients/Cos_grad/Sin*
T0*
_class

loc:@Cos
3
grad_0Identitygradients/Cos_grad/mul*
T0

initNoOp"ª