
d
in0Const*I
value@B>"0Õ[¼>SOˆ>øU‚¿rNÙ¿tX¬?_&>/˜Ú¿É¸?Ÿª¿
¤°¿._ã?Þ¨¥¿*
dtype0

NegNegin0*
T0

yIdentityNeg*
T0
c
dyConst*I
value@B>"0W’—?!·?.©À?“ð?Hâ¯¿ß–¥?UÌ‘¼ô®½"Åv¿—Y?N˜ž½>š¼*
dtype0
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
S
gradients/Neg_grad/NegNeggradients/grad_ys_0*
_class

loc:@Neg*
T0
3
grad_0Identitygradients/Neg_grad/Neg*
T0

initNoOp"ª