/*
 * kernels_cpu.c -- runtime
 * (placeholder: being written)
 */
#include "rt.h"
