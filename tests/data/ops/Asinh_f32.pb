
d
in0Const*
dtype0*I
value@B>"0“¤ý¾iüi@fäÀ‚¢}@1a2@ìÑX@7½ðZÀFz@þùq@¨“gÀBòH@

AsinhAsinhin0*
T0

yIdentityAsinh*
T0
c
dyConst*
dtype0*I
value@B>"0dEÖ>=&Î?!†1?ˆŠt¿Ûn¿U ¿ãˆ¿69ú¿‹€i»¼%ê¿BÙ‰=ed?
j
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y*&
 _has_manual_control_dependencies(
a
gradients/Asinh_grad/CoshCoshAsinh^gradients/grad_ys_0*
T0*
_class

loc:@Asinh
z
gradients/Asinh_grad/truedivRealDivgradients/grad_ys_0gradients/Asinh_grad/Cosh*
T0*
_class

loc:@Asinh
9
grad_0Identitygradients/Asinh_grad/truediv*
T0

initNoOp"ª