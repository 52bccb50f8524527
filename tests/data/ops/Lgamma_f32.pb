
p
in0Const*
dtype0*U
valueLBJ"<ä%@¹õ›?V'?g¨?5!@ä(@lï“@ìXN@âQ%@ LT@(wâ?¦-@ÍğŸ@€lã?7g@

LgammaLgammain0*
T0

yIdentityLgamma*
T0
o
dyConst*
dtype0*U
valueLBJ"</$¥¿Çš¿¾>›ä’>&‹½Ô¿ºk²¾ĞpX¿­uŸ¿V´¿ægk¿·Ç·?"}Ğ¿NZé¿‰˜¿
j
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y*&
 _has_manual_control_dependencies(
g
gradients/Lgamma_grad/DigammaDigammain0^gradients/grad_ys_0*
T0*
_class
loc:@Lgamma
x
gradients/Lgamma_grad/mulMulgradients/grad_ys_0gradients/Lgamma_grad/Digamma*
T0*
_class
loc:@Lgamma
6
grad_0Identitygradients/Lgamma_grad/mul*
T0

initNoOp"ª