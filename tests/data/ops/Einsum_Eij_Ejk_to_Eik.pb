
˜
in0Const*
dtype0*}
valuetBr"`¢c>?­¥Ã¿9gƒ¿î½?¡k‡=Ö²2¿–Z1?˜Î“?+À?No[¿õÂ¿ö¾`¯?@…é¿
¿;¡;5£ä½8Qò>÷m]>Ùß¿þdØ¿|!¾r’¬>|&ð¿
X
in1Const*
dtype0*=
value4B2" ’³(>ºŠ´¿ˆ9ø>€}Å?53;?¡|m?ê³?Ge¾
U
einsum/EinsumEinsumin0in1* 
equation...ij,...jk->...ik*
T0*
N
%
yIdentityeinsum/Einsum*
T0

initNoOp"ª