
d
in0Const*I
value@B>"0-Oˆ¿yÃœ¿žq†¿“²¶¿“Ô&¿ÛK¨?Žçµ¿Fã>Þ¿FD¿öaÊ?÷Mû¿*
dtype0

ExpExpin0*
T0

yIdentityExp*
T0
c
dyConst*I
value@B>"0+¼$¿·-ó?\%¿>aÛ?º.Ô¿úˆµ¿âãí>w…S?IŸä¿éA>)Ï!¾cc?*
dtype0
j
gradients/grad_ys_0Identitydy*&
 _has_manual_control_dependencies(*
_class

loc:@y*
T0
X
gradients/Exp_grad/mulMulgradients/grad_ys_0Exp*
_class

loc:@Exp*
T0
3
grad_0Identitygradients/Exp_grad/mul*
T0

initNoOp"ª