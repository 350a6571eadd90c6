// Tour construction, data parallelism (Dawson & Stewart's "data" strategy): one ant per warp.
// Lane l reads candidate l of the current city's list (TSP_C entries per lane when TSP_K >
// 32); a warp scan of the weights and a ballot spin the roulette wheel in list order, as the
// CPU's sequential walk does. When every candidate is visited, the warp scans all cities
// (32 per step, coalesced along the choice row) for the best unvisited one: an arg-max whose
// ties go to the lower city, as on the CPU.
//
// Each warp's visited set is a bitset of ceil(n / 32) words: in dynamic shared memory (one per
// warp of the block) when `global_visited` is null, else in that global buffer (m bitsets).
#include "colony.cuh"

extern "C" __global__ void tsp_construct_data(const float* __restrict__ choice,
                                              const float* __restrict__ cand_choice,
                                              const int* __restrict__ candidates,
                                              const double2* __restrict__ coords,
                                              const int* __restrict__ matrix, int n, int m,
                                              u64 seed, u64 iteration,
                                              unsigned* __restrict__ global_visited,
                                              int* __restrict__ tours,
                                              long long* __restrict__ lengths)
{
    extern __shared__ unsigned shared_visited[];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int ant = blockIdx.x * (blockDim.x >> 5) + warp;
    if (ant >= m)
        return; // the whole warp: ants are warp-aligned
    const int words = (n + 31) >> 5;
    unsigned* visited = global_visited != nullptr ? global_visited + (size_t)ant * words
                                                  : shared_visited + (size_t)warp * words;
    for (int w = lane; w < words; w += 32)
        visited[w] = 0u;
    __syncwarp();
    int* tour = tours + (size_t)ant * n;
    const int start = tsp_start_city(seed, iteration, ant, n);
    int current = start;
    if (lane == 0) {
        tsp_set_bit(visited, current);
        tour[0] = current;
    }
    __syncwarp();
    i64 length = 0;
    for (int step = 1; step < n; ++step) {
        float weights[TSP_C];
        int cities[TSP_C];
#pragma unroll
        for (int c = 0; c < TSP_C; ++c) {
            const int l = lane * TSP_C + c;
            weights[c] = 0.0f;
            cities[c] = -1;
            if (l < TSP_K) {
                const int j = candidates[(size_t)current * TSP_K + l];
                const float w = cand_choice[(size_t)current * TSP_K + l];
                cities[c] = j;
                if (!tsp_bit(visited, j))
                    weights[c] = w;
            }
        }
        const int pick = tsp_warp_roulette(weights, lane, tsp_uniform(seed, iteration, ant, step));
        int next;
        if (pick >= 0) {
            next = tsp_warp_city(cities, pick, lane);
        } else {
            const float* row = choice + (size_t)current * n;
            float best = -1.0f;
            int city = 0x7fffffff;
            for (int j = lane; j < n; j += 32) {
                if (!tsp_bit(visited, j)) {
                    const float v = row[j];
                    if (v > best) {
                        best = v;
                        city = j;
                    }
                }
            }
            next = tsp_warp_argmax(best, city);
        }
        if (lane == 0) {
            tsp_set_bit(visited, next);
            tour[step] = next;
            length += tsp_dist(coords, matrix, n, current, next);
        }
        __syncwarp();
        current = next;
    }
    if (lane == 0)
        lengths[ant] = length + tsp_dist(coords, matrix, n, current, start);
}
