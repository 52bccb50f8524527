/*
 * devices.c -- device lists and device specifications
 * (placeholder: being written)
 */
#include "devices.h"
