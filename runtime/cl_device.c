/*
 * cl_device.c -- runtime
 * (placeholder: being written)
 */
#include "rt.h"
