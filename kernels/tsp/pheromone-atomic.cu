// Pheromone update by atomic scatter: evaporation (evaporate.cuh), then one thread per edge
// of each deposited tour adds weight / length to both directions with atomicAdd. The order of
// the additions, and so the last bits of a cell, vary from run to run.
#include "evaporate.cuh"

// Tours t < count of `tours` (layout of common.cuh) deposit weight / lengths[t] on each of
// their n edges, in both directions (the matrix stays symmetric).
extern "C" __global__ void tsp_deposit_atomic(float* __restrict__ pheromone, int n,
                                              const int* __restrict__ tours,
                                              const long long* __restrict__ lengths, int count,
                                              double weight)
{
    const long long edges = (long long)count * n;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < edges;
         e += (long long)gridDim.x * blockDim.x) {
        const long long t = e / n;
        const int s = (int)(e - t * n);
        const int* tour = tours + t * n;
        const int a = tour[s];
        const int b = tour[s + 1 == n ? 0 : s + 1];
        const long long length = lengths[t] > 0 ? lengths[t] : 1;
        const float amount = (float)(weight / (double)length);
        atomicAdd(pheromone + (size_t)a * n + b, amount);
        atomicAdd(pheromone + (size_t)b * n + a, amount);
    }
}
