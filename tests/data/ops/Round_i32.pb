
D
in0Const*)
value B"÷ÿÿÿ÷ÿÿÿþÿÿÿøÿÿÿüÿÿÿ*
dtype0

yIdentityin0*
T0

initNoOp"ª