
d
in0Const*
dtype0*I
value@B>"0UAˆ¿€Á
¿$åÇ?€ô ?®8ú¿%ò?=ıG¿f¾¿¨LN½è›f?z?y¼

NegNegin0*
T0

yIdentityNeg*
T0
c
dyConst*
dtype0*I
value@B>"0ŸĞ^¿Gë5?´øÎ?ûW3¿¸ÎÉ?şË­?u”é¿#ot?€ŠB¾õ¥ø?„™%¿¦Ük?
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