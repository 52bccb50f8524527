
d
in0Const*I
value@B>"0ÿ¢°?î¸?0> ¿Ë<é?xKî¿Wô¿írâ¾ÎªŸ?Éð?yÌÅ¿ê!¿`ö7?*
dtype0

SinSinin0*
T0

yIdentitySin*
T0
c
dyConst*I
value@B>"05dÜ?wh¿™p?Î7á?·ì¹¿¶ž¶¿§õ¿°0ÿ¿>=¿×Wô¿ÿZk?o7ö¿*
dtype0
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
_class

loc:@y*
T0
Y
gradients/Sin_grad/CosCosin0^gradients/grad_ys_0*
_class

loc:@Sin*
T0
k
gradients/Sin_grad/mulMulgradients/grad_ys_0gradients/Sin_grad/Cos*
_class

loc:@Sin*
T0
3
grad_0Identitygradients/Sin_grad/mul*
T0

initNoOp"ª