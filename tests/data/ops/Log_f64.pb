
”
in0Const*
dtype0*y
valuepBn"`Æó%€áQþ?p@ÍJ›úÛ?Î€°,WŸÞ?¥†~Ûñ?kn0Mþúò?Ž+m/6ð?ÚÙµžóÁà?_¨šMì?Fu«³¿ä?]JTÝ?dy›Å¾Ý?ãç+_nŸã?

LogLogin0*
T0

yIdentityLog*
T0
“
dyConst*
dtype0*y
valuepBn"`~ì¸BFð¿â£N-zâ?È‹Ü»Ù?`­Nþ×¿(K—)÷¿†ƒó2Oû?Ü5æÌ_úð?Ô5s…Lò¿,]ÔmÞŸô?À4 ÈÕ¿ž©h®8³ÿ¿>k<&Ù¿
j
gradients/grad_ys_0Identitydy*
T0*&
 _has_manual_control_dependencies(*
_class

loc:@y
g
gradients/Log_grad/Reciprocal
Reciprocalin0^gradients/grad_ys_0*
T0*
_class

loc:@Log
r
gradients/Log_grad/mulMulgradients/grad_ys_0gradients/Log_grad/Reciprocal*
T0*
_class

loc:@Log
3
grad_0Identitygradients/Log_grad/mul*
T0

initNoOp"ª