// Tour construction, task parallelism (Dawson & Stewart's "task" strategy): one ant per
// thread, the random-proportional rule of the CPU Ant System (solvers::tsp::ant_system)
// walked sequentially over the candidate list, and the fall-back to the best unvisited city
// over all cities when every candidate is visited.
//
// Each ant's visited set is a bitset of ceil(n / 32) words: in dynamic shared memory
// (blockDim.x bitsets) when `global_visited` is null, else in that global buffer (m bitsets),
// which the host chooses when the block's bitsets do not fit in shared memory.
#include "colony.cuh"

extern "C" __global__ void tsp_construct_task(const float* __restrict__ choice,
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
    const int ant = blockIdx.x * blockDim.x + threadIdx.x;
    if (ant >= m)
        return;
    const int words = (n + 31) >> 5;
    unsigned* visited = global_visited != nullptr ? global_visited + (size_t)ant * words
                                                  : shared_visited + (size_t)threadIdx.x * words;
    for (int w = 0; w < words; ++w)
        visited[w] = 0u;
    int* tour = tours + (size_t)ant * n;
    const int start = tsp_start_city(seed, iteration, ant, n);
    int current = start;
    tsp_set_bit(visited, current);
    tour[0] = current;
    i64 length = 0;
    for (int step = 1; step < n; ++step) {
        const int* list = candidates + (size_t)current * TSP_K;
        const float* weight = cand_choice + (size_t)current * TSP_K;
        double sum = 0.0;
#pragma unroll 8
        for (int l = 0; l < TSP_K; ++l) {
            if (!tsp_bit(visited, list[l]))
                sum += weight[l];
        }
        int next = -1;
        if (sum > 0.0) {
            const double r = tsp_uniform(seed, iteration, ant, step) * sum;
            double partial = 0.0;
            float best = 0.0f;
            int best_city = -1;
            for (int l = 0; l < TSP_K; ++l) {
                const int j = list[l];
                if (tsp_bit(visited, j))
                    continue;
                const float w = weight[l];
                partial += w;
                if (partial > r) {
                    next = j;
                    break;
                }
                if (w > best) {
                    best = w;
                    best_city = j;
                }
            }
            // Rounding pushed the wheel past the end: the best candidate (all were seen).
            if (next < 0)
                next = best_city;
        }
        if (next < 0) {
            const float* row = choice + (size_t)current * n;
            float best = -1.0f;
            for (int j = 0; j < n; ++j) {
                if (!tsp_bit(visited, j) && row[j] > best) {
                    best = row[j];
                    next = j;
                }
            }
        }
        tsp_set_bit(visited, next);
        tour[step] = next;
        length += tsp_dist(coords, matrix, n, current, next);
        current = next;
    }
    lengths[ant] = length + tsp_dist(coords, matrix, n, current, start);
}
