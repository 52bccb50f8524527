
<
in0Const*
dtype0*!
valueB2Ì—VêÀ
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