// PFSP `tabu-prefix` (Wu, Wei, Lai & Li): the parent's completion-time table is built once per
// iteration, and each child starts from the row before its first changed position.
//
// Two kernels per tabu-search iteration:
//   pfsp_parent_table: one block, thread k owns machine k and walks the positions along the
//     anti-diagonals of the table (paper Fig. 5): at step d it computes cell (d - k, k) from its
//     own previous cell (the position above) and machine k - 1's cell of the step before (the
//     left neighbour, passed through a double-buffered shared row). The table (n x m, position-
//     major) goes to global memory.
//   pfsp_parent_table_warp: the same walk by one warp, lane l owning machine l of a chunk of 32
//     machines, the left neighbour passed by warp shuffle: no block barrier per step, but the
//     chunks run one after the other. The host takes it for m <= 32 (one chunk): measured on the
//     H100 (prefix/full at 30 x 500: 1.01 against 0.83 with the block kernel), while at m = 35,
//     40 its two chunks made it slower (40 x 900: 1.29 against 1.39).
//   pfsp_tabu_prefix: thread g owns pair g = (i, j) as in tabu-full, but loads row i - 1 of the
//     parent's table and walks only positions i..n-1: (n - i) m cell updates instead of n m.
//     Keys and the tabu/aspiration rule as in tabu-full, so both variants take the CPU's moves.
//
// Shared memory: the table kernel 2 * 8 * m bytes; the evaluation kernel as tabu-full.
// Tunables: threads per block of the evaluation kernel (32..1024, multiple of 32),
// maxrregcount and flags; PFSP_WIDE when completion times may exceed int32.
#include "common.cuh"

extern "C" __global__ void pfsp_parent_table(const int* __restrict__ times, const int* __restrict__ control,
                                             ctime_t* __restrict__ table)
{
    __shared__ ctime_t left[2][PFSP_M];
    const int k = threadIdx.x;
    if (k < PFSP_M) {
        left[0][k] = 0;
        left[1][k] = 0;
    }
    __syncthreads();
    ctime_t above = 0;  // this machine's completion of the previous position
    for (int d = 0; d < PFSP_N + PFSP_M - 1; ++d) {
        const int p = d - k;
        if (k < PFSP_M && p >= 0 && p < PFSP_N) {
            const ctime_t before = k > 0 ? left[(d + 1) & 1][k - 1] : (ctime_t)0;
            above = max(above, before) + (ctime_t)__ldg(times + control[p] * PFSP_MP + k);
            table[p * PFSP_M + k] = above;
            left[d & 1][k] = above;
        }
        __syncthreads();
    }
}

extern "C" __global__ void pfsp_parent_table_warp(const int* __restrict__ times, const int* __restrict__ control,
                                                  ctime_t* __restrict__ table)
{
    // One warp: lane l owns machine c0 + l of the current chunk of 32 machines; its left
    // neighbour's cell of the previous step comes by shuffle, and lane 0 reads machine c0 - 1's
    // cell of the same position from the chunk before (already in the table).
    const int lane = threadIdx.x & 31;
    for (int c0 = 0; c0 < PFSP_M; c0 += 32) {
        const int k = c0 + lane;
        const int width = min(32, PFSP_M - c0);
        ctime_t own = 0;  // this machine's completion of the previous position
        for (int d = 0; d < PFSP_N + width - 1; ++d) {
            const int p = d - lane;
            const bool on = k < PFSP_M && p >= 0 && p < PFSP_N;
            const int t = on ? __ldg(times + __ldg(control + p) * PFSP_MP + k) : 0;
            ctime_t left = __shfl_up_sync(0xffffffffu, own, 1);
            if (lane == 0) left = (c0 > 0 && on) ? table[p * PFSP_M + c0 - 1] : (ctime_t)0;
            if (on) {
                own = max(own, left) + (ctime_t)t;
                table[p * PFSP_M + k] = own;
            }
        }
        __syncwarp();
    }
}

extern "C" __global__ void pfsp_tabu_prefix(const int* __restrict__ times, const int* __restrict__ control,
                                            const ctime_t* __restrict__ table, i64 best_value, int slot,
                                            u64* keys)
{
    __shared__ int perm[PFSP_N];
    __shared__ unsigned char tabu[1024];
    __shared__ u64 scratch[64];
    pfsp_tabu_prologue(control, slot, keys, perm, tabu);
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    u64 any = PFSP_NO_KEY, admissible = PFSP_NO_KEY;
    if (k < PFSP_PAIRS) {
        int i, j;
        pfsp_unrank_pair(k, i, j);
        ctime_t c[PFSP_M];
        if (i > 0) {
            const ctime_t* row = table + (i - 1) * PFSP_M;
#pragma unroll
            for (int q = 0; q < PFSP_M; ++q) c[q] = __ldg(row + q);
        } else {
#pragma unroll
            for (int q = 0; q < PFSP_M; ++q) c[q] = 0;
        }
        pfsp_advance(c, times, perm[j]);
        for (int p = i + 1; p < PFSP_N; ++p) {
            pfsp_advance(c, times, p == j ? perm[i] : perm[p]);
        }
        const i64 value = (i64)c[PFSP_M - 1];
        any = pfsp_key(value, k);
        if (!tabu[threadIdx.x] || value < best_value) admissible = any;
    }
    pfsp_block_min2_atomic(admissible, any, scratch, keys + 2 * slot);
}
