
d
in0Const*
dtype0*I
value@B>"0;²¾~Çg?mŒ¿m
õ¾g
¾Bj¹>ûÙö¿¸xÎ=Þòö?Óbã?EÍO>x>¿
+
QrQrin0*
T0*
full_matrices(

yIdentityQr*
T0

y_1IdentityQr:1*
T0

initNoOp"ª