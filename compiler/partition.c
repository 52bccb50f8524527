/*
 * partition.c -- transfers
 * (placeholder: being written)
 */
#include "partition.h"
