
˜
in0Const*
dtype0*}
valuetBr"`Ag“¿£<f?uÈÐ¾&¿q?ÕÃ?;žÙ?½±é>Dí¿,ÓÄ¿©Lƒ?‘ƒE¾ß_Ö>®7º?	ÿÇ:BG¢?Ø·?Ô›)¾ÅŠ¿›(¬?*=*Rò¿Ö°¿¹>Ñ?Ðòí¿
<
ReverseV2/axisConst*
dtype0*
valueB:
@
	ReverseV2	ReverseV2in0ReverseV2/axis*
T0*

Tidx0
!
yIdentity	ReverseV2*
T0
—
dyConst*
dtype0*}
valuetBr"`\	‘¿†8=)s¾k\¿®E1>ÞÙ‡?½ñÇ¿É–?,ª?M­?‘¢€¿ï?Ú¿ÛÚs¿fðÏ>a+G?ûyt¿4‹‘>¶a¿Ò¾¨k—>4aÒ?EM·?×[q?¹A+¿
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
‡
"gradients/ReverseV2_grad/ReverseV2	ReverseV2gradients/grad_ys_0ReverseV2/axis*
T0*

Tidx0*
_class
loc:@ReverseV2
?
grad_0Identity"gradients/ReverseV2_grad/ReverseV2*
T0

initNoOp"ª