
”
in0Const*
dtype0*y
valuepBn"`VUöMô@ÆØ’Jèn@®ÐÝFV@žØ^3™íö?PÌ1u®¹@°¼á;{š@ˆ¬ÛÅ9±@²ûŽ[@âi2Ã@@/'Óî­@ÆùÉÜË7@Fç-Øšü?

AcoshAcoshin0*
T0

yIdentityAcosh*
T0
“
dyConst*
dtype0*y
valuepBn"`ˆô-=£lç?ü”ã¦rö? —»`-ðÃ¿|SíìËåá¿öÄvNÿ÷¿ØpxtíÚ?|Óæ,%ó¿äÐ2f†é¿>ÈÚ¶hø?v]u§„Ký¿(¾ô0Õññ?€Œ]ÐÙëì?
j
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y*&
 _has_manual_control_dependencies(
a
gradients/Acosh_grad/SinhSinhAcosh^gradients/grad_ys_0*
T0*
_class

loc:@Acosh
z
gradients/Acosh_grad/truedivRealDivgradients/grad_ys_0gradients/Acosh_grad/Sinh*
T0*
_class

loc:@Acosh
9
grad_0Identitygradients/Acosh_grad/truediv*
T0

initNoOp"ª