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
        if (dgc_tf_gpu_kernel(d->name, &tfd, NULL, NULL) < 0 &&
            (!d->alias || dgc_tf_gpu_kernel(d->alias, &tfd, NULL, NULL) < 0))
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

/* ---- JSON and Markdown (issue 22) ---------------------------------------- */

static void json_str(dg_sbuf *b, const char *s)
{
    dg_sbuf_addf(b, "\"");
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            dg_sbuf_addf(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            dg_sbuf_addf(b, "\\u%04x", (unsigned)(unsigned char)*s);
        else
            dg_sbuf_addf(b, "%c", *s);
    }
    dg_sbuf_addf(b, "\"");
}

static void json_dtypes(dg_sbuf *b, uint32_t mask)
{
    dg_sbuf_addf(b, "[");
    int first = 1;
    for (int t = 0; t < DG_DTYPE_COUNT; t++)
        if (mask & (1u << t)) {
            dg_sbuf_addf(b, "%s\"%s\"", first ? "" : ", ",
                         dg_dtype_name((dg_dtype)t));
            first = 0;
        }
    dg_sbuf_addf(b, "]");
}

static const char *attr_type_name(dgc_attr_kind k)
{
    switch (k) {
    case DGC_A_INT: return "int";
    case DGC_A_FLOAT: return "float";
    case DGC_A_BOOL: return "bool";
    case DGC_A_STR: return "string";
    case DGC_A_INTS: return "ints";
    case DGC_A_SHAPE: return "shape";
    case DGC_A_DTYPE: return "dtype";
    case DGC_A_TENSOR: return "tensor";
    default: return "init";
    }
}

char *dgc_ops_render_json(const dg_kernel_set *cpu, const dg_kernel_set *gpu,
                          const uint8_t *grad_rule)
{
    dg_sbuf b;
    dg_sbuf_init(&b);
    dg_sbuf_addf(&b, "{\"ops\": [");
    for (int i = 0; i < dgc_n_ops; i++) {
        const dgc_op_def *d = &dgc_ops[i];
        uint32_t cm = cpu ? cpu->dtypes[i] : 0, gm = gpu ? gpu->dtypes[i] : 0;
        dg_sbuf_addf(&b, "%s\n  {\"name\": ", i ? "," : "");
        json_str(&b, d->name);
        dg_sbuf_addf(&b, ", \"alias\": ");
        if (d->alias)
            json_str(&b, d->alias);
        else
            dg_sbuf_addf(&b, "null");
        dg_sbuf_addf(&b, ", \"dtypes\": ");
        json_dtypes(&b, d->dtypes);
        dg_sbuf_addf(&b, ", \"cpu\": ");
        if (cm & DGC_KS_ROW)
            json_dtypes(&b, cm & d->dtypes ? cm & d->dtypes : d->dtypes);
        else
            dg_sbuf_addf(&b, "null");
        dg_sbuf_addf(&b, ", \"gpu\": ");
        if (gm & DGC_KS_ROW)
            json_dtypes(&b, gm & ((1u << DG_DTYPE_COUNT) - 1));
        else
            dg_sbuf_addf(&b, "null");
        if (grad_rule)
            dg_sbuf_addf(&b, ", \"grad_rule\": %s",
                         grad_rule[i] ? "true" : "false");
        dg_sbuf_addf(&b, ", \"min_inputs\": %d, \"max_inputs\": ", d->min_in);
        if (d->max_in == DGC_IN_ANY)
            dg_sbuf_addf(&b, "null");
        else
            dg_sbuf_addf(&b, "%d", d->max_in);
        dg_sbuf_addf(&b, ", \"attrs\": [");
        for (int a = 0; d->attrs && d->attrs[a].name; a++) {
            const dgc_attr_spec *s = &d->attrs[a];
            dg_sbuf_addf(&b, "%s{\"name\": ", a ? ", " : "");
            json_str(&b, s->name);
            dg_sbuf_addf(&b, ", \"type\": \"%s\", \"default\": ",
                         attr_type_name(s->type));
            if (s->dflt)
                json_str(&b, s->dflt);
            else
                dg_sbuf_addf(&b, "null");
            dg_sbuf_addf(&b, "}");
        }
        dg_sbuf_addf(&b, "], \"doc\": ");
        json_str(&b, d->doc);
        dg_sbuf_addf(&b, "}");
    }
    dg_sbuf_addf(&b, "\n]}\n");
    return dg_sbuf_take(&b);
}

char *dgc_ops_render_markdown(const dg_kernel_set *cpu,
                              const dg_kernel_set *gpu)
{
    dg_sbuf b;
    dg_sbuf_init(&b);
    dg_sbuf_addf(&b, "| op | dtypes | CPU | GPU (OpenCL) | what it does |\n"
                     "|---|---|---|---|---|\n");
    for (int i = 0; i < dgc_n_ops; i++) {
        const dgc_op_def *d = &dgc_ops[i];
        char dt[96], gpus[64], name[128];
        if (d->alias)
            snprintf(name, sizeof name, "`%s` (`%s`)", d->name, d->alias);
        else
            snprintf(name, sizeof name, "`%s`", d->name);
        dtypes_text(d->dtypes, dt, sizeof dt);
        gpu_text(d, gpu ? gpu->dtypes[i] : 0, gpus, sizeof gpus);
        dg_sbuf_addf(&b, "| %s | %s | %s | %s | ", name, dt,
                     cpu && (cpu->dtypes[i] & DGC_KS_ROW) ? "yes" : "-",
                     gpus);
        for (const char *p = d->doc ? d->doc : ""; *p; p++)
            dg_sbuf_addf(&b, *p == '|' ? "\\|" : "%c", *p);
        dg_sbuf_addf(&b, " |\n");
    }
    return dg_sbuf_take(&b);
}
