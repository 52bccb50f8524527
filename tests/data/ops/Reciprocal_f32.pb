
d
in0Const*
dtype0*I
value@B>"0ÃÍÁ?*r?7<¶?š+O?5?”Bù?›u?qg½?ZŒ?$O°?’Ø?7A[?
&

Reciprocal
Reciprocalin0*
T0
"
yIdentity
Reciprocal*
T0
c
dyConst*
dtype0*I
value@B>"0Í;¿Û--?cÄ¿]}£¿kæO?Ù+™?Í^«¿Bzé¿8ÅÕ¿0J¿@Î^¾Îæ9¿
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
ƒ
(gradients/Reciprocal_grad/ReciprocalGradReciprocalGrad
Reciprocalgradients/grad_ys_0*
_class
loc:@Reciprocal*
T0
E
grad_0Identity(gradients/Reciprocal_grad/ReciprocalGrad*
T0

initNoOp"ª