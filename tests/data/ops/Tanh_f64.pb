
”
in0Const*y
valuepBn"`f5bìöøö?*IEL¤ú¿ZãÆÈI+ı¿öpV"Ñó¿¼„@ ­ğ?F®˜·Eò?tGò{‘ğ?°}\CŒÄ¿P«c_õ¿€¨@ÚÆC™¿»éÇÁñ?zˆY)­ü?*
dtype0

TanhTanhin0*
T0

yIdentityTanh*
T0
“
dyConst*y
valuepBn"` "İ
ğı¿,8$iÕ~î¿ä ‰XUÔõ?0GKÜ.šã?,ßRJ¦Úâ¿l@“ Ùé?Ô±U·ôNû¿àIpÇ‘²?ô gÑĞÿì¿(k=®=ó?°‹¾Âé?,¾¹İ²˜ì?*
dtype0
j
gradients/grad_ys_0Identitydy*
T0*&
 _has_manual_control_dependencies(*
_class

loc:@y
e
gradients/Tanh_grad/TanhGradTanhGradTanhgradients/grad_ys_0*
T0*
_class
	loc:@Tanh
9
grad_0Identitygradients/Tanh_grad/TanhGrad*
T0

initNoOp"ª