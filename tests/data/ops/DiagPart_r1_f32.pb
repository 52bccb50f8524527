
X
in0Const*
dtype0*=
value4B2"$ÊÁ¿f3Í¾ô®§¾)q†?Óc¯=Ü‚¶¾)_>¶ñj¿Œˆ¾
"
DiagPartDiagPartin0*
T0
 
yIdentityDiagPart*
T0
;
dyConst*
dtype0*!
valueB"V´¿ægk¿·Ç·?
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
_
gradients/DiagPart_grad/DiagDiaggradients/grad_ys_0*
T0*
_class
loc:@DiagPart
9
grad_0Identitygradients/DiagPart_grad/Diag*
T0

initNoOp"ª