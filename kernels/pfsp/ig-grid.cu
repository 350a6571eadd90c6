// PFSP `ig-grid`: the insertion neighbourhood of a few iterated-greedy walks, one block per
// (job position, walk). The walks themselves (destruction, reconstruction, acceptance) run on
// the host (solvers/src/pfsp/ig_grid.rs); each step of their local search asks this kernel for
// every walk's best insertion move and takes it if it lowers the makespan (best improvement).
//
// Why a grid per walk: at 800 x 60 one ig-block walk per SM makes fewer iterations than a CPU
// core (two warps cannot hide the wavefront's latency), and depth per walk is what the large
// instances reward. Here the n removals of one walk's neighbourhood run side by side on the
// whole chip, so one local-search step costs about one insertion's latency instead of n.
//
// Block (from, walk) owns the move "take the job at position `from` of walk `walk`'s sequence
// out and put it back at its best position": it copies the sequence without that job into
// shared memory, builds the heads and tails of that shorter sequence (warps 0 and 1, as in
// ig-block), evaluates every position and writes one key
//     makespan << 22 | from << 11 | to
// so that the host's minimum over a walk's keys is the move of least makespan, first by
// `from`, then by `to` (the CPU reference's order). Reinserting at `from` would give back the
// sequence itself, so it is left out: a block's key is a real move even where it is worse
// than the sequence, which the host's tabu steps need (they take the best move allowed,
// improving or not); the descent only takes a key below the current makespan either way.
//
// Tables: in shared memory where two blocks fit on an SM (IG_GLOBAL_TABLES 0), else in
// `tables` at (walk * n + from) * 2 (n + 1) IG_MS.
#include "ig-common.cuh"

#if IG_WALKS != 1 || IG_SHARED_TIMES
#error "ig-grid runs one move per block and reads the times through L1"
#endif

#define IG_GRID_FIELD_BITS 11

extern "C" __global__ void __launch_bounds__(IG_THREADS)
pfsp_ig_grid_moves(const int* __restrict__ times, const int* __restrict__ seqs, ctime_t* tables,
                   u64* __restrict__ keys)
{
    extern __shared__ __align__(16) unsigned char ig_smem[];
    __shared__ u64 scratch[33];
    const int from = blockIdx.x;
    const int walk = blockIdx.y;
    IgShared s;
#if IG_GLOBAL_TABLES
    s.e = tables + ((size_t)walk * PFSP_N + from) * 2 * (PFSP_N + 1) * IG_MS;
    s.q = s.e + (PFSP_N + 1) * IG_MS;
    s.seq = reinterpret_cast<int*>(ig_smem);
#else
    s.e = reinterpret_cast<ctime_t*>(ig_smem);
    s.q = s.e + (PFSP_N + 1) * IG_MS;
    s.seq = reinterpret_cast<int*>(s.q + (PFSP_N + 1) * IG_MS);
#endif
    const int* seq = seqs + (size_t)walk * PFSP_N;
    for (int i = IG_TID; i < PFSP_N - 1; i += IG_THREADS) s.seq[i] = seq[i < from ? i : i + 1];
    const int job = seq[from];
    // ig_best_insertion synchronises before it reads s.seq.
    const u64 key = ig_best_insertion(times, s, PFSP_N - 1, job, scratch, from);
    if (IG_TID == 0) {
        const u64 makespan = key >> IG_POS_BITS;
        const u64 to = key & ((1u << IG_POS_BITS) - 1);
        keys[(size_t)walk * PFSP_N + from] =
            (makespan << (2 * IG_GRID_FIELD_BITS)) | ((u64)from << IG_GRID_FIELD_BITS) | to;
    }
}
