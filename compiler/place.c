/*
 * place.c -- placement pass
 * (placeholder: being written)
 */
#include "program.h"
