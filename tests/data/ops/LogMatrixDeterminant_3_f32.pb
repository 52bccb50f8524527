
X
in0Const*
dtype0*=
value4B2"$ÿ|gÀ:CU>×Šh?9™¿Òed@ô?œø6¿
G=¼½ÀC@
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