
d
in0Const*
dtype0*I
value@B>"0Ii,¿•Ô¿7=Ø¿=ÉÝ?Lx¿¾FÄ¿Ëœ¸¾ØÖå¿Sé¿(8ù=Hû?¹ìü>

ExpExpin0*
T0

yIdentityExp*
T0
c
dyConst*
dtype0*I
value@B>"0*Îk?Ä+Z¿îF‘¿<¯s>zj`¿ïc?O(‚¿ªEù¿)%X¿k/•>4³œ¿âå?
j
gradients/grad_ys_0Identitydy*
T0*&
 _has_manual_control_dependencies(*
_class

loc:@y
X
gradients/Exp_grad/mulMulgradients/grad_ys_0Exp*
T0*
_class

loc:@Exp
3
grad_0Identitygradients/Exp_grad/mul*
T0

initNoOp"ª