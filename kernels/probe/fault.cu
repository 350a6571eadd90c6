// Test-only kernel that faults on purpose: every thread writes far outside its buffer.
//
// It exists so that the fault-isolation path (a crashed measurement worker is reported and
// replaced, the campaign goes on) is exercised on a real GPU. Never used for tuning.
extern "C" __global__ void write_out_of_bounds(int* x, long long offset)
{
    x[offset + threadIdx.x] = 1;
}
