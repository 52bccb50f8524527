
d
in0Const*I
value@B>"0±.?~é|?X„â?ÇÇ–>‹AŞ?ûÖX?Î$?*8¼?¶?F7?ßÍ
?rş‚?*
dtype0

LogLogin0*
T0

yIdentityLog*
T0
c
dyConst*I
value@B>"0Çl¿­Æ¿ªA?(;¹¿ı—ğ?gèì¿„¥¿Ó‡Ñ?Kƒ¥¿³¿¶‹š¿oéó?*
dtype0
j
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y*&
 _has_manual_control_dependencies(
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