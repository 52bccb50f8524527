
d
in0Const*
dtype0*I
value@B>"0„‡íkY¤ì?ŞQŠ*tú¿uÏœÿ¿è€–ÇDÎä¿„xáLÃ?L$Q3İ7è?
n
PrintPrintin0in0*

U
2*
message	harness: *
T0*
first_nÿÿÿÿÿÿÿÿÿ*
	summarize

yIdentityPrint*
T0

initNoOp"ª