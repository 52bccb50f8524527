
8
in0Const*
dtype0*
valueB*?6À
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