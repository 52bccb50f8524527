/* train.cl -- state ops updating a Variable's buffer in place.  Scalars
 * (learning rate, momentum, Adam's betas) arrive as 1-element buffers and
 * are read here, never on the host. */
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* var += sign * v (AssignAdd / AssignSub) */
__kernel void assign_add(__global T *var, __global const T *v, long n, T sign)
{
    long i = get_global_id(0);
    if (i < n) var[i] += sign * v[i];
}

__kernel void apply_gd(__global T *var, __global const T *lr,
                       __global const T *g, long n)
{
    long i = get_global_id(0);
    if (i < n) var[i] -= lr[0] * g[i];
}

__kernel void apply_momentum(__global T *var, __global T *accum,
                             __global const T *lr, __global const T *g,
                             __global const T *mom, long n, int nesterov)
{
    long i = get_global_id(0);
    if (i >= n) return;
    T a = accum[i] * mom[0] + g[i];
    accum[i] = a;
    if (nesterov)
        var[i] -= g[i] * lr[0] + a * mom[0] * lr[0];
    else
        var[i] -= lr[0] * a;
}

__kernel void apply_adam(__global T *var, __global T *m, __global T *v,
                         __global const T *b1p, __global const T *b2p,
                         __global const T *lr, __global const T *b1,
                         __global const T *b2, __global const T *eps,
                         __global const T *g, long n, int nesterov)
{
    long i = get_global_id(0);
    if (i >= n) return;
    T beta1 = b1[0], beta2 = b2[0];
    T lr_t = lr[0] * sqrt((T)1 - b2p[0]) / ((T)1 - b1p[0]);
    T gi = g[i];
    T mi = m[i] + (gi - m[i]) * ((T)1 - beta1);
    T vi = v[i] + (gi * gi - v[i]) * ((T)1 - beta2);
    m[i] = mi;
    v[i] = vi;
    if (nesterov)
        var[i] -= lr_t * (mi * beta1 + ((T)1 - beta1) * gi) / (sqrt(vi) + eps[0]);
    else
        var[i] -= lr_t * mi / (sqrt(vi) + eps[0]);
}

/* var -= (var - value) * (1 - decay) */
__kernel void moving_avg(__global T *var, __global const T *value, long n,
                         T decay)
{
    long i = get_global_id(0);
    if (i < n) var[i] -= (var[i] - value[i]) * ((T)1 - decay);
}

/* The other tf.compat.v1.train updates (issue 22; kernels_cpu_state.c's
 * OPT_FN, formula for formula): op a K_* code of cl_kernels_nn.c; w the
 * variable, s0..s2 its slots, h0..h4 the scalar hyper-parameters, g the
 * gradient.  Work-item j of a row applies the cnt gradient rows to rows
 * ix[i] (has_ix; else the one row 0: a dense update of inner elements) in
 * order, so a repeated index is applied twice, as on the CPU. */
#define K_ADAGRAD 0
#define K_RMSPROP 1
#define K_CRMSPROP 2
#define K_ADADELTA 3
#define K_ADAMAX 4
#define K_FTRL 5
#define K_FTRL_V2 6
#define K_PROX_ADAGRAD 7
#define OPT(name, IT)                                                        \
__kernel void name(int op, __global T *w, __global T *s0, __global T *s1,    \
                   __global T *s2, __global const T *g,                      \
                   __global const IT *ix, int has_ix, long cnt, long inner,  \
                   long rows, __global const T *hp0, __global const T *hp1,  \
                   __global const T *hp2, __global const T *hp3,             \
                   __global const T *hp4, int slots, int mul_lr)             \
{                                                                            \
    long j = get_global_id(0);                                               \
    if (j >= inner) return;                                                  \
    T h0 = hp0[0], h1 = hp1[0], h2 = hp2[0], h3 = hp3[0], h4 = hp4[0];       \
    for (long q = 0; q < cnt; q++) {                                         \
        long r = has_ix ? (long)ix[q] : 0;                                   \
        if (r < 0 || r >= rows) continue; /* skipped, as TF's GPU kernels */ \
        long i = r * inner + j;                                              \
        T gi = g[q * inner + j];                                             \
        if (op == K_ADAGRAD) {                                               \
            if (slots) s0[i] += gi * gi;                                     \
            w[i] -= gi * h0 / sqrt(s0[i]);                                   \
        } else if (op == K_RMSPROP) {                                        \
            s0[i] += (gi * gi - s0[i]) * ((T)1 - h1);                        \
            s1[i] = s1[i] * h2 + gi * h0 / sqrt(s0[i] + h3);                 \
            w[i] -= s1[i];                                                   \
        } else if (op == K_CRMSPROP) {                                       \
            s1[i] += (gi * gi - s1[i]) * ((T)1 - h1);                        \
            s0[i] += (gi - s0[i]) * ((T)1 - h1);                             \
            s2[i] = s2[i] * h2 + gi * h0 / sqrt(s1[i] - s0[i] * s0[i] + h3); \
            w[i] -= s2[i];                                                   \
        } else if (op == K_ADADELTA) {                                       \
            s0[i] = s0[i] * h1 + gi * gi * ((T)1 - h1);                      \
            T u = sqrt(s1[i] + h2) / sqrt(s0[i] + h2) * gi;                  \
            w[i] -= u * h0;                                                  \
            s1[i] = s1[i] * h1 + u * u * ((T)1 - h1);                        \
        } else if (op == K_ADAMAX) {                                         \
            s0[i] += (gi - s0[i]) * ((T)1 - h2);                             \
            T av = fabs(gi), bv = h3 * s1[i];                                \
            s1[i] = bv > av ? bv : av;                                       \
            w[i] -= h1 / ((T)1 - h0) * (s0[i] / (s1[i] + h4));               \
        } else if (op == K_FTRL || op == K_FTRL_V2) {                        \
            int v2 = op == K_FTRL_V2;                                        \
            T p = v2 ? h4 : h3, gs = v2 ? gi + (T)2 * h3 * w[i] : gi;        \
            T na = s0[i] + gi * gi;                                          \
            T pn = p == (T)-0.5 ? sqrt(na) : pow(na, -p);                    \
            T po = p == (T)-0.5 ? sqrt(s0[i]) : pow(s0[i], -p);              \
            T l1 = h1, y;                                                    \
            if (mul_lr) {                                                    \
                s1[i] += gs * h0 - (pn - po) * w[i];                         \
                l1 = h1 * h0;                                                \
                y = pn + (T)2 * h2 * h0;                                     \
            } else {                                                         \
                s1[i] += gs - (pn - po) / h0 * w[i];                         \
                y = pn / h0 + (T)2 * h2;                                     \
            }                                                                \
            T lin = s1[i];                                                   \
            w[i] = fabs(lin) > l1 ? ((lin > 0 ? l1 : -l1) - lin) / y : (T)0; \
            s0[i] = na;                                                      \
        } else { /* K_PROX_ADAGRAD: accum; lr, l1, l2 */                     \
            s0[i] += gi * gi;                                                \
            T lr = h0 / sqrt(s0[i]);                                         \
            T pv = w[i] - gi * lr;                                           \
            if (h1 > 0) {                                                    \
                T a = fabs(pv) - lr * h1;                                    \
                w[i] = (pv > 0 ? (T)1 : pv < 0 ? (T)-1 : (T)0) *             \
                       (a > 0 ? a : (T)0) / ((T)1 + lr * h2);                \
            } else {                                                         \
                w[i] = pv / ((T)1 + lr * h2);                                \
            }                                                                \
        }                                                                    \
    }                                                                        \
}
OPT(apply_opt_i32, int)
OPT(apply_opt_i64, long)
