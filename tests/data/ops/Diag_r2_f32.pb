
L
in0Const*
dtype0*1
value(B&"r§?OŸi¿ZØh?N­Ì¿:¼£|¤>

DiagDiagin0*
T0

yIdentityDiag*
T0
Ï
dyConst*
dtype0*´
valueªB§""}Ğ¿NZé¿‰˜¿m…?½-’?Œì€?b¬ ¾û"¨¿7Ê¼??élå?Ğ¿k?pşò¿5¶×?Çç‚¿ÊœÓ¾¸Aã=Ãâ>nß¿9¾a?…ª³?Í¿I¾œ‘?c¿ÚÀa?vEë¿Š¯§¿™¹ü?tŒÂ¿(è¿¶xº?tÃ¿DÖô?¨Üä?í/¼?E¿
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
_
gradients/Diag_grad/DiagPartDiagPartgradients/grad_ys_0*
T0*
_class
	loc:@Diag
9
grad_0Identitygradients/Diag_grad/DiagPart*
T0

initNoOp"ª