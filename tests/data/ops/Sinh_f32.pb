
d
in0Const*
dtype0*I
value@B>"0¥ë¿z<D½*I{¾¿|9@XÀ{½À)?K	[?*ù¿}'[¿Hœğ¿ì`À

SinhSinhin0*
T0

yIdentitySinh*
T0
c
dyConst*
dtype0*I
value@B>"0ÿe½vzÆ?×¥>Teğ?7ug>E?Íé“>;™è¾„‚¿øÜË¾ƒè÷¾×Ş¿
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
T0*
_class

loc:@y
]
gradients/Sinh_grad/CoshCoshin0^gradients/grad_ys_0*
T0*
_class
	loc:@Sinh
o
gradients/Sinh_grad/mulMulgradients/grad_ys_0gradients/Sinh_grad/Cosh*
T0*
_class
	loc:@Sinh
4
grad_0Identitygradients/Sinh_grad/mul*
T0

initNoOp"ª