// HW/SW partitioning, GPTS `fused`: evaluation and single-kernel compaction in one kernel
// (section 3.3 of Hou et al.). Persistent blocks claim chunks of HWSW_THREADS * HWSW_ITEMS
// 2-flips in order; each thread evaluates its HWSW_ITEMS consecutive candidates in registers
// (incremental, from w, dh, x and the upper adjacency), the block scans their feasibility and
// chains to the previous chunks by decoupled look-back (common.cuh); only the indices of the
// feasible candidates reach global memory. Then hwsw_tabu and hwsw_move.
// Tunables: HWSW_THREADS, HWSW_ITEMS, HWSW_ZERO_COPY, flags.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(HWSW_THREADS)
    hwsw_fused(HWSW_GRAPH_PARAMS, u64 n, i64 slack, u64* out, u64* count, u64* status,
               unsigned* chunk_counter, unsigned epoch)
{
    const HwswGraph g = HWSW_GRAPH;
    const u64 total = n * (n - 1) / 2;
    hwsw_compact_chunks(total, out, count, status, chunk_counter, epoch,
                        [&](u64 first) { return hwsw_evaluate_items(g, n, total, first, slack); });
}
