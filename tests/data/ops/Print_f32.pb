
L
in0Const*
dtype0*1
value(B&"‘¿1ö?Rk[?j¼œ¿Þ¦†?—÷|¿
n
PrintPrintin0in0*

U
2*
message	harness: *
T0*
first_nÿÿÿÿÿÿÿÿÿ*
	summarize

yIdentityPrint*
T0

initNoOp"ª