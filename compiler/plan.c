/*
 * plan.c -- execution plan
 * (placeholder: being written)
 */
#include "plan.h"
