
d
in0Const*I
value@B>"0√Õ¡?*êr?7<∂?ö+O?5?îB˘?õu?qgΩ?Zå?$O∞?èíÿ?7A[?*
dtype0
&

Reciprocal
Reciprocalin0*
T0
"
yIdentity
Reciprocal*
T0
c
dyConst*I
value@B>"0sä>√é?Wi¶øíÇ˛ø@÷>‡|¶ø…∂∫?≈Tk?È Í?&·æc≤…ø»Î?*
dtype0
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
É
(gradients/Reciprocal_grad/ReciprocalGradReciprocalGrad
Reciprocalgradients/grad_ys_0*
_class
loc:@Reciprocal*
T0
E
grad_0Identity(gradients/Reciprocal_grad/ReciprocalGrad*
T0

initNoOp"™