
¼
in0Const*
dtype0* 
value–B“"€1B´÷îÀ2Gdzù
é¿áA+éÑ?ð'+¹³YÙ¿°nQ<KÄ¿ÎxŸTŒÇ
@ÀhØTOæ?8‚ñ6íç?àuyÿXç?@ 48Ÿ¿pÑP¡Ø/@˜ÈºüZ{å?,šŒwYÓ¿%Ð„Ë¿p^}â#°À?êÄDBŒ”@4¿CàV
Àà¦‘Òd'Ò¿¬
-dÓ9Ü?$¨ž’¶ê?P¼S€ÎTÚ¿Ë4šd™†@®4ùMï¿¤ø3À‘Fä¿@~¶'P’?ì’Plì?ˆÄŽÂŸ@r?ÿ{ºî?ÒLŽr·Và¿{ušÖæÌ?î—JíÁ	ë?¹èW`ˆÄ@
:
LogMatrixDeterminantLogMatrixDeterminantin0*
T0
,
yIdentityLogMatrixDeterminant*
T0
0
y_1IdentityLogMatrixDeterminant:1*
T0

initNoOp"ª