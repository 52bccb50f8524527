
d
in0Const*
dtype0*I
value@B>"0„‡íkY¤ì?ŞQŠ*tú¿uÏœÿ¿è€–ÇDÎä¿„xáLÃ?L$Q3İ7è?
"
IdentityIdentityin0*
T0
 
yIdentityIdentity*
T0

initNoOp"ª