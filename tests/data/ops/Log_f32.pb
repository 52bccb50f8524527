
d
in0Const*
dtype0*I
value@B>"0->F«Ç?ìé>òd=?¯+Ã>×gÉ>à‚>?É(‡>Ş>I?ıXÄ?,G[?å#Æ>

LogLogin0*
T0

yIdentityLog*
T0
c
dyConst*
dtype0*I
value@B>"0´à½¿¼ãó¿¹_?ÃÙ¿¿½¾§-í?£ 
¾5:H?5§¿óâş?.°$¾ˆÓ5¿
j
gradients/grad_ys_0Identitydy*
T0*&
 _has_manual_control_dependencies(*
_class

loc:@y
g
gradients/Log_grad/Reciprocal
Reciprocalin0^gradients/grad_ys_0*
T0*
_class

loc:@Log
r
gradients/Log_grad/mulMulgradients/grad_ys_0gradients/Log_grad/Reciprocal*
T0*
_class

loc:@Log
3
grad_0Identitygradients/Log_grad/mul*
T0

initNoOp"ª