/*
 * render.c -- placement output
 * (placeholder: being written)
 */
#include "program.h"
