/*
 * ops_render.c -- `dgrun ops`: one line per op of the op table (ops.c):
 * name and alias, supported dtypes, the device types with kernels (SPEC
 * 4.7, from the kernel sets the runtime's backends give) and the op's doc
 * string.
 */
#include "ops.h"
#include "dg_alloc.h"
#include "dg_util.h"

#include <stdio.h>
#include <string.h>

static void dtypes_text(uint32_t mask, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int t = 0; t < DG_DTYPE_COUNT; t++)
        if (mask & (1u << t)) {
            if (buf[0])
                strncat(buf, ",", n - strlen(buf) - 1);
            strncat(buf, dg_dtype_name((dg_dtype)t), n - strlen(buf) - 1);
        }
    if (!buf[0])
        strncat(buf, "-", n - 1);
}

/* The GPU column: which of the op's dtypes have a GPU kernel. */
static void gpu_text(const dgc_op_def *d, uint32_t m, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!(m & DGC_KS_ROW)) {
        strncat(buf, "-", n - 1);
        return;
    }
    if (d->dtypes == 0) { /* NoOp */
        strncat(buf, "GPU", n - 1);
        return;
    }
    int f32 = (m >> DG_F32) & 1, f64 = (m >> DG_F64) & 1;
    int i32 = (m >> DG_I32) & 1, i64 = (m >> DG_I64) & 1;
    if (!f32 && !f64 && (i32 || i64)) { /* integer-only (RandomUniformInt) */
        snprintf(buf, n, "GPU(%s%s%s)", i32 ? "int32" : "",
                 i32 && i64 ? "," : "", i64 ? "int64" : "");
        return;
    }
    if (!f32 && !f64) {
        strncat(buf, "-", n - 1);
        return;
    }
    strncat(buf, "GPU(", n - 1);
    if (f32)
        strncat(buf, "float32", n - strlen(buf) - 1);
    if (f64)
        strncat(buf, f32 ? ",float64 if fp64" : "float64 if fp64",
                n - strlen(buf) - 1);
    strncat(buf, ")", n - strlen(buf) - 1);
}

char *dgc_ops_render(const dg_kernel_set *cpu, const dg_kernel_set *gpu)
{
    dg_sbuf b;
    dg_sbuf_init(&b);
    dg_sbuf_addf(&b, "%-40s %-36s %-8s %-28s %-33s %s\n", "OP", "DTYPES",
                 "CPU", "GPU", "TF GPU", "DESCRIPTION");
    for (int i = 0; i < dgc_n_ops; i++) {
        const dgc_op_def *d = &dgc_ops[i];
        char name[128], dt[96], gpus[64], cpus[16];
        if (d->alias)
            snprintf(name, sizeof name, "%s (alias %s)", d->name, d->alias);
        else
            snprintf(name, sizeof name, "%s", d->name);
        dtypes_text(d->dtypes, dt, sizeof dt);
        gpu_text(d, gpu ? gpu->dtypes[i] : 0, gpus, sizeof gpus);
        snprintf(cpus, sizeof cpus, "%s",
                 cpu && (cpu->dtypes[i] & DGC_KS_ROW) ? "CPU" : "-");
        const char *note = "";
        if (gpu && ((d->flags & DGC_OP_VARIABLE) ||
                    strcmp(d->name, "Const") == 0 ||
                    strcmp(d->name, "Assign") == 0))
            note = " [int32: CPU only]";
        /* TF's GPU kernels (issue 21): the dtypes, "any", "-" none, "n/a"
         * not a TF op */
        const char *tfd = NULL;
        if (dgc_tf_gpu_kernel(d->name, &tfd, NULL) < 0 &&
            (!d->alias || dgc_tf_gpu_kernel(d->alias, &tfd, NULL) < 0))
            tfd = "n/a";
        else if (!tfd[0])
            tfd = "-";
        else if (strcmp(tfd, "*") == 0)
            tfd = "any";
        dg_sbuf_addf(&b, "%-40s %-36s %-8s %-28s %-33s %s%s\n", name, dt, cpus,
                     gpus, tfd, d->doc ? d->doc : "", note);
    }
    return dg_sbuf_take(&b);
}
