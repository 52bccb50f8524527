
”
in0Const*
dtype0*y
valuepBn"` Í‡cÎ?p¼8Øè? ÷`CÙ»á¿âÐk#4ü¿v¿¦ÄÙù?ÀÓyŒª£¿b¤·'X=ð¿HJÍFB°Û¿hºÝ…	u×¿°Ô„ÓÔ°ó?€¯~²Wó?V³g9·–ü¿
?
SvdSvdin0*
T0*

compute_uv(*
full_matrices(

AbsAbsSvd:1*
T0

Abs_1AbsSvd:2*
T0

yIdentitySvd*
T0

y_1IdentityAbs*
T0

y_2IdentityAbs_1*
T0

initNoOp"ª