/*
 * cl_program.c -- building the embedded OpenCL sources (the .cl files)
 * per context and dtype, with an on-disk cache of program binaries, and the
 * per-context table of cl_kernel objects.
 *
 * Cache: $XDG_CACHE_HOME/dgrun (default ~/.cache/dgrun), one file per
 * (device name, driver version, source, build options) hash.  A file is a
 * 24-byte header ("DGCLBIN1", payload length, FNV-1a 64 checksum) and the
 * binary.  Writers write a temporary file and rename it, so racing
 * processes never see half a file; a corrupt or rejected entry is rebuilt
 * from source and rewritten, and the temporaries of killed writers of that
 * entry are removed.
 */
#include "cl_internal.h"
#include "dg_alloc.h"
#include "dg_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct dgr_cl_source { const char *name; const char *text; } dgr_cl_source;
extern const dgr_cl_source dgr_cl_sources[];
extern const int dgr_cl_n_sources;

void dgr_cl_cache_dir(char *buf, size_t n)
{
    const char *x = getenv("XDG_CACHE_HOME");
    if (x && *x) {
        snprintf(buf, n, "%s/dgrun", x);
        return;
    }
    const char *h = getenv("HOME");
    snprintf(buf, n, "%s/.cache/dgrun", h && *h ? h : "/tmp");
}

static void mkdirs(const char *path)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0755);
            *p = '/';
        }
    mkdir(tmp, 0755);
}

/* Read a cache entry; returns malloc'd payload or NULL (absent/corrupt). */
static unsigned char *cache_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char hdr[24];
    unsigned char *buf = NULL;
    if (fread(hdr, 1, 24, f) != 24 || memcmp(hdr, "DGCLBIN1", 8) != 0)
        goto bad;
    uint64_t n, sum;
    memcpy(&n, hdr + 8, 8);
    memcpy(&sum, hdr + 16, 8);
    if (n == 0 || n > ((uint64_t)1 << 31))
        goto bad;
    buf = dg_malloc((size_t)n);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
        goto bad;
    if (fgetc(f) != EOF || dg_fnv1a(DG_FNV1A_INIT, buf, (size_t)n) != sum)
        goto bad;
    fclose(f);
    *len = (size_t)n;
    return buf;
bad:
    dg_free(buf);
    fclose(f);
    return NULL;
}

/* Write atomically; failures are ignored (the cache is an optimisation). */
static void cache_write(const char *dir, const char *path,
                        const unsigned char *bin, size_t n)
{
    mkdirs(dir);
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%p", path, (long)getpid(),
             (const void *)bin);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return;
    uint64_t len = n, sum = dg_fnv1a(DG_FNV1A_INIT, bin, n);
    int ok = fwrite("DGCLBIN1", 1, 8, f) == 8 && fwrite(&len, 8, 1, f) == 1 &&
             fwrite(&sum, 8, 1, f) == 1 && fwrite(bin, 1, n, f) == n;
    if (fclose(f) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
    else /* and the temporaries of killed writers of this entry */
        dg_remove_dead_temps(dir, strrchr(path, '/') + 1);
}

static dg_status build_fail(dgr_cl_ctx *c, cl_program p, const char *file,
                            cl_int e, dg_error *err)
{
    char log[4096] = "";
    size_t sz = 0;
    if (clGetProgramBuildInfo(p, c->dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1,
                              log, &sz) != CL_SUCCESS)
        log[0] = '\0';
    log[sizeof log - 1] = '\0';
    /* first lines, joined */
    char first[600];
    size_t o = 0;
    int lines = 0;
    for (const char *s = log; *s && o + 2 < sizeof first && lines < 4; s++) {
        if (*s == '\n') {
            lines++;
            if (o && first[o - 1] != ' ')
                first[o++] = ' ';
            if (lines < 4 && o + 3 < sizeof first) {
                first[o++] = '|';
                first[o++] = ' ';
            }
            continue;
        }
        first[o++] = *s;
    }
    first[o] = '\0';
    return dg_err(err, DG_E_RUNTIME,
                  "building OpenCL kernel file '%s.cl' failed: %s (%d): %s",
                  file, dgr_cl_errname(e), (int)e,
                  first[0] ? first : "(no build log)");
}

dg_status dgr_cl_build(dgr_cl_ctx *c, const char *file, const char *text,
                       const char *options, cl_program *out, int *from_cache,
                       dg_error *err)
{
    *out = NULL;
    if (from_cache)
        *from_cache = 0;
    uint64_t h = DG_FNV1A_INIT;
    h = dg_fnv1a(h, c->dev_name, strlen(c->dev_name) + 1);
    h = dg_fnv1a(h, c->driver, strlen(c->driver) + 1);
    h = dg_fnv1a(h, text, strlen(text) + 1);
    h = dg_fnv1a(h, options, strlen(options) + 1);
    char dir[900], path[1000];
    dgr_cl_cache_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s-%016llx.clbin", dir, file,
             (unsigned long long)h);
    cl_int e;
    size_t blen = 0;
    unsigned char *bin = cache_read(path, &blen);
    if (bin) {
        const unsigned char *bp = bin;
        cl_int bst = CL_SUCCESS;
        cl_program p = clCreateProgramWithBinary(c->ctx, 1, &c->dev, &blen,
                                                 &bp, &bst, &e);
        dg_free(bin);
        if (p && bst == CL_SUCCESS &&
            clBuildProgram(p, 1, &c->dev, options, NULL, NULL) == CL_SUCCESS) {
            *out = p;
            if (from_cache)
                *from_cache = 1;
            return DG_OK;
        }
        if (p)
            clReleaseProgram(p); /* stale or corrupt: rebuild below */
    }
    const char *srcs[1] = {text};
    cl_program p = clCreateProgramWithSource(c->ctx, 1, srcs, NULL, &e);
    if (!p)
        return dgr_cl_fail(err, NULL, "clCreateProgramWithSource", e);
    dgr_cl_build_notice(c, 1, file);
    e = clBuildProgram(p, 1, &c->dev, options, NULL, NULL);
    dgr_cl_build_notice(c, 0, file);
    if (e != CL_SUCCESS) {
        dg_status st = build_fail(c, p, file, e, err);
        clReleaseProgram(p);
        return st;
    }
    size_t bsz = 0;
    if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bsz, &bsz, NULL) ==
            CL_SUCCESS && bsz > 0) {
        unsigned char *b = dg_malloc(bsz);
        if (b) {
            unsigned char *bp = b;
            if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bp, &bp,
                                 NULL) == CL_SUCCESS)
                cache_write(dir, path, b, bsz);
            dg_free(b);
        }
    }
    *out = p;
    return DG_OK;
}

void dgr_cl_build_notice(dgr_cl_ctx *c, int begin, const char *what)
{
    if (!c->on_build)
        return;
    char dir[900];
    dgr_cl_cache_dir(dir, sizeof dir);
    dg_build_event ev = {begin, c->dev_name, what, dir};
    c->on_build(&ev, c->on_build_user);
}

static int find_source(const char *name)
{
    for (int i = 0; i < dgr_cl_n_sources && i < DGR_CL_MAX_SOURCES; i++)
        if (strcmp(dgr_cl_sources[i].name, name) == 0)
            return i;
    return -1;
}

static uint32_t khash(int s, int di, const char *name)
{
    uint64_t h = dg_fnv1a(DG_FNV1A_INIT, name, strlen(name));
    h ^= (uint64_t)(s * 2 + di) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h ^ (h >> 29));
}

dg_status dgr_cl_get_kernel_locked(dgr_cl_ctx *c, const char *src,
                                   dg_dtype dt, const char *name,
                                   cl_kernel *out, dg_error *err)
{
    int s = find_source(src);
    if (s < 0)
        return dg_err(err, DG_E_RUNTIME, "no OpenCL kernel file '%s.cl'", src);
    int di = dt == DG_F64 ? 1 : 0;
    if (di && !c->fp64)
        return dg_err(err, DG_E_RUNTIME,
                      "OpenCL device '%s' does not support float64",
                      c->dev_name);
    uint32_t h = khash(s, di, name) & (DGR_CL_KTAB - 1);
    for (uint32_t i = 0; i < DGR_CL_KTAB; i++) {
        uint32_t slot = (h + i) & (DGR_CL_KTAB - 1);
        int ix = c->ktab[slot] - 1;
        if (ix < 0)
            break;
        dgr_cl_kentry *k = &c->kernels[ix];
        if (k->src == s && k->dt == di && strcmp(k->name, name) == 0) {
            *out = k->k;
            return DG_OK;
        }
    }
    if (c->n_kernels >= DGR_CL_KTAB / 2)
        return dg_err(err, DG_E_RUNTIME, "too many OpenCL kernels (%d)",
                      c->n_kernels);
    if (!c->progs[s][di]) {
        const char *opts = di ? "-cl-std=CL1.2 -DT=double -DDG_F64=1"
                              : "-cl-std=CL1.2 -DT=float -DDG_F64=0";
        dg_status st = dgr_cl_build(c, dgr_cl_sources[s].name,
                                    dgr_cl_sources[s].text, opts,
                                    &c->progs[s][di], NULL, err);
        if (st != DG_OK)
            return st;
    }
    cl_int e;
    cl_kernel k = clCreateKernel(c->progs[s][di], name, &e);
    if (!k)
        return dg_err(err, DG_E_RUNTIME,
                      "clCreateKernel '%s' in '%s.cl' failed: %s (%d)", name,
                      src, dgr_cl_errname(e), (int)e);
    if (c->n_kernels == c->cap_kernels) {
        int nc = c->cap_kernels ? c->cap_kernels * 2 : 32;
        dgr_cl_kentry *nk = dg_realloc(c->kernels, sizeof *nk * (size_t)nc);
        if (!nk) {
            clReleaseKernel(k);
            return dg_err_nomem(err, "OpenCL kernel table");
        }
        c->kernels = nk;
        c->cap_kernels = nc;
    }
    char *nm = dg_strdup(name); /* callers may pass a stack buffer */
    if (!nm) {
        clReleaseKernel(k);
        return dg_err_nomem(err, "OpenCL kernel table");
    }
    c->kernels[c->n_kernels++] = (dgr_cl_kentry){s, di, nm, k};
    uint32_t slot = h;
    while (c->ktab[slot])
        slot = (slot + 1) & (DGR_CL_KTAB - 1);
    c->ktab[slot] = c->n_kernels;
    *out = k;
    return DG_OK;
}

dg_status dgr_cl_get_kernel(dgr_cl_ctx *c, const char *src, dg_dtype dt,
                            const char *name, cl_kernel *out, dg_error *err)
{
    pthread_mutex_lock(&c->lock);
    dg_status st = dgr_cl_get_kernel_locked(c, src, dt, name, out, err);
    pthread_mutex_unlock(&c->lock);
    return st;
}
