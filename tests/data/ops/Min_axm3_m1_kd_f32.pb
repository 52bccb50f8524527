
ò
in0Const*
dtype0*}
valuetBr"`ÇÕª?O¯Ω?–π?„‰?+Mù?¡\?Éπå?V∑?L>≤?']P?√y#?’(4?G°u?œ·±?4∫ä?°Mê?<ﬂ}?≈2?gN%?bé?8ä™?ÿ”2?$˜z?ßW∞?
J
Min/reduction_indicesConst*
dtype0*
valueB"˝ˇˇˇˇˇˇˇ
L
MinMinin0Min/reduction_indices*

Tidx0*
T0*
	keep_dims(

yIdentityMin*
T0

initNoOp"™