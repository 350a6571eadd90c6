// HW/SW partitioning, GPTS `separate`: the compaction of the conference version (Hou et al.
// [44]) as separate kernels. One iteration launches
//   hwsw_evaluate  a thread per HWSW_ITEMS consecutive 2-flips: feasibility byte per candidate
//                  (flags[N], global memory),
//   hwsw_count     a block per chunk: feasible candidates of the chunk (counts[chunk]),
//   hwsw_scan      one block: exclusive scan of the chunk counts, total to *count,
//   hwsw_scatter   a block per chunk: block scan of the flags plus the chunk's offset, feasible
//                  indices to out[] in index order,
// then hwsw_tabu and, for the chosen move, hwsw_move (common.cuh). Grids are strided, so any N
// runs with any grid. Tunables: HWSW_THREADS, HWSW_ITEMS, HWSW_ZERO_COPY, flags.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(HWSW_THREADS)
    hwsw_evaluate(HWSW_GRAPH_PARAMS, u64 n, i64 slack, unsigned char* flags)
{
    const HwswGraph g = HWSW_GRAPH;
    const u64 total = n * (n - 1) / 2;
    const u64 chunks = (total + HWSW_CHUNK - 1) / HWSW_CHUNK;
    for (u64 chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
        const u64 first = chunk * HWSW_CHUNK + (u64)threadIdx.x * HWSW_ITEMS;
        const unsigned bits = hwsw_evaluate_items(g, n, total, first, slack);
#pragma unroll
        for (int t = 0; t < HWSW_ITEMS; ++t) flags[first + t] = (bits >> t) & 1u;
    }
}

__device__ __forceinline__ unsigned hwsw_flag_bits(const unsigned char* flags, u64 first)
{
    unsigned bits = 0;
#pragma unroll
    for (int t = 0; t < HWSW_ITEMS; ++t) bits |= (unsigned)flags[first + t] << t;
    return bits;
}

extern "C" __global__ void __launch_bounds__(HWSW_THREADS)
    hwsw_count(const unsigned char* __restrict__ flags, u64 total, u64* counts)
{
    const u64 chunks = (total + HWSW_CHUNK - 1) / HWSW_CHUNK;
    for (u64 chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
        const u64 first = chunk * HWSW_CHUNK + (u64)threadIdx.x * HWSW_ITEMS;
        unsigned sum;
        hwsw_block_exclusive_scan(__popc(hwsw_flag_bits(flags, first)), sum);
        if (threadIdx.x == 0) counts[chunk] = sum;
    }
}

// One block: counts[] becomes its exclusive scan; *count the total.
extern "C" __global__ void __launch_bounds__(HWSW_THREADS)
    hwsw_scan(u64* counts, u64 chunks, u64* count)
{
    __shared__ u64 carry_in;
    __shared__ u64 warp_sums[HWSW_WARPS];
    if (threadIdx.x == 0) carry_in = 0;
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (u64 base = 0; base < chunks; base += HWSW_THREADS) {
        const u64 c = base + threadIdx.x;
        const u64 v = c < chunks ? counts[c] : 0;
        u64 s = v;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const u64 y = __shfl_up_sync(HWSW_FULL, s, o);
            if (lane >= o) s += y;
        }
        if (lane == 31) warp_sums[warp] = s;
        __syncthreads();
        if (warp == 0) {
            u64 t = lane < HWSW_WARPS ? warp_sums[lane] : 0;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                const u64 y = __shfl_up_sync(HWSW_FULL, t, o);
                if (lane >= o) t += y;
            }
            if (lane < HWSW_WARPS) warp_sums[lane] = t;
        }
        __syncthreads();
        const u64 before = carry_in + (warp > 0 ? warp_sums[warp - 1] : 0) + s - v;
        if (c < chunks) counts[c] = before;
        __syncthreads();
        if (threadIdx.x == 0) carry_in += warp_sums[HWSW_WARPS - 1];
        __syncthreads();
    }
    if (threadIdx.x == 0) *count = carry_in;
}

extern "C" __global__ void __launch_bounds__(HWSW_THREADS)
    hwsw_scatter(const unsigned char* __restrict__ flags, u64 total, const u64* __restrict__ offsets,
                 u64* out)
{
    const u64 chunks = (total + HWSW_CHUNK - 1) / HWSW_CHUNK;
    for (u64 chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
        const u64 first = chunk * HWSW_CHUNK + (u64)threadIdx.x * HWSW_ITEMS;
        const unsigned bits = hwsw_flag_bits(flags, first);
        unsigned sum;
        const unsigned local = hwsw_block_exclusive_scan(__popc(bits), sum);
        hwsw_write_feasible(out, offsets[chunk] + local, first, bits);
    }
}
