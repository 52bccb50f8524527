
€
in0Const*
dtype0*e
value\BZ"HâuM><%W>|.?>»Sn¾žÓñ¿ÿg£?P8‚?Š_ç?–Ç•?¬¸¾]¯p¿$KÔ¿v¸?³ ¾º¦¿Þ ?á€?‘âŒ?
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