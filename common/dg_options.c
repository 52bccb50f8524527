/*
 * dg_options.c -- the defaults of every command-line knob (SPEC section 1).
 */
#include "dgrun.h"

#include <string.h>

void dg_options_init(dg_options *o)
{
    memset(o, 0, sizeof *o);
    o->allow_soft_placement = -1;
    o->colocate = -1;
    o->steps = -1;
    o->repeat = 1;
    o->opencl_devices = "gpu";
    o->virtual_gpus = 1;
    o->gpu_memory_fraction = 1.0;
    o->allow_growth = 1;
    o->assume_gpus = -1;
}
