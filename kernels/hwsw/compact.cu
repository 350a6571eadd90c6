// HW/SW partitioning, GPTS `compact`: the candidates are evaluated by one kernel
// (hwsw_evaluate, a feasibility byte per candidate in global memory, as in `separate`) and
// compacted by a single kernel (section 3.2 of Hou et al.): persistent blocks claim chunks of
// HWSW_THREADS * HWSW_ITEMS candidates in order, scan them in the block, and chain the chunks
// with a decoupled look-back over a status word per chunk (common.cuh), so the scan and the
// scatter take one pass over the flags instead of two. Then hwsw_tabu and hwsw_move.
// Tunables: HWSW_THREADS, HWSW_ITEMS, HWSW_ZERO_COPY, flags.
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

extern "C" __global__ void __launch_bounds__(HWSW_THREADS)
    hwsw_compact(const unsigned char* __restrict__ flags, u64 total, u64* out, u64* count,
                 u64* status, unsigned* chunk_counter, unsigned epoch)
{
    hwsw_compact_chunks(total, out, count, status, chunk_counter, epoch, [&](u64 first) {
        unsigned bits = 0;
#pragma unroll
        for (int t = 0; t < HWSW_ITEMS; ++t) bits |= (unsigned)flags[first + t] << t;
        return bits;
    });
}
