
d
in0Const*
dtype0*I
value@B>"0ç¢¾>=˜$¾«è?‰ì¿ñ
?<›>!d?þäè>oÒ_?°Ï¿}dö¿)µ>

AbsAbsin0*
T0

yIdentityAbs*
T0
c
dyConst*
dtype0*I
value@B>"07íå¿AmÀ¾Ùb2=|ð??­¦¿#Qf?hØü?‰®ÿ?Z¡¿^lH?\Nç>4eg?
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
E
gradients/Abs_grad/SignSignin0*
_class

loc:@Abs*
T0
l
gradients/Abs_grad/mulMulgradients/grad_ys_0gradients/Abs_grad/Sign*
_class

loc:@Abs*
T0
3
grad_0Identitygradients/Abs_grad/mul*
T0

initNoOp"ª