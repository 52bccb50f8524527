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
