
d
in0Const*
dtype0*I
value@B>"0”™?K†—@–D¥@¼7…@ÑŒ@}Ğ@@¤@Aøƒ@”o@«ôB@;rÀ?İİL@
@
in1Const*
dtype0*%
valueB"Ò²+?‚£ô@+\¨?B‹@@
#
IgammaIgammain0in1*
T0

yIdentityIgamma*
T0

initNoOp"ª