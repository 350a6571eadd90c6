// Pieces every ant-colony construction variant shares: the counter-based random stream, the
// choice information tau^alpha * eta^beta, and exact tour lengths.
//
// Compile-time parameters (-D defines, beside TSP_DIST of common.cuh):
//   TSP_K  candidate-list length (cities per list; the host passes min(k, n - 1))
//
// Layouts (beside those of common.cuh):
//   pheromone, choice  float[n * n], row-major, symmetric
//   candidates         int[n * TSP_K]: city i's list at i * TSP_K, nearest first
//   cand_choice        float[n * TSP_K]: choice[i][candidates[i * TSP_K + l]]
#pragma once

#include "common.cuh"

#ifndef TSP_K
#define TSP_K 32
#endif

#define TSP_FULL_MASK 0xffffffffu

// splitmix64's finaliser: a bijection whose output bits all depend on every input bit.
__device__ __forceinline__ u64 tsp_mix(u64 z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// The draw of (seed, iteration, ant, step): a pure function of those four, so a tour does not
// depend on which thread, warp or block builds it, nor on the launch configuration.
__device__ __forceinline__ u64 tsp_hash(u64 seed, u64 iteration, unsigned ant, unsigned step)
{
    return tsp_mix(seed ^ tsp_mix(iteration ^ tsp_mix(((u64)ant << 32) | step)));
}

// Uniform in [0, 1) with 53 random bits.
__device__ __forceinline__ double tsp_uniform(u64 seed, u64 iteration, unsigned ant,
                                              unsigned step)
{
    return (double)(tsp_hash(seed, iteration, ant, step) >> 11) * (1.0 / 9007199254740992.0);
}

// The start city: step index 0xffffffff is reserved for it (steps run 1..n-1).
__device__ __forceinline__ int tsp_start_city(u64 seed, u64 iteration, unsigned ant, int n)
{
    const u64 h = tsp_hash(seed, iteration, ant, 0xffffffffu);
    return (int)(((h >> 32) * (u64)n) >> 32);
}

// tau^alpha * eta^beta with ACOTSP's eta = 1 / (d + 0.1), in double, stored as float.
__device__ __forceinline__ float tsp_choice(float tau, int d, double alpha, double beta)
{
    const double eta = 1.0 / ((double)d + 0.1);
    const double eb = beta == 2.0 ? eta * eta : (beta == 1.0 ? eta : pow(eta, beta));
    const double t = alpha == 1.0 ? (double)tau : pow((double)tau, alpha);
    return (float)(t * eb);
}

// choice[i][j] for every pair (grid-stride over the n * n cells).
extern "C" __global__ void tsp_choice_info(const float* __restrict__ pheromone,
                                           const double2* __restrict__ coords,
                                           const int* __restrict__ matrix, int n, double alpha,
                                           double beta, float* __restrict__ choice)
{
    const size_t cells = (size_t)n * n;
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < cells;
         c += (size_t)gridDim.x * blockDim.x) {
        const int i = (int)(c / n);
        const int j = (int)(c - (size_t)i * n);
        choice[c] = tsp_choice(pheromone[c], tsp_dist(coords, matrix, n, i, j), alpha, beta);
    }
}

// The candidate lists' choice values, contiguous per city, so that a warp reads a city's
// whole list in one transaction.
extern "C" __global__ void tsp_candidate_info(const float* __restrict__ choice,
                                              const int* __restrict__ candidates, int n,
                                              float* __restrict__ cand_choice)
{
    const size_t cells = (size_t)n * TSP_K;
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < cells;
         c += (size_t)gridDim.x * blockDim.x) {
        const size_t i = c / TSP_K;
        cand_choice[c] = choice[i * n + candidates[c]];
    }
}

// Exact lengths of `count` tours (one warp per tour): for tours written by another kernel,
// e.g. after local search.
extern "C" __global__ void tsp_tour_lengths(const int* __restrict__ tours, int n, int count,
                                            const double2* __restrict__ coords,
                                            const int* __restrict__ matrix,
                                            long long* __restrict__ lengths)
{
    const int lane = threadIdx.x & 31;
    const int warps = (gridDim.x * blockDim.x) >> 5;
    for (int t = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; t < count; t += warps) {
        const int* tour = tours + (size_t)t * n;
        i64 sum = 0;
        for (int s = lane; s < n; s += 32) {
            const int next = s + 1 == n ? 0 : s + 1;
            sum += tsp_dist(coords, matrix, n, tour[s], tour[next]);
        }
        for (int off = 16; off > 0; off >>= 1)
            sum += __shfl_down_sync(TSP_FULL_MASK, sum, off);
        if (lane == 0)
            lengths[t] = sum;
    }
}

__device__ __forceinline__ bool tsp_bit(const unsigned* bits, int j)
{
    return (bits[j >> 5] >> (j & 31)) & 1u;
}

__device__ __forceinline__ void tsp_set_bit(unsigned* bits, int j)
{
    bits[j >> 5] |= 1u << (j & 31);
}

// Warp-wide arg-max of (value, city): the larger value, the lower city on ties (the CPU's
// "first in index order"). Every lane returns the winner's city.
__device__ __forceinline__ int tsp_warp_argmax(float value, int city)
{
    for (int off = 16; off > 0; off >>= 1) {
        const float v = __shfl_xor_sync(TSP_FULL_MASK, value, off);
        const int c = __shfl_xor_sync(TSP_FULL_MASK, city, off);
        if (v > value || (v == value && c < city)) {
            value = v;
            city = c;
        }
    }
    return city;
}

// One step's choice among the candidate list for a warp (lane l owns list entries
// l*TSP_C .. l*TSP_C + TSP_C - 1, so the inclusive scan of per-lane sums walks the list in
// its order, as the CPU's roulette does). `weights` are 0 for visited candidates. Returns the
// list index chosen, or -1 when every weight is 0 (then the caller falls back to all cities).
#define TSP_C ((TSP_K + 31) / 32)
__device__ __forceinline__ int tsp_warp_roulette(const float (&weights)[TSP_C], int lane,
                                                 double u)
{
    double mine = 0.0;
#pragma unroll
    for (int c = 0; c < TSP_C; ++c)
        mine += weights[c];
    double inclusive = mine;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const double t = __shfl_up_sync(TSP_FULL_MASK, inclusive, off);
        if (lane >= off)
            inclusive += t;
    }
    const double total = __shfl_sync(TSP_FULL_MASK, inclusive, 31);
    if (!(total > 0.0))
        return -1;
    const double r = u * total;
    const unsigned above = __ballot_sync(TSP_FULL_MASK, inclusive > r);
    int pick = -1;
    if (above != 0) {
        const int owner = __ffs(above) - 1;
        if (lane == owner) {
            double partial = inclusive - mine;
#pragma unroll
            for (int c = 0; c < TSP_C; ++c) {
                if (weights[c] > 0.0f) {
                    pick = lane * TSP_C + c;
                    partial += weights[c];
                    if (partial > r)
                        break;
                }
            }
        }
        pick = __shfl_sync(TSP_FULL_MASK, pick, owner);
    }
    if (pick < 0) {
        // Rounding pushed the wheel past the list's end: the best candidate (ACOTSP's
        // neighbour_choose_best_next).
        float best = 0.0f;
        int index = 0x7fffffff;
#pragma unroll
        for (int c = 0; c < TSP_C; ++c) {
            if (weights[c] > best) {
                best = weights[c];
                index = lane * TSP_C + c;
            }
        }
        pick = tsp_warp_argmax(best, index);
    }
    return pick;
}

// The city in candidate slot `pick` of the warp's list (slot l * TSP_C + c lives in lane l's
// cities[c]), for every lane.
__device__ __forceinline__ int tsp_warp_city(const int (&cities)[TSP_C], int pick, int lane)
{
    int mine = -1;
#pragma unroll
    for (int c = 0; c < TSP_C; ++c)
        if (lane * TSP_C + c == pick)
            mine = cities[c];
    return __shfl_sync(TSP_FULL_MASK, mine, pick / TSP_C);
}
