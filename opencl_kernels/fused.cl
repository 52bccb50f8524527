/* fused.cl -- epilogues of the fusion pass's ops (issue 16): _FusedMatMul's
 * bias and Relu applied in one pass over the clBLAST GEMM's output, in
 * place (the Relu as the u_relu kernel: -0 gives +0, NaN stays NaN). */
__kernel void bias_relu(__global T *y, __global const T *bias, long n,
                        long cols, int relu)
{
    long i = get_global_id(0);
    if (i >= n) return;
    T v = y[i] + bias[i % cols];
    y[i] = (relu && !(v > (T)0) && !isnan(v)) ? (T)0 : v;
}
