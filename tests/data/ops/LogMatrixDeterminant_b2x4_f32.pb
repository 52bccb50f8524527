
¼
in0Const*
dtype0* 
value–B“"€E-šÀÅù¹¾èá>^0~?Èå><¹@Úùb½àÜ
?¾¢Ç>¶èY=Ê†@;è¿1ÿ¾>ú½Øv¿‡ú@á†À1ÕA>ì{ğ½Á?g#z=¤¥@@#°6?ê³=èT¡¾6¿.5@5¿õS¿Àıø½›Å¿Z|‘@
:
LogMatrixDeterminantLogMatrixDeterminantin0*
T0
,
yIdentityLogMatrixDeterminant*
T0
0
y_1IdentityLogMatrixDeterminant:1*
T0

initNoOp"ª