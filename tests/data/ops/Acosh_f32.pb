
d
in0Const*
dtype0*I
value@B>"0$n@Ì÷’@øª:@É?i@¨@6¸æ?[Œ@ÏÒ“@€@+“u@Aí@

AcoshAcoshin0*
T0

yIdentityAcosh*
T0
c
dyConst*
dtype0*I
value@B>"0õ•?xk¸>ùTŸ?Ho‰¿4£ð¿ÌØ¿œV«¿¿h?î~‰¿X¿ððÇ¿/‰?
j
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y*&
 _has_manual_control_dependencies(
a
gradients/Acosh_grad/SinhSinhAcosh^gradients/grad_ys_0*
T0*
_class

loc:@Acosh
z
gradients/Acosh_grad/truedivRealDivgradients/grad_ys_0gradients/Acosh_grad/Sinh*
T0*
_class

loc:@Acosh
9
grad_0Identitygradients/Acosh_grad/truediv*
T0

initNoOp"ª