
d
in0Const*
dtype0*I
value@B>"0„‡íkY¤ì?ŞQŠ*tú¿uÏœÿ¿è€–ÇDÎä¿„xáLÃ?L$Q3İ7è?
A
PreventGradientPreventGradientin0*
messageno*
T0
'
yIdentityPreventGradient*
T0

initNoOp"ª