/*
 * registry.h -- the backends this build has (the CPU backend always, the
 * OpenCL backend unless built with -Dopencl=disabled) and what is derived
 * from their kernel registries: the kernel sets that device lists carry to
 * placement and `dgrun ops`, and kernel lookup for the executor.  The
 * public dg_devices_discover / dg_devices_assume / dg_ops_render live here.
 */
#ifndef DGR_REGISTRY_H
#define DGR_REGISTRY_H

#include "backend.h"

/* Backends in order (the CPU backend first). */
int dgr_backend_count(void);
const dgr_backend *dgr_backend_at(int i);
/* The kernel set made from b's registry (static; never NULL). */
const dg_kernel_set *dgr_backend_kernels(const dgr_backend *b);
/* The backend that runs a device of a device list: the one whose kernel
 * set the device carries, else the first of its type; NULL if none. */
const dgr_backend *dgr_backend_of(const dg_device_info *info);
/* The kernel of op on b, NULL if b has none (or the executor runs it). */
dgr_kernel_fn dgr_kernel_find(const dgr_backend *b, int op);

#endif
