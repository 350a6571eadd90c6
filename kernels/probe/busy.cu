// Measurement probe: a compute-bound kernel whose run time scales with `iters`.
//
// Thread t owns x[t] and nothing else; the two dependent FMA chains keep the SM pipes busy
// without touching memory inside the loop, so the time is stable from run to run and the
// kernel is a fair subject for checking the repeatability of time and power measurements.
extern "C" __global__ void busy(float* x, int n, int iters)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) {
        return;
    }
    float a = x[t];
    float b = 1.0001f;
    const float c = 0.9999f;
    for (int i = 0; i < iters; ++i) {
        a = fmaf(a, b, c);
        b = fmaf(b, c, a * 1e-7f);
    }
    x[t] = a + b;
}
