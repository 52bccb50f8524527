/*
 * train_loop.c -- runtime
 * (placeholder: being written)
 */
#include "rt.h"
