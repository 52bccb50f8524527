
d
in0Const*
dtype0*I
value@B>"0~Œ˜@žÙk@RJ[?`)ð>îÃ?Í€~>/´8@;©:@´Û@oÃ?qÈA@Š¼@
@
in1Const*
dtype0*%
valueB"Å|
?¸w‚>Wæ:@2 ö@
%
IgammacIgammacin0in1*
T0

yIdentityIgammac*
T0

initNoOp"ª