
€
in0Const*
dtype0*e
value\BZ"Hé?aO¾ÑU9?¸¿oê>j€X¿y]«?À=â¿{¡ş?„dµ?y	Á¿lˆ?ÒŞ­¿hó¿xÉ»¾¦¼;£?%Ã?
+
QrQrin0*
T0*
full_matrices(

yIdentityQr*
T0

y_1IdentityQr:1*
T0

initNoOp"ª