
d
in0Const*
dtype0*I
value@B>"0õ[e¿g÷¼?w¾”?Ž}Ù?nˆ?Š´?onq¿%M?=\ˆ¿6Æ9>~ï0¿fóª=
?
SvdSvdin0*
T0*

compute_uv(*
full_matrices(

AbsAbsSvd:1*
T0

Abs_1AbsSvd:2*
T0

yIdentitySvd*
T0

y_1IdentityAbs*
T0

y_2IdentityAbs_1*
T0

initNoOp"ª