
”
in0Const*
dtype0*y
valuepBn"`8CV²'gö¿È12ô}¬ö?&üaÚC÷?şó®›:Yğ?ªËjö>ºş¿Â›ÀÛù?àû‰Ê¼°Ğ¿Áïg¿ş?~‘)`¬dş¿¸–Åë2oì?–{¡Éoş?ró`k%ù¿

NegNegin0*
T0

yIdentityNeg*
T0
“
dyConst*y
valuepBn"`ğ®¢#õ¿‡¼çSğ¿hL{áNæÕ?ÄÑöÙ”Ìê?D÷²hKdò¿†“¯ŒHù¿¸EE—Ö?O‰ğ¸gğ¿_äIí?h7‡{|Ô¿4âDyü~ã¿œ|ûÍïó?*
dtype0
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
S
gradients/Neg_grad/NegNeggradients/grad_ys_0*
T0*
_class

loc:@Neg
3
grad_0Identitygradients/Neg_grad/Neg*
T0

initNoOp"ª