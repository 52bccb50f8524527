
”
in0Const*
dtype0*y
valuepBn"`YÈ–4è?ðÓE=~Ì?¢Ývn
ã?Û”vcaæ?îH$‹m‚Ù?å
ôê-ç?Í±f<°Ê?`åi:/Ò?¦¥ãeØ?†—ZÒøÔ?eÚ’vôØÐ?%°·§r0Ó?
”
in1Const*
dtype0*y
valuepBn"`x)¹5®ü?ùvÍ'ó¿Œ^Œ×€1í?€3>áÀ"Å?²Ö©&Ñ?°¥™ÊYMÙ?iWø¿ëÜôò?Ü¾‚Jö”ç?ÀämýDæ¿Ú7=Ö´¢ý¿<¥Fƒè¿
'
SqrtGradSqrtGradin0in1*
T0
 
yIdentitySqrtGrad*
T0

initNoOp"ª