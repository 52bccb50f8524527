
L
in0Const*
dtype0*1
value(B&"ÖÝ-?ó¼¾Ó[Ö>mZÌ¿!ÆÍ¾rþµ?
<
in1Const*
dtype0*!
valueB"Ô•@•’@Æò@

DivDivin0in1*
T0

yIdentityDiv*
T0

initNoOp"ª