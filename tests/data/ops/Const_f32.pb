
L
in0Const*
dtype0*1
value(B&"‘¿1ö?Rk[?j¼œ¿Þ¦†?—÷|¿
"
IdentityIdentityin0*
T0
 
yIdentityIdentity*
T0

initNoOp"ª