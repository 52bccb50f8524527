
d
in0Const*I
value@B>"0¿&_.> ýõ»¬¶œ?¨©2¾þâ¿3_Ž=ÃrŠ?}ô>j¢¥>Øž¢¿:•k¿*
dtype0

TanhTanhin0*
T0

yIdentityTanh*
T0
c
dyConst*I
value@B>"04¥•¿Û!¿ò•D>T¸É?[Bø¿–C$¾¶ÊÃ¿©„¿Mq©¿=Àî¿Oˆµ>™Äl?*
dtype0
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
_class

loc:@y*
T0
e
gradients/Tanh_grad/TanhGradTanhGradTanhgradients/grad_ys_0*
T0*
_class
	loc:@Tanh
9
grad_0Identitygradients/Tanh_grad/TanhGrad*
T0

initNoOp"ª