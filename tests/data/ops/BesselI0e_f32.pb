
p
in0Const*
dtype0*U
valueLBJ"<r²ÁxÎÀ[åŸÀÕ:ÁÉ{>ÁÈm'AF6®ÀİÃÁ¤"Ápİ9A¬†@ì(¾?:çüÀQ¾óäÙ@
/
bessel_i0e/BesselI0e	BesselI0ein0*
T0
,
yIdentitybessel_i0e/BesselI0e*
T0
o
dyConst*
dtype0*U
valueLBJ"<ed?õ•?xk¸>ùTŸ?Ho‰¿4£ğ¿ÌØ¿œV«¿¿h?î~‰¿X¿ğğÇ¿/‰?Rû¶¿vuï?
j
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y*&
 _has_manual_control_dependencies(
’
8gradients/bessel_i0e/BesselI0e_grad/bessel_i1e/BesselI1e	BesselI1ein0^gradients/grad_ys_0*
T0*'
_class
loc:@bessel_i0e/BesselI0e
}
(gradients/bessel_i0e/BesselI0e_grad/SignSignin0^gradients/grad_ys_0*
T0*'
_class
loc:@bessel_i0e/BesselI0e
 
'gradients/bessel_i0e/BesselI0e_grad/mulMul(gradients/bessel_i0e/BesselI0e_grad/Signbessel_i0e/BesselI0e*
T0*'
_class
loc:@bessel_i0e/BesselI0e
Ã
'gradients/bessel_i0e/BesselI0e_grad/subSub8gradients/bessel_i0e/BesselI0e_grad/bessel_i1e/BesselI1e'gradients/bessel_i0e/BesselI0e_grad/mul*
T0*'
_class
loc:@bessel_i0e/BesselI0e
 
)gradients/bessel_i0e/BesselI0e_grad/mul_1Mulgradients/grad_ys_0'gradients/bessel_i0e/BesselI0e_grad/sub*
T0*'
_class
loc:@bessel_i0e/BesselI0e
F
grad_0Identity)gradients/bessel_i0e/BesselI0e_grad/mul_1*
T0

initNoOp"ª