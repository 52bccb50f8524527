
d
in0Const*I
value@B>"0½ Ž¿‡Hs¾uÍá¿þV‚¿zº£¾ŽÀ=àà?¨í¾¼”«?Gè¿*(¼¿Ç¤#>*
dtype0

ExpExpin0*
T0

yIdentityExp*
T0
c
dyConst*I
value@B>"0Ã;‚?L®¿¡U¿P¢î?ß8>à¨Û½×»¿C:¼?
‘‡?03Ô¾®Ã§?Ç»?*
dtype0
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
_class

loc:@y*
T0
X
gradients/Exp_grad/mulMulgradients/grad_ys_0Exp*
T0*
_class

loc:@Exp
3
grad_0Identitygradients/Exp_grad/mul*
T0

initNoOp"ª