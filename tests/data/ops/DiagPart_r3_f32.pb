
„
in0Const*
dtype0*i
value`B^"@¡Ö5? ±>˜˜¿¿ h¶¾Î1U¿Æø¿búý¿=ß?]Hh¿|Z²¿µÚØ¿ëÑ÷?3?å‹}>&š¨¿f½
"
DiagPartDiagPartin0*
T0
 
yIdentityDiagPart*
T0
G
dyConst*
dtype0*-
value$B""X¿ððÇ¿/‰?Rû¶¿
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