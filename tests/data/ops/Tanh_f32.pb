
d
in0Const*I
value@B>"0şª‚?lc„¿Û®³¿ÑÑ&>·8­='Ç?7ÌÎ¿ÓN¿(¿O§¹4ã¿É9º?*
dtype0

TanhTanhin0*
T0

yIdentityTanh*
T0
c
dyConst*I
value@B>"0ËW¿=«@ê?ïp‹?èŞ¿OË.>·—Ú?|^?â½å?Éğ[>ƒ_?‚Ââ?ôú¿*
dtype0
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
_class

loc:@y*
T0
e
gradients/Tanh_grad/TanhGradTanhGradTanhgradients/grad_ys_0*
_class
	loc:@Tanh*
T0
9
grad_0Identitygradients/Tanh_grad/TanhGrad*
T0

initNoOp"ª