
D
in0Const*
dtype0*)
value B"÷ÿÿÿ÷ÿÿÿþÿÿÿøÿÿÿüÿÿÿ

yIdentityin0*
T0

initNoOp"ª