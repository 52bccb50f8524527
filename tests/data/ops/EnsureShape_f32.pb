
˜
in0Const*
dtype0*}
valuetBr"`¤Xá¿Ì"Ó?$y>lÜ§¿„¥û¼™&ä=eXë¿H†}¿ü|?V¨O?ªÉª?Oš?W_•?RİØ¿qã¿f–¿é•‡?L
?>£¿l—?GÈ>(¿¹ı?Ç}¿
J
EnsureShapeEnsureShapein0*
T0* 
shape:ÿÿÿÿÿÿÿÿÿ
#
yIdentityEnsureShape*
T0
—
dyConst*
dtype0*}
valuetBr"`/$¥¿Çš¿¾>›ä’>&‹½Ô¿ºk²¾ĞpX¿­uŸ¿V´¿ægk¿·Ç·?"}Ğ¿NZé¿‰˜¿m…?½-’?Œì€?b¬ ¾û"¨¿7Ê¼??élå?Ğ¿k?
B
gradients/grad_ys_0Identitydy*
T0*
_class

loc:@y
0
grad_0Identitygradients/grad_ys_0*
T0

initNoOp"ª