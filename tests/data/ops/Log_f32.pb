
d
in0Const*I
value@B>"0ËlÛ?~É?ê¥Ù?”ã–?{5è?¿Áþ?Óƒ¾?O#Å>Ïœ?Hh?þä…>÷ïü>*
dtype0

LogLogin0*
T0

yIdentityLog*
T0
c
dyConst*I
value@B>"0`g:½Á¸¿Ïžb<­AÈ?ŠO¿™¿Ö²¿"¥>à:û¿[}G?þš=R™í¿*
dtype0
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
_class

loc:@y*
T0
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