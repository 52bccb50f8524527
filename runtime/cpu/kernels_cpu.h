/*
 * kernels_cpu.h -- internal header of the CPU kernels (kernels_cpu*.c): the
 * registered kernels (generated: cpu_kernels_gen.h) and the small helpers
 * they share (dtype conversion, axis attributes, shape collapsing for
 * broadcasting and reductions).
 */
#ifndef DGR_KERNELS_CPU_H
#define DGR_KERNELS_CPU_H

#include <stdint.h>

#include "kernel.h"
#include "rng.h"
#include "threadpool.h"

/* Elements above which an elementwise op or reduction is split over the
 * intra-op pool. */
#define DGR_CPU_PAR_MIN 32768

/* DGR_HOT: a hot loop compiled for AVX-512 and AVX2 besides the baseline
 * x86-64 (SSE2) that Debian's compiler targets, the version picked once
 * at load time by the CPU (GCC's target_clones: an ifunc).  The clones
 * run the same IEEE operations in the same order -- ISO C mode and
 * -ffp-contract=off (meson.build) forbid FMA contraction, and GCC does not
 * reassociate without -ffast-math -- so results keep their bits on every
 * CPU; only the vector width changes.  Mark the function that holds the
 * loop (the per-range or per-row worker), not a helper it calls per
 * element: a static helper inlines into each clone.  Not under TSan: its
 * runtime is not up when the dynamic loader runs the ifunc resolvers,
 * and the instrumented resolvers crash at load. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__) && !defined(DGR_NO_CLONES) && \
    !defined(__SANITIZE_THREAD__)
#define DGR_HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DGR_HOT
#endif

typedef uint8_t dgr_bool_t; /* DG_BOOL storage: one byte, 0 or 1 */

/* ---- helpers (kernels_cpu.c) --------------------------------------------- */

/* Convert n elements from src (dtype st) to dst (dtype dt); float -> int
 * truncates toward zero, anything -> bool is (x != 0).  src and dst may be
 * the same pointer only when st == dt. */
void dgr_cpu_convert(const void *src, dg_dtype st, void *dst, dg_dtype dt,
                     int64_t n);
/* Element i of a host buffer of dtype t, as a double. */
double dgr_cpu_get(const void *p, dg_dtype t, int64_t i);
/* Host pointer of a value (NULL when it has no buffer). */
static inline void *dgr_cpu_ptr(const dgr_value *v)
{
    return v->buf ? v->buf->host : NULL;
}

/* Reduction axes of node n for an input of rank `rank` from attribute
 * `key` ("axis"): absent = all axes; an int or a list, negatives counted
 * from the end.  Sets mask bit d for each reduced axis.  Returns 0, or -1
 * with an error naming the node when an axis is out of range. */
int dgr_cpu_axes(dgr_kctx *k, dgc_attr_id key, int rank, uint32_t *mask);

/* A binary broadcast of operands a and b into an output shape, collapsed
 * to at most DG_MAX_RANK dims: dims[] with element strides sa[]/sb[] (0 on
 * broadcast dims).  rank 0 = scalar. */
typedef struct dgr_bcast {
    int rank;
    int64_t dims[DG_MAX_RANK];
    int64_t sa[DG_MAX_RANK], sb[DG_MAX_RANK];
} dgr_bcast;
/* Build the collapsed broadcast of shapes a and b to out.  Returns 0, or -1
 * when they do not broadcast to out. */
int dgr_bcast_init(dgr_bcast *bc, const dg_shape *a, const dg_shape *b,
                   const dg_shape *out);

/* Reduce x (shape xs, dtype t) over the axes in mask into out (whose
 * numel is the product of the kept dims, in order).  kind: 0 sum, 1 mean,
 * 2 max.  Splits large work over k->intra. */
enum { DGR_RED_SUM = 0, DGR_RED_MEAN = 1, DGR_RED_MAX = 2 };
void dgr_cpu_reduce(dgr_kctx *k, const void *x, const dg_shape *xs,
                    dg_dtype t, uint32_t mask, int kind, void *out);

/* ---- kernels ------------------------------------------------------------ */

/* Each family file registers its kernels (DGR_KERNEL, kernel.h) next to
 * them; the generated header declares every registered kernel and the
 * registry table (dgr_cpu_kernel_rows) tools/gen_registry.py writes. */
#include "cpu_kernels_gen.h"

#define DGR_K(name) dg_status name(dgr_kctx *k)
/* kernels_cpu_tf.c: DynamicStitch with its sizes known (the row's
 * dgr_k_dynamic_stitch_any sizes itself, then calls it) */
DGR_K(dgr_k_dynamic_stitch);

/* The elementwise drivers of kernels_cpu_elementwise.c, for other family
 * files: fns[dtype] applied to input 0 (unary) or inputs 0 and 1 with
 * NumPy broadcasting (binary; sa/sb are 0 or 1); output 0 allocated. */
typedef void (*dgr_cpu_un_fn)(const void *a, void *o, int64_t n);
typedef void (*dgr_cpu_bin_fn)(const void *a, int64_t sa, const void *b,
                               int64_t sb, void *o, int64_t n);
/* Element i of an int32/int64 tensor v (in host memory), as int64. */
int64_t dgr_cpu_iat(const dgr_value *v, int64_t i);
/* Store x as element i of the int32/int64 tensor v. */
void dgr_cpu_iput(dgr_value *v, int64_t i, int64_t x);
/* Allocate output i of k with dtype t and shape s (an output whose size
 * only the data tells: Unique, DynamicPartition, the segment ops); a
 * status with k->err set on failure. */
dg_status dgr_cpu_alloc_as(dgr_kctx *k, int i, dg_dtype t, const dg_shape *s);
dg_status dgr_cpu_unary(dgr_kctx *k, const dgr_cpu_un_fn *fns);
dg_status dgr_cpu_binary(dgr_kctx *k, const dgr_cpu_bin_fn *fns);
/* 1 when integer value v (int32 / int64) has a zero element (neg 0) or a
 * negative one (neg 1), else 0 (also for other dtypes): the integer
 * divisions' and Pow's checks. */
int dgr_cpu_int_has(const dgr_value *v, int neg);
/* A static NAME(p, n): the sum of the n elements p[0..n) of type T in
 * accumulator type A -- four interleaved partial sums, added pairwise at
 * the end: the order of every CPU reduction of a contiguous row (Sum,
 * Mean; kernels_cpu_reduce.c), which a fused op that sums rows uses too
 * (_LayerNorm) so that it gives the unfused ops' bits. */
#define DGR_ROWSUM_DEF(NAME, T, A)                                           \
    static inline A NAME(const T *restrict p, int64_t n)                     \
    {                                                                        \
        A s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                    \
        int64_t i = 0;                                                       \
        for (; i + 4 <= n; i += 4) {                                         \
            s0 += (A)p[i];                                                   \
            s1 += (A)p[i + 1];                                               \
            s2 += (A)p[i + 2];                                               \
            s3 += (A)p[i + 3];                                               \
        }                                                                    \
        for (; i < n; i++)                                                   \
            s0 += (A)p[i];                                                   \
        return (s0 + s1) + (s2 + s3);                                        \
    }

/* A dgr_cpu_bin_fn / dgr_cpu_un_fn NAME over type T computing EXPR of x
 * (and y) per element, for the fns tables above. */
#define ZBIN(NAME, T, EXPR)                                                  \
    DGR_HOT static void NAME(const void *av, int64_t sa, const void *bv, int64_t sb, \
                     void *ov, int64_t n)                                    \
    {                                                                        \
        const T *a = av, *b = bv;                                            \
        T *o = ov;                                                           \
        for (int64_t i = 0; i < n; i++) {                                    \
            T x = a[i * sa], y = b[i * sb];                                  \
            o[i] = (T)(EXPR);                                                \
        }                                                                    \
    }
#define ZUN(NAME, T, EXPR)                                                   \
    DGR_HOT static void NAME(const void *av, void *ov, int64_t n)                    \
    {                                                                        \
        const T *a = av;                                                     \
        T *o = ov;                                                           \
        for (int64_t i = 0; i < n; i++) {                                    \
            T x = a[i];                                                      \
            o[i] = (T)(EXPR);                                                \
        }                                                                    \
    }

/* The float32/float64 table OP##_fns of OP##_f32 and OP##_f64; ZUNF: both
 * from float and double functions F32 and F64, the table and the kernel
 * dgr_k_##OP (register it with DGR_KERNEL). */
#define UNF(OP)                                                              \
    static const dgr_cpu_un_fn OP##_fns[DG_DTYPE_COUNT] = {                  \
        OP##_f32, OP##_f64, NULL, NULL, NULL};
/* BINF: the binary table OP##_fns of OP##_f32 and OP##_f64 */
#define BINF(OP)                                                             \
    static const dgr_cpu_bin_fn OP##_fns[DG_DTYPE_COUNT] = {                 \
        OP##_f32, OP##_f64, NULL, NULL, NULL};
#define ZUNF(OP, F32, F64)                                                   \
    ZUN(OP##_f32, float, F32(x))                                             \
    ZUN(OP##_f64, double, F64(x))                                            \
    UNF(OP)                                                                  \
    dg_status dgr_k_##OP(dgr_kctx *k) { return dgr_cpu_unary(k, OP##_fns); }

#endif
