/*
 * cpu_backend.c -- the CPU backend's function table, and the rows of its
 * kernel registry that have no kernel.  The registry (dgr_cpu_kernel_rows,
 * one row per op id: the dtypes ("T") its kernel runs in and the kernel)
 * is generated from the DGR_KERNEL lines of this folder's sources.  Every
 * op has a CPU kernel for every dtype it supports (SPEC 4.7), so the rows
 * say DGR_KDT_OP; Variable, Placeholder and PlaceholderWithDefault are
 * rows without a kernel: the executor reads Variables and feeds (or a
 * PlaceholderWithDefault's input) itself.
 */
#include "cpu_backend.h"
#include "kernels_cpu.h"
#include "kernels_cpu_conv.h"
#include "kernels_cpu_dnnl.h"
#include "devices.h"
#include "cpu_gemm.h"

/* Ops the executor runs itself on this device (rows without a kernel):
 * Variables and feeds, control flow (runtime/exec/exec_frames.c),
 * TensorArrays and stacks (CPU-resident: only this backend has their
 * rows).  Every kernel registers itself next to its function
 * (DGR_KERNEL in kernels_cpu_*.c); tools/gen_registry.py writes the
 * table, dgr_cpu_kernel_rows (cpu_kernels_gen.c), at build time. */
DGR_KERNEL_EXEC(Variable);
DGR_KERNEL_EXEC(Placeholder);
DGR_KERNEL_EXEC(Enter);
DGR_KERNEL_EXEC(Exit);
DGR_KERNEL_EXEC(Switch);
DGR_KERNEL_EXEC(Merge);
DGR_KERNEL_EXEC(NextIteration);
DGR_KERNEL_EXEC(LoopCond);
DGR_KERNEL_EXEC(ControlTrigger);
DGR_KERNEL_EXEC(TensorArrayV3);
DGR_KERNEL_EXEC(TensorArrayReadV3);
DGR_KERNEL_EXEC(TensorArrayWriteV3);
DGR_KERNEL_EXEC(TensorArrayScatterV3);
DGR_KERNEL_EXEC(TensorArrayGatherV3);
DGR_KERNEL_EXEC(TensorArraySizeV3);
DGR_KERNEL_EXEC(TensorArrayCloseV3);
DGR_KERNEL_EXEC(TensorArrayGradV3);
DGR_KERNEL_EXEC(StackV2);
DGR_KERNEL_EXEC(StackPushV2);
DGR_KERNEL_EXEC(StackPopV2);
DGR_KERNEL_EXEC(StackCloseV2);
DGR_KERNEL_EXEC(PlaceholderWithDefault);

static dg_status cpu_discover(const dg_options *o, dg_device_list *l,
                              dg_error *err)
{
    (void)o;
    dg_device_info d;
    dgc_device_cpu_info(&d, NULL); /* the registry sets the kernel set */
    if (dgc_devices_append(l, &d))
        return dg_err_nomem(err, "device list");
    return DG_OK;
}

char dgr_cpu_keeps;

static dg_status cpu_open(dgr_device *d, const dg_options *o, dg_error *err)
{
    (void)err;
    d->impl = &dgr_cpu_keeps;
    d->be = &dgr_backend_cpu;
    /* BLAS calls are single-threaded blocks on our intra-op pool (one
     * thread budget); the libraries' own threads would spin against it.
     * oneDNN's one-time set-up pays only over many steps. */
    dgr_cpu_gemm_init(o->train_mode || o->repeat > 1);
    return DG_OK;
}

static void cpu_close(dgr_device *d)
{
    /* values kept for the session's later runs (issue 23) */
    dgr_dnnl_close(d);
    dgr_cpu_const_close(d);
}

static dg_status cpu_sync(dgr_device *d, dg_error *err)
{
    (void)d;
    (void)err;
    return DG_OK;
}

const dgr_backend dgr_backend_cpu = {
    .name = "cpu",
    .type = DG_DEV_CPU,
    .host_memory = 1,
    .kernels = dgr_cpu_kernel_rows,
    .discover = cpu_discover,
    .open = cpu_open,
    .close = cpu_close,
    .buffer_get = dgr_cpu_buffer_get,
    .buffer_put = dgr_cpu_buffer_put,
    .read = dgr_cpu_read,
    .write = dgr_cpu_write,
    .sync = cpu_sync,
    .streams = NULL,
};
