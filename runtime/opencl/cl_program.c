/*
 * cl_program.c -- building the embedded OpenCL sources (the .cl files)
 * per context and dtype, with an on-disk cache of program binaries, and the
 * per-context table of cl_kernel objects.
 *
 * Cache: $XDG_CACHE_HOME/dgrun (default ~/.cache/dgrun), one file per
 * (platform name and version, device name and version, driver version,
 * source, build options) hash.  A file is a
 * 24-byte header ("DGCLBIN1", payload length, FNV-1a 64 checksum) and the
 * binary.  Writers write a temporary file and rename it, so racing
 * processes never see half a file; a corrupt or rejected entry is rebuilt
 * from source and rewritten, and the temporaries of killed writers of that
 * entry are removed.
 *
 * What the implementation prints while it builds (PoCL's clang writes its
 * warnings to fd 2) is captured with the build log (dgr_cl_capture_*) and
 * handed to the build notice's end event; a failed build puts its first
 * lines in the error.
 */
#include "cl_internal.h"
#include "dg_alloc.h"
#include "dg_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* ---- the device compiler's output (issue 19) ---------------------------- */

static pthread_mutex_t capture_mu = PTHREAD_MUTEX_INITIALIZER;
#define CAPTURE_MAX (64u << 10)

void dgr_cl_capture_begin(dgr_cl_capture *cap)
{
    pthread_mutex_lock(&capture_mu);
    cap->saved = cap->fd = -1;
    fflush(stderr);
    int fd = -1;
#ifdef MFD_CLOEXEC
    fd = memfd_create("dgrun-opencl-build", MFD_CLOEXEC);
#endif
    if (fd < 0) {
        FILE *t = tmpfile(); /* unlinked already */
        if (t) {
            fd = dup(fileno(t));
            fclose(t);
        }
    }
    if (fd < 0)
        return;
    int saved = fcntl(2, F_DUPFD_CLOEXEC, 3);
    if (saved < 0 || dup2(fd, 2) < 0) {
        if (saved >= 0)
            close(saved);
        close(fd);
        return;
    }
    cap->saved = saved;
    cap->fd = fd;
}

char *dgr_cl_capture_end(dgr_cl_capture *cap)
{
    char *out = NULL;
    if (cap->saved >= 0) {
        fflush(stderr);
        dup2(cap->saved, 2);
        close(cap->saved);
        off_t n = lseek(cap->fd, 0, SEEK_END);
        if (n > 0) {
            size_t len = (size_t)n < CAPTURE_MAX ? (size_t)n : CAPTURE_MAX;
            out = dg_malloc(len + 1);
            ssize_t got = out ? pread(cap->fd, out, len, 0) : -1;
            if (got > 0) {
                out[got] = '\0';
            } else {
                dg_free(out);
                out = NULL;
            }
        }
        close(cap->fd);
    }
    cap->saved = cap->fd = -1;
    pthread_mutex_unlock(&capture_mu);
    return out;
}

/* The program's build log for c's device (malloc'd; NULL when empty). */
static char *build_log(dgr_cl_ctx *c, cl_program p)
{
    size_t sz = 0;
    if (clGetProgramBuildInfo(p, c->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &sz) !=
            CL_SUCCESS || sz <= 1)
        return NULL;
    if (sz > CAPTURE_MAX)
        sz = CAPTURE_MAX;
    char *log = dg_calloc(1, sz + 1); /* an implementation may fill less */
    if (!log)
        return NULL;
    if (clGetProgramBuildInfo(p, c->dev, CL_PROGRAM_BUILD_LOG, sz, log,
                              NULL) != CL_SUCCESS) {
        dg_free(log);
        return NULL;
    }
    log[sz] = '\0';
    /* only blanks: nothing to say */
    for (const char *q = log; *q; q++)
        if (*q != ' ' && *q != '\n' && *q != '\r' && *q != '\t')
            return log;
    dg_free(log);
    return NULL;
}

/* captured + log joined into one malloc'd text ("" when both are empty). */
static char *join_output(const char *captured, const char *log)
{
    if (!captured && !log)
        return dg_strdup("");
    dg_sbuf b;
    dg_sbuf_init(&b);
    if (captured)
        dg_sbuf_add(&b, captured);
    if (captured && log && captured[strlen(captured) - 1] != '\n')
        dg_sbuf_add(&b, "\n");
    if (log && !(captured && strstr(captured, log)))
        dg_sbuf_add(&b, log);
    char *s = dg_sbuf_take(&b);
    return s;
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

static dg_status build_fail(const char *file, cl_int e, const char *output,
                            dg_error *err)
{
    /* first lines, joined */
    char first[600];
    size_t o = 0;
    int lines = 0;
    const char *log = output ? output : "";
    for (const char *s = log; *s && o + 2 < sizeof first && lines < 4; s++) {
        if (*s == '\n') {
            lines++;
            if (o && first[o - 1] != ' ')
                first[o++] = ' ';
            if (lines < 4 && o + 3 < sizeof first && s[1]) {
                first[o++] = '|';
                first[o++] = ' ';
            }
            continue;
        }
        first[o++] = *s;
    }
    while (o && first[o - 1] == ' ')
        o--;
    first[o] = '\0';
    return dg_err(err, DG_E_RUNTIME,
                  "building OpenCL kernel file '%s.cl' failed: %s (%d): %s",
                  file, dgr_cl_errname(e), (int)e,
                  first[0] ? first : "(no build log)");
}

/* clBuildProgram with what the implementation prints captured; *output
 * gets that and the build log (malloc'd). */
static cl_int build_captured(dgr_cl_ctx *c, cl_program p, const char *options,
                             char **output)
{
    dgr_cl_capture cap;
    dgr_cl_capture_begin(&cap);
    cl_int e = clBuildProgram(p, 1, &c->dev, options, NULL, NULL);
    char *captured = dgr_cl_capture_end(&cap);
    char *log = build_log(c, p);
    *output = join_output(captured, log);
    dg_free(captured);
    dg_free(log);
    return e;
}

dg_status dgr_cl_build(dgr_cl_ctx *c, const char *file, const char *text,
                       const char *options, cl_program *out, int *from_cache,
                       dg_error *err)
{
    *out = NULL;
    if (from_cache)
        *from_cache = 0;
    /* the key: platform (name, version), device (name, version), driver
     * version, source and build options -- two drivers or platforms
     * exposing one device never share a binary */
    uint64_t h = DG_FNV1A_INIT;
    h = dg_fnv1a(h, c->plat_name, strlen(c->plat_name) + 1);
    h = dg_fnv1a(h, c->plat_version, strlen(c->plat_version) + 1);
    h = dg_fnv1a(h, c->dev_name, strlen(c->dev_name) + 1);
    h = dg_fnv1a(h, c->dev_version, strlen(c->dev_version) + 1);
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
        char *output = NULL;
        if (p && bst == CL_SUCCESS &&
            build_captured(c, p, options, &output) == CL_SUCCESS) {
            dg_free(output); /* a cached binary: nothing worth showing */
            *out = p;
            if (from_cache)
                *from_cache = 1;
            return DG_OK;
        }
        dg_free(output);
        if (p)
            clReleaseProgram(p); /* stale or corrupt: rebuild below */
    }
    const char *srcs[1] = {text};
    cl_program p = clCreateProgramWithSource(c->ctx, 1, srcs, NULL, &e);
    if (!p)
        return dgr_cl_fail(err, NULL, "clCreateProgramWithSource", e);
    dgr_cl_build_notice(c, 1, file, NULL);
    char *output = NULL;
    e = build_captured(c, p, options, &output);
    dgr_cl_build_notice(c, 0, file, output ? output : "");
    if (e != CL_SUCCESS) {
        dg_status st = build_fail(file, e, output, err);
        dg_free(output);
        clReleaseProgram(p);
        return st;
    }
    dg_free(output);
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

void dgr_cl_build_notice(dgr_cl_ctx *c, int begin, const char *what,
                         const char *output)
{
    if (!c->on_build)
        return;
    char dir[900];
    dgr_cl_cache_dir(dir, sizeof dir);
    dg_build_event ev = {begin, c->dev_name, what, dir,
                         begin ? NULL : output ? output : ""};
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
                                   cl_kernel *out, size_t *wg, dg_error *err)
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
            if (wg)
                *wg = k->wg;
            return DG_OK;
        }
    }
    if (c->n_kernels >= DGR_CL_KTAB / 2)
        return dg_err(err, DG_E_RUNTIME, "too many OpenCL kernels (%d)",
                      c->n_kernels);
    if (!c->progs[s][di]) {
        /* float programs divide correctly rounded where the device can
         * (DG_CR_DIV tells the kernels; elementwise.cl's FloorDiv) */
        const char *opts =
            di ? "-cl-std=CL1.2 -DT=double -DDG_F64=1"
            : c->cr_div ? "-cl-std=CL1.2 -DT=float -DDG_F64=0 "
                          "-cl-fp32-correctly-rounded-divide-sqrt -DDG_CR_DIV=1"
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
    /* what this kernel may run with here: a GPU gives a register-heavy
     * kernel fewer work-items than the device maximum */
    size_t kwg = 0;
    if (clGetKernelWorkGroupInfo(k, c->dev, CL_KERNEL_WORK_GROUP_SIZE,
                                 sizeof kwg, &kwg, NULL) != CL_SUCCESS ||
        kwg == 0 || kwg > c->max_wg)
        kwg = c->max_wg;
    if (c->max_item[0] && kwg > c->max_item[0])
        kwg = c->max_item[0];
    c->kernels[c->n_kernels++] = (dgr_cl_kentry){s, di, nm, k, kwg};
    if (wg)
        *wg = kwg;
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
    dg_status st = dgr_cl_get_kernel_locked(c, src, dt, name, out, NULL,
                                            err);
    pthread_mutex_unlock(&c->lock);
    return st;
}
