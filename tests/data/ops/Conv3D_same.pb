
Ä
in0Const*
dtype0*¨
valueB›"€8ˆÆ¿,P¿ÓmÁ?"á„¿øÖæ¿šG¿?³¿•w$?İ«£?×‹Õ=°KŒ¿~¡Æ¿`‹¿—¢à>?|¿#Zõ?"ó?—«V¿z­ş?@8ù?å6û?b@ã¿74á¿¯¯-?>ş˜¿:ô?$=Ğ¿3¿­?¨?² ?ÄI¿’¶Ë¿ã+í?²¯Æ¿Ëá¯?*şÔ?jîı¿ì5?	ı?}óL?L‘¿ìE¿ïW÷¿ù¥à?è;w?6Ÿ„¿(ÿÔ?G¦Ü¿K×?Iá?•Z‹=Áó6½xÆÎ¿@q¶?ıƒÎ?¼‡b¾â¿'½&ÔÖ¿™+Š¿æáb?×d³¿|¸¿¶/Ë?S«^¾”Ç¼?ËEË>•[æ?rëf¿ál¿Fü[¿YbÈ?iHÜ¼\rÔ?úş¿é= ?~Y¿¯µQ?QÏ¿$=?&~
¿–„¿O¼²¿¨×ó>‹0ÿ?d.ä¾BıÁ¿?	>I´'?1(Å¿õ™r¿Ôı¿e l?–¿:ü>^Z?
ä
in1Const*
dtype0*È
value¾B»" µ²«?†Ú½?#œê?q|/?ˆ€æ¿@ÚÙ??„T¿ÈUá?”é7¾Û<?›×¿ÑLÕ¿“gè½Zó?Iºå?åL?gàa¿˜N¥½\W“½5M?f?ñ]`?“*ğ>«5®?ªü]?¼"ğ?£1e=xP>!:k?FaO¿ß¿œ¡w¿pö?9¿y¼x¿~NÚ½â\%?””Ï? ¬Í?Ò¯?«9y¿p^4¿Í!=ze¾¾L·½üª¹¿÷ÈÚ?Äàï?¹Ò£¾«h‚?‹j¾lrá=’ìk¾
j¾T%í¿
—ñ¾g°Í¿m¿6Zü=îèÃ¿H)ã¿{|¿ù—/¿u[3>…$©¿KğÖ?ktÑ¿¢£?OÂ«¿TÅK=Áø¿H*j>
|
Conv3DConv3Din0in1*
data_formatNDHWC*
T0*
paddingSAME*
	dilations	
*
strides	


yIdentityConv3D*
T0
ã
dyConst*
dtype0*È
value¾B»" š„?bI´?	4€?~ı¿º
¢?îxÿ>µŠé¿şÙ¾­FÑ¿—H\¿«È³¾D9ÿ?º¬È?ŠşÈ?x0r>Ë¾¦¿é‘=>‘Ã¯¿A=°¿ö‹€>U°¿qá¾¢Ç¿†q)?ã³ã?/$¥¿Çš¿¾>›ä’>&‹½Ô¿ºk²¾ĞpX¿­uŸ¿V´¿ægk¿·Ç·?"}Ğ¿NZé¿‰˜¿m…?½-’?Œì€?b¬ ¾û"¨¿7Ê¼??élå?Ğ¿k?pşò¿5¶×?Çç‚¿ÊœÓ¾¸Aã=Ãâ>nß¿9¾a?…ª³?Í¿I¾œ‘?c¿ÚÀa?vEë¿Š¯§¿™¹ü?tŒÂ¿(è¿¶xº?tÃ¿DÖô?¨Üä?í/¼?
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
m
gradients/Conv3D_grad/ShapeNShapeNin0in1*
out_type0*
T0*
N*
_class
loc:@Conv3D
‡
+gradients/Conv3D_grad/Conv3DBackpropInputV2Conv3DBackpropInputV2gradients/Conv3D_grad/ShapeNin1gradients/grad_ys_0*
strides	
*
data_formatNDHWC*
T0*
Tshape0*
_class
loc:@Conv3D*
	dilations	
*
paddingSAME
ı
,gradients/Conv3D_grad/Conv3DBackpropFilterV2Conv3DBackpropFilterV2in0gradients/Conv3D_grad/ShapeN:1gradients/grad_ys_0*
data_formatNDHWC*
T0*
paddingSAME*
_class
loc:@Conv3D*
	dilations	
*
strides	

H
grad_0Identity+gradients/Conv3D_grad/Conv3DBackpropInputV2*
T0
I
grad_1Identity,gradients/Conv3D_grad/Conv3DBackpropFilterV2*
T0

initNoOp"ª