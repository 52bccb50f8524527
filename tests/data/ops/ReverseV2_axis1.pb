
˜
in0Const*}
valuetBr"`Ag“¿£<f?uÈÐ¾&¿q?ÕÃ?;žÙ?½±é>Dí¿,ÓÄ¿©Lƒ?‘ƒE¾ß_Ö>®7º?	ÿÇ:BG¢?Ø·?Ô›)¾ÅŠ¿›(¬?*=*Rò¿Ö°¿¹>Ñ?Ðòí¿*
dtype0
<
ReverseV2/axisConst*
valueB:*
dtype0
@
	ReverseV2	ReverseV2in0ReverseV2/axis*
T0*

Tidx0
!
yIdentity	ReverseV2*
T0
—
dyConst*}
valuetBr"`N	ì>âÈN½&¹¿±Ì’?¿Ûü?~ÙŸ?C¼Ì¿ü_¸¿ªÊ=>Å…>RNT? ß¾¶™³¿ûp´?'£Î?ðï?m	°¿ÂS¸¿»,ç¿¨¿?ª6è¾Á?ÁS¯<µ÷¾¿*
dtype0
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
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