
L
in0Const*
dtype0*1
value(B&"‘¿1ö?Rk[?j¼œ¿Þ¦†?—÷|¿
`
PlaceholderWithDefaultPlaceholderWithDefaultin0*
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
.
yIdentityPlaceholderWithDefault*
T0

initNoOp"ª