/*
 * threadpool.c -- runtime
 * (placeholder: being written)
 */
#include "rt.h"
