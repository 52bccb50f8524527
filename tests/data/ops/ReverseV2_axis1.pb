
˜
in0Const*}
valuetBr"`Ag“¿£<f?uÈÐ¾&¿q?ÕÃ?;žÙ?½±é>Dí¿,ÓÄ¿©Lƒ?‘ƒE¾ß_Ö>®7º?	ÿÇ:BG¢?Ø·?Ô›)¾ÅŠ¿›(¬?*=*Rò¿Ö°¿¹>Ñ?Ðòí¿*
dtype0
<
ReverseV2/axisConst*
valueB:*
dtype0
@
	ReverseV2	ReverseV2in0ReverseV2/axis*

Tidx0*
T0
!
yIdentity	ReverseV2*
T0
—
dyConst*}
valuetBr"`ªÎ¶?O×õ?Rž¿þ“?/j¾Pƒð¿Ëaƒ?ª³?”Êâ?VgÜ¿•¤æ?€ìÍ?Ì¿k\¢¾ÐÅŠ?à—¿gL?#ç?[Uâ¿B³„¿5fÂ¿â›Í¿×"¿ß¶„?*
dtype0
B
gradients/grad_ys_0Identitydy*
_class

loc:@y*
T0
‡
"gradients/ReverseV2_grad/ReverseV2	ReverseV2gradients/grad_ys_0ReverseV2/axis*

Tidx0*
_class
loc:@ReverseV2*
T0
?
grad_0Identity"gradients/ReverseV2_grad/ReverseV2*
T0

initNoOp"ª