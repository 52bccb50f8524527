/*
 * test_cpu_gemm.c -- the thread budget (busy inter-op workers shrink the
 * intra-op threads a kernel may use; idle ones help its loops, no thread
 * beyond the budget does) and dgr_cpu_gemm against a naive
 * product: every transpose, row and column blocks, the bias/Relu epilogue,
 * float32 (oneDNN sizes and OpenBLAS sizes) and float64; the same bits
 * for every thread budget (issue 19).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_gemm.h"
#include "threadpool.h"

/* ---- budget ---------------------------------------------------------------- */

typedef struct budget_ctx {
    struct dgr_pool *intra;
    atomic_int arrived, read;
    int seen[2];
} budget_ctx;

static void budget_task(void *ctx, int32_t item, int lane)
{
    (void)lane;
    budget_ctx *c = ctx;
    atomic_fetch_add(&c->arrived, 1);
    while (atomic_load(&c->arrived) < 2) /* both workers busy at once */
        ;
    c->seen[item] = dgr_pool_budget(c->intra);
    atomic_fetch_add(&c->read, 1);
    while (atomic_load(&c->read) < 2) /* neither leaves before both read */
        ;
}

static void test_budget(void **state)
{
    (void)state;
    dg_error err;
    struct dgr_pool *intra = dgr_pool_new(4, &err);
    assert_non_null(intra);
    assert_int_equal(dgr_pool_budget(intra), 4); /* not on a worker: all */
    assert_int_equal(dgr_pool_budget(NULL), 1);
    budget_ctx c = {.intra = intra};
    atomic_init(&c.arrived, 0);
    atomic_init(&c.read, 0);
    dgr_ipool *ip = dgr_ipool_new(2, budget_task, &err);
    assert_non_null(ip);
    dgr_ipool_share(ip, intra);
    dgr_ipool_push(ip, &c, 0);
    dgr_ipool_push(ip, &c, 1);
    dgr_ipool_free(ip); /* drains */
    assert_int_equal(c.seen[0], 2); /* 4 threads / 2 busy workers */
    assert_int_equal(c.seen[1], 2);
    assert_int_equal(dgr_pool_budget(intra), 4);
    dgr_pool_free(intra);
}

/* An idle inter-op worker helps a listed loop, and with as many workers
 * as intra-op threads no helper thread does (the two levels together
 * never run more threads than the budget); a worker helping goes back to
 * its own queue: an item pushed while it helps runs before the loop ends. */
typedef struct guest_ctx {
    struct dgr_pool *intra;
    dgr_ipool *ip;
    pthread_t workers[2], caller;
    atomic_int registered, loop_done, chunk_threads_n, pushed, late_ran;
    pthread_t chunk_threads[64];
    pthread_mutex_t mu;
} guest_ctx;

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The caller's chunks wait (20 s at most: only a failing pool waits it
 * out) until an item pushed by a
 * helper has run: the helper must join, push, and leave the loop for its
 * queue while the loop is still running. */
static void guest_chunk(void *arg, int64_t b, int64_t e)
{
    guest_ctx *c = arg;
    (void)b;
    (void)e;
    pthread_mutex_lock(&c->mu);
    int n = atomic_load(&c->chunk_threads_n), seen = 0;
    for (int i = 0; i < n; i++)
        seen |= pthread_equal(c->chunk_threads[i], pthread_self());
    if (!seen && n < 64)
        c->chunk_threads[atomic_fetch_add(&c->chunk_threads_n, 1)] =
            pthread_self();
    pthread_mutex_unlock(&c->mu);
    if (!pthread_equal(pthread_self(), c->caller)) {
        if (!atomic_exchange(&c->pushed, 1))
            dgr_ipool_push(c->ip, c, 2);
        return;
    }
    int64_t until = now_ms() + 20000;
    while (!atomic_load(&c->late_ran) && now_ms() < until)
        ;
}

static void guest_task(void *ctx, int32_t item, int lane)
{
    guest_ctx *c = ctx;
    if (item == 0) { /* both workers say who they are */
        c->workers[lane] = pthread_self();
        atomic_fetch_add(&c->registered, 1);
        while (atomic_load(&c->registered) < 2)
            ;
        return;
    }
    if (item == 2) {
        atomic_store(&c->late_ran, atomic_load(&c->loop_done) ? 2 : 1);
        return;
    }
    c->caller = pthread_self();
    while (dgr_pool_budget(c->intra) < 2) /* the other worker still busy */
        ;
    dgr_parallel_for(c->intra, 8, 1, guest_chunk, c);
    atomic_store(&c->loop_done, 1);
}

static void test_idle_workers_help(void **state)
{
    (void)state;
    dg_error err;
    guest_ctx c;
    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.mu, NULL);
    c.intra = dgr_pool_new(2, &err);
    assert_non_null(c.intra);
    c.ip = dgr_ipool_new(2, guest_task, &err);
    assert_non_null(c.ip);
    dgr_ipool_share(c.ip, c.intra);
    dgr_ipool_push(c.ip, &c, 0);
    dgr_ipool_push(c.ip, &c, 0);
    while (atomic_load(&c.registered) < 2)
        ;
    dgr_ipool_push(c.ip, &c, 1);
    while (!atomic_load(&c.loop_done)) { /* (a stopping pool helps none) */
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    dgr_ipool_free(c.ip);
    /* chunks ran on the inter-op workers only (no helper thread), one of
     * them not the loop's caller (the caller may run none: a helper that
     * joined before it took the first chunk may take them all) */
    int n = atomic_load(&c.chunk_threads_n), guest = 0;
    for (int i = 0; i < n; i++) {
        assert_true(pthread_equal(c.chunk_threads[i], c.workers[0]) ||
                    pthread_equal(c.chunk_threads[i], c.workers[1]));
        guest |= !pthread_equal(c.chunk_threads[i], c.caller);
    }
    assert_true(guest);
    assert_int_equal(atomic_load(&c.late_ran), 1); /* before the loop ended */
    dgr_pool_free(c.intra);
    pthread_mutex_destroy(&c.mu);
}

/* A worker that looked for a loop to help while the pool was being
 * stopped (or an item pushed) must see the stop (the item) when it comes
 * back: once it went to sleep without looking again, and the session's
 * dgr_ipool_free waited for it forever (e2e_ops hung in 1 of ~3000 runs).
 * Many short pool lifetimes with a loop listed as the stop comes; a
 * regression hangs here (the suite's timeout fails it). */
static atomic_int loop_bad;

static void spin_chunk(void *arg, int64_t b, int64_t e)
{
    atomic_llong *acc = arg;
    long long s = 0;
    for (int64_t i = b; i < e; i++)
        s += i;
    atomic_fetch_add_explicit(acc, s, memory_order_relaxed);
}

static void loop_task(void *ctx, int32_t item, int lane)
{
    (void)lane;
    atomic_llong acc;
    atomic_init(&acc, 0);
    int64_t n = 64 + item % 7;
    dgr_parallel_for(ctx, n, 1, spin_chunk, &acc);
    if (atomic_load(&acc) != n * (n - 1) / 2) /* a chunk lost or twice */
        atomic_store(&loop_bad, 1);
}

static void test_stop_while_helping(void **state)
{
    (void)state;
    dg_error err;
    for (int it = 0; it < 2000; it++) {
        struct dgr_pool *intra = dgr_pool_new(2, &err);
        assert_non_null(intra);
        dgr_ipool *ip = dgr_ipool_new(2, loop_task, &err);
        assert_non_null(ip);
        dgr_ipool_share(ip, intra);
        dgr_ipool_push(ip, intra, it);
        if (it % 2)
            dgr_ipool_push(ip, intra, it + 1);
        dgr_ipool_free(ip); /* drains, stops, joins */
        dgr_pool_free(intra);
    }
    assert_int_equal(atomic_load(&loop_bad), 0);
}

/* ---- gemm ------------------------------------------------------------------ */

static double at(const float *m, int64_t ld, int t, int64_t r, int64_t c)
{
    return t ? m[c * ld + r] : m[r * ld + c];
}

static void check_f32(struct dgr_pool *pool, int ta, int tb, int64_t M,
                      int64_t N, int64_t K, int bias, int relu)
{
    int64_t ar = ta ? K : M, ac = ta ? M : K, br = tb ? N : K,
            bc = tb ? K : N;
    float *A = malloc(sizeof *A * (size_t)(ar * ac + 1));
    float *B = malloc(sizeof *B * (size_t)(br * bc + 1));
    float *C = malloc(sizeof *C * (size_t)(M * N));
    float *bv = malloc(sizeof *bv * (size_t)N);
    for (int64_t i = 0; i < ar * ac; i++)
        A[i] = (float)((i * 7) % 13) / 13.0f - 0.4f;
    for (int64_t i = 0; i < br * bc; i++)
        B[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    for (int64_t i = 0; i < N; i++)
        bv[i] = (float)(i % 3) - 1.0f;
    dgr_cpu_gemm(pool, DG_F32, ta, tb, M, N, K, A, ac, B, bc, C, N,
                 bias ? bv : NULL, relu);
    for (int64_t r = 0; r < M; r += (M > 64 ? 7 : 1))
        for (int64_t q = 0; q < N; q += (N > 64 ? 5 : 1)) {
            double s = bias ? bv[q] : 0;
            for (int64_t k = 0; k < K; k++)
                s += at(A, ac, ta, r, k) * at(B, bc, tb, k, q);
            if (relu && s < 0)
                s = 0;
            assert_true(fabs(s - C[r * N + q]) <= 1e-3 * (1 + fabs(s)));
        }
    free(A);
    free(B);
    free(C);
    free(bv);
}

static void test_gemm_f32(void **state)
{
    (void)state;
    dg_error err;
    struct dgr_pool *pool = dgr_pool_new(3, &err);
    assert_non_null(pool);
    dgr_cpu_gemm_init(0);
    for (int t = 0; t < 4; t++) /* OpenBLAS only */
        check_f32(pool, t & 1, t >> 1, 256, 200, 96, 1, 1);
    dgr_cpu_gemm_init(1);
    for (int t = 0; t < 4; t++) {
        int ta = t & 1, tb = t >> 1;
        check_f32(pool, ta, tb, 5, 7, 3, 0, 0);          /* tiny, OpenBLAS */
        check_f32(pool, ta, tb, 256, 200, 96, 1, 1);     /* row blocks */
        check_f32(pool, ta, tb, 20, 1000, 128, 1, 0);    /* column blocks */
        check_f32(NULL, ta, tb, 130, 140, 150, 0, 1);    /* no pool */
    }
    check_f32(pool, 0, 0, 9, 4, 0, 1, 1); /* K = 0: bias, relu */
    dgr_pool_free(pool);
}

static void test_gemm_f64(void **state)
{
    (void)state;
    dg_error err;
    struct dgr_pool *pool = dgr_pool_new(2, &err);
    assert_non_null(pool);
    enum { M = 300, N = 280, K = 40 };
    double *A = malloc(sizeof *A * M * K), *B = malloc(sizeof *B * K * N);
    double *C = malloc(sizeof *C * M * N), bias[N];
    for (int i = 0; i < M * K; i++)
        A[i] = (i % 9) * 0.25 - 1;
    for (int i = 0; i < K * N; i++)
        B[i] = (i % 4) * 0.5 - 0.75;
    for (int i = 0; i < N; i++)
        bias[i] = i * 0.01;
    dgr_cpu_gemm(pool, DG_F64, 0, 1, M, N, K, A, K, B, K, C, N, bias, 0);
    for (int r = 0; r < M; r += 11)
        for (int q = 0; q < N; q += 3) {
            double s = bias[q];
            for (int k = 0; k < K; k++)
                s += A[r * K + k] * B[q * K + k];
            assert_true(fabs(s - C[r * N + q]) < 1e-9);
        }
    free(A);
    free(B);
    free(C);
    dgr_pool_free(pool);
}

/* ---- the same bits whatever the budget (issue 19) -------------------------- */

/* The budget cuts C into row or column blocks; each is its own library
 * call.  Each element must still come out bit-identical: K is not split
 * and the library is chosen for the whole product.  Checked for pools of
 * 1 (one call) to 16 threads (from the main thread the budget is the
 * pool's size), every transpose, the MLP shapes (digits 64-128-10 and
 * 784-1024-1024-10 at batch 256, forward and both gradients) and ragged
 * ones, first with OpenBLAS only, then with oneDNN for the large ones. */
static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static void split_invariant(struct dgr_pool **pools, int npools, int ta,
                            int tb, int64_t M, int64_t N, int64_t K,
                            int bias)
{
    int64_t ar = ta ? K : M, ac = ta ? M : K, br = tb ? N : K,
            bc = tb ? K : N;
    float *A = malloc(sizeof *A * (size_t)(ar * ac));
    float *B = malloc(sizeof *B * (size_t)(br * bc));
    float *bv = malloc(sizeof *bv * (size_t)N);
    float *C0 = malloc(sizeof *C0 * (size_t)(M * N));
    float *C = malloc(sizeof *C * (size_t)(M * N));
    uint32_t seed = (uint32_t)(M * 31 + N * 7 + K);
    for (int64_t i = 0; i < ar * ac; i++)
        A[i] = (float)lcg(&seed) / (float)(1 << 23) - 1.0f;
    for (int64_t i = 0; i < br * bc; i++)
        B[i] = (float)lcg(&seed) / (float)(1 << 24) - 0.5f;
    for (int64_t i = 0; i < N; i++)
        bv[i] = (float)lcg(&seed) / (float)(1 << 24);
    dgr_cpu_gemm(pools[0], DG_F32, ta, tb, M, N, K, A, ac, B, bc, C0, N,
                 bias ? bv : NULL, bias);
    for (int p = 1; p < npools; p++) {
        memset(C, 0, sizeof *C * (size_t)(M * N));
        dgr_cpu_gemm(pools[p], DG_F32, ta, tb, M, N, K, A, ac, B, bc, C, N,
                     bias ? bv : NULL, bias);
        if (memcmp(C0, C, sizeof *C * (size_t)(M * N)) != 0) {
            print_error("%lldx%lldx%lld ta=%d tb=%d: %d threads differ "
                        "from 1\n", (long long)M, (long long)N, (long long)K,
                        ta, tb, dgr_pool_threads(pools[p]));
            fail();
        }
    }
    free(A);
    free(B);
    free(bv);
    free(C0);
    free(C);
}

static void split_shapes(struct dgr_pool **pools, int npools, int big)
{
    static const int64_t shapes[][3] = {
        {64, 128, 64}, {64, 10, 128}, {64, 64, 128}, {128, 10, 64},
        {100, 37, 300}, {33, 1000, 50}, {1000, 20, 77}, {17, 2000, 600},
        {257, 129, 1000}, {360, 128, 64}, {40, 600, 3000},
        {256, 10, 1024}, {1024, 10, 256}, {256, 1024, 10},
    };
    static const int64_t large[][3] = {
        {256, 1024, 784}, {784, 1024, 256}, {256, 784, 1024},
        {256, 1024, 1024}, {1024, 1024, 256},
    };
    for (int t = 0; t < 4; t++) {
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            split_invariant(pools, npools, t & 1, t >> 1, shapes[s][0],
                            shapes[s][1], shapes[s][2], (int)(s & 1));
        if (big)
            for (size_t s = 0; s < sizeof large / sizeof large[0]; s++)
                split_invariant(pools, npools, t & 1, t >> 1, large[s][0],
                                large[s][1], large[s][2], (int)(s & 1));
    }
}

static void test_gemm_split_invariant(void **state)
{
    (void)state;
    dg_error err;
    static const int th[] = {1, 2, 3, 4, 5, 8, 16};
    enum { NP = sizeof th / sizeof th[0] };
    struct dgr_pool *pools[NP];
    for (int p = 0; p < NP; p++) {
        pools[p] = dgr_pool_new(th[p], &err);
        assert_non_null(pools[p]);
        assert_int_equal(dgr_pool_budget(pools[p]), th[p]);
    }
    dgr_cpu_gemm_init(0); /* OpenBLAS only (oneDNN not opened yet) */
    split_shapes(pools, NP, 0);
    dgr_cpu_gemm_init(1); /* oneDNN from 2^20 multiply-adds when present */
    split_shapes(pools, NP, 1);
    for (int p = 0; p < NP; p++)
        dgr_pool_free(pools[p]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_idle_workers_help),
        cmocka_unit_test(test_stop_while_helping),
        /* first: its OpenBLAS half needs oneDNN not opened yet */
        cmocka_unit_test(test_gemm_split_invariant),
        cmocka_unit_test(test_gemm_f32),
        cmocka_unit_test(test_gemm_f64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
