/*
 * infer.c -- shape inference functions (placeholder: being written)
 */
#include "infer.h"
#include <stdio.h>
