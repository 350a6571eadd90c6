// Tour construction, data parallelism with tabu-list compression (Dawson & Stewart's third
// strategy): one ant per warp as in construct-data.cu, but the unvisited cities are kept as a
// compact list (`unvisited[0 .. remaining)`, with each city's index in it in `position`), and
// a visited city is swapped out to the end. "Visited" is then `position[j] >= remaining`, and
// the fall-back scans only the remaining cities instead of all n: the later in the tour, the
// fewer.
//
// Per warp 2 n ints: in dynamic shared memory when `global_scratch` is null, else in that
// global buffer (2 n ints per ant).
#include "colony.cuh"

extern "C" __global__ void tsp_construct_data_compressed(
    const float* __restrict__ choice, const float* __restrict__ cand_choice,
    const int* __restrict__ candidates, const double2* __restrict__ coords,
    const int* __restrict__ matrix, int n, int m, u64 seed, u64 iteration,
    int* __restrict__ global_scratch, int* __restrict__ tours, long long* __restrict__ lengths)
{
    extern __shared__ int shared_scratch[];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int ant = blockIdx.x * (blockDim.x >> 5) + warp;
    if (ant >= m)
        return; // the whole warp: ants are warp-aligned
    int* unvisited = global_scratch != nullptr ? global_scratch + (size_t)ant * 2 * n
                                               : shared_scratch + (size_t)warp * 2 * n;
    int* position = unvisited + n;
    for (int j = lane; j < n; j += 32) {
        unvisited[j] = j;
        position[j] = j;
    }
    __syncwarp();
    int* tour = tours + (size_t)ant * n;
    const int start = tsp_start_city(seed, iteration, ant, n);
    int remaining = n;
    int current = start;
    // Swaps `city` with the last remaining one; lane 0 only.
    auto remove = [&](int city) {
        const int p = position[city];
        const int last = unvisited[remaining - 1];
        unvisited[p] = last;
        position[last] = p;
        unvisited[remaining - 1] = city;
        position[city] = remaining - 1;
    };
    if (lane == 0) {
        remove(current);
        tour[0] = current;
    }
    remaining -= 1;
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
                if (position[j] < remaining)
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
            for (int t = lane; t < remaining; t += 32) {
                const int j = unvisited[t];
                const float v = row[j];
                if (v > best || (v == best && j < city)) {
                    best = v;
                    city = j;
                }
            }
            next = tsp_warp_argmax(best, city);
        }
        if (lane == 0) {
            remove(next);
            tour[step] = next;
            length += tsp_dist(coords, matrix, n, current, next);
        }
        remaining -= 1;
        __syncwarp();
        current = next;
    }
    if (lane == 0)
        lengths[ant] = length + tsp_dist(coords, matrix, n, current, start);
}
