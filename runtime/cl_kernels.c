/*
 * cl_kernels.c -- runtime
 * (placeholder: being written)
 */
#include "rt.h"
