// Pheromone update without atomics: evaporation (evaporate.cuh), then a gather per city.
//
// Each city appears once in each tour, so tour t gives city i exactly two edges: to its
// successor and to its predecessor. `tsp_edges_by_city` writes them city-major (succ[i * count
// + t], pred[i * count + t]; every cell is written by exactly one thread), and
// `tsp_deposit_gather` lets one warp own row i of the matrix: it walks the tours 32 at a time,
// groups lanes that add to the same cell (__match_any_sync) and lets one lane per group add
// the group's sum. Only the owner warp writes a row, so no two writes race, and the result is
// the same on every run.
#include "evaporate.cuh"

extern "C" __global__ void tsp_edges_by_city(const int* __restrict__ tours, int n, int count,
                                             int* __restrict__ succ, int* __restrict__ pred)
{
    const long long edges = (long long)count * n;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < edges;
         e += (long long)gridDim.x * blockDim.x) {
        const long long t = e / n;
        const int s = (int)(e - t * n);
        const int* tour = tours + t * n;
        const int a = tour[s];
        const int b = tour[s + 1 == n ? 0 : s + 1];
        succ[(size_t)a * count + t] = b;
        pred[(size_t)b * count + t] = a;
    }
}

#define GATHER_MAX_WARPS 32

extern "C" __global__ void tsp_deposit_gather(float* __restrict__ pheromone, int n,
                                              const int* __restrict__ succ,
                                              const int* __restrict__ pred,
                                              const long long* __restrict__ lengths, int count,
                                              double weight)
{
    __shared__ float amounts[GATHER_MAX_WARPS][32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int warps = (gridDim.x * blockDim.x) >> 5;
    for (int i = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < n; i += warps) {
        float* row = pheromone + (size_t)i * n;
        for (int t0 = 0; t0 < count; t0 += 32) {
            const int t = t0 + lane;
            const bool active = t < count;
            float amount = 0.0f;
            if (active) {
                const long long length = lengths[t] > 0 ? lengths[t] : 1;
                amount = (float)(weight / (double)length);
            }
            amounts[warp][lane] = amount;
            __syncwarp();
            for (int side = 0; side < 2; ++side) {
                const int j = active ? (side == 0 ? succ : pred)[(size_t)i * count + t] : -1;
                const unsigned group = __match_any_sync(0xffffffffu, j);
                if (active && lane == __ffs(group) - 1) {
                    float sum = 0.0f;
                    for (unsigned g = group; g != 0; g &= g - 1)
                        sum += amounts[warp][__ffs(g) - 1];
                    row[j] += sum;
                }
                __syncwarp();
            }
        }
    }
}
