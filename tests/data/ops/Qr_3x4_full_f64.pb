
”
in0Const*
dtype0*y
valuepBn"`Æom4›ƒ÷¿‚X’ªA÷¿žyRÉŠñ?êm#>ò¿pÀ„êè×í¿•ÑƒR7ñ?à7­GÀˆÿ?PŠ¸FQÇ¿>YxC,õ?ˆã]„¸Ôú¿Ð”³!VîÊ?Ø€Â56÷¿
+
QrQrin0*
T0*
full_matrices(

yIdentityQr*
T0

y_1IdentityQr:1*
T0

initNoOp"ª