
7
xPlaceholder*
dtype0*
shape:ÿÿÿÿÿÿÿÿÿ

SinSinx*
T0

CosCosx*
T0

mulMulSinCos*
T0

SquareSquarex*
T0
 
yAddV2mulSquare*
T0"ª