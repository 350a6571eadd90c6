// Dynamic-parallelism probe: each parent thread launches a child grid that fills its chunk.
//
// Parent thread p owns chunk p of `out` (CHUNK elements) and hands it to one child grid;
// each child thread writes one element. It checks the relocatable compile + cuLink with
// libcudadevrt path that the `2opt-dyn` QAP variant needs.
#ifndef CHUNK
#define CHUNK 64
#endif

extern "C" __global__ void fill_chunk(int* out, int base)
{
    int i = threadIdx.x;
    out[base + i] = base + i;
}

extern "C" __global__ void spawn_children(int* out, int parents)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= parents) {
        return;
    }
    fill_chunk<<<1, CHUNK>>>(out, p * CHUNK);
}
