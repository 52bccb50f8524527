
d
in0Const*
dtype0*I
value@B>"0„‡íkY¤ì?ŞQŠ*tú¿uÏœÿ¿è€–ÇDÎä¿„xáLÃ?L$Q3İ7è?
`
PlaceholderWithDefaultPlaceholderWithDefaultin0*
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
.
yIdentityPlaceholderWithDefault*
T0

initNoOp"ª