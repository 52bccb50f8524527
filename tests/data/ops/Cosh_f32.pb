
d
in0Const*
dtype0*I
value@B>"01‹>ù‹¨¾q>¿D ô?á?ñ¿År¥>ª@zÎŞ¿$À?	ÛL?ÉÆ<?ÿ¿

CoshCoshin0*
T0

yIdentityCosh*
T0
c
dyConst*
dtype0*I
value@B>"0I\¶>‡a.¿ÈGA?ÎÔ¬¿«“¶?Öã?¼¨?dB>»Óø>W˜½½¥†²?Ø‘?
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
T0*
_class

loc:@y
]
gradients/Cosh_grad/SinhSinhin0^gradients/grad_ys_0*
T0*
_class
	loc:@Cosh
o
gradients/Cosh_grad/mulMulgradients/grad_ys_0gradients/Cosh_grad/Sinh*
T0*
_class
	loc:@Cosh
4
grad_0Identitygradients/Cosh_grad/mul*
T0

initNoOp"ª