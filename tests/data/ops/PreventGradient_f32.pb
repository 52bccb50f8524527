
L
in0Const*
dtype0*1
value(B&"‘¿1ö?Rk[?j¼œ¿Þ¦†?—÷|¿
A
PreventGradientPreventGradientin0*
messageno*
T0
'
yIdentityPreventGradient*
T0

initNoOp"ª