
d
in0Const*I
value@B>"0¹øµ?ìÇÜ?}Å½?1n?rŠ¸?£î?%½õ?´©ò?û÷Ö>âÓ¿>?3ò?›šM?*
dtype0

LogLogin0*
T0

yIdentityLog*
T0
c
dyConst*I
value@B>"0£6ã?³ã?| ú?vYû¿
ÔH¿Ó[J¿_¿ú€ì¿’+¿Oé?p„?uT?*
dtype0
j
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0*&
 _has_manual_control_dependencies(
g
gradients/Log_grad/Reciprocal
Reciprocalin0^gradients/grad_ys_0*
_class

loc:@Log*
T0
r
gradients/Log_grad/mulMulgradients/grad_ys_0gradients/Log_grad/Reciprocal*
_class

loc:@Log*
T0
3
grad_0Identitygradients/Log_grad/mul*
T0

initNoOp"ª