
˜
in0Const*}
valuetBr"`¢c>?­¥Ã¿9gƒ¿î½?¡k‡=Ö²2¿–Z1?˜Î“?+À?No[¿õÂ¿ö¾`¯?@…é¿
¿;¡;5£ä½8Qò>÷m]>Ùß¿þdØ¿|!¾r’¬>|&ð¿*
dtype0
X
in1Const*=
value4B2" ’³(>ºŠ´¿ˆ9ø>€}Å?53;?¡|m?ê³?Ge¾*
dtype0
U
einsum/EinsumEinsumin0in1*
T0*
N* 
equation...ij,...jk->...ik
%
yIdentityeinsum/Einsum*
T0

initNoOp"ª