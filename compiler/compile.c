/*
 * compile.c -- dg_compile
 * (placeholder: being written)
 */
#include "program.h"
