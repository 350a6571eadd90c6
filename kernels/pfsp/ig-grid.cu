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
// out and put it back at its best position": with tables of its own it copies the sequence
// without that job into shared memory, builds the heads and tails of that shorter sequence
// (warps 0 and 1, as in ig-block) and evaluates every position (the fused evaluation below
// does without); either way it writes one key
//     makespan << 22 | from << 11 | to
// so that the host's minimum over a walk's keys is the move of least makespan, first by
// `from`, then by `to` (the CPU reference's order). Reinserting at `from` would give back the
// sequence itself, so it is left out: a block's key is a real move even where it is worse
// than the sequence, which the host's tabu steps need (they take the best move allowed,
// improving or not); the descent only takes a key below the current makespan either way.
//
// Tables (the host's `--layout auto` picks the first where two blocks' fit on an SM, else the
// fused evaluation): in shared memory (neither define), or in `tables` at (walk * n + from) *
// 2 (n + 1) IG_MS (IG_GLOBAL_TABLES, `--layout global`), or per walk (IG_GRID_FUSED).
//
// IG_GRID_FUSED ("tables per walk"): no block builds tables of its own. A first
// kernel, pfsp_ig_grid_tables, builds the heads e and tails q of each walk's whole sequence
// once per step (`tables` at walk * 2 (n + 1) IG_MS); block (from, walk) of the second then
// evaluates every reinsertion while it walks the part of the shorter sequence S' that differs
// from S, reading e and q for the rest:
// - warp 0, positions t > from: S' after t is S after t + 1, so the tail there is q(t + 1);
//   only the heads of S' from `from` on are new. It runs them forward from e(from - 1), lane l
//   on its IG_R machines, and beside them the chain of the reinserted job j,
//   C(t, k) = max(C(t, k - 1), e'(t - 1, k)) + p(j, k), and the running maximum of
//   C(t, k) + q(t + 1, k) over k, all three passed to the next lane by shuffles;
// - warp 1, positions t < from: S' before t is S before t, so the head there is e(t - 1); only
//   the tails of S' before `from` are new. It runs them backward from q(from + 1), with the
//   mirrored chain D(t, k) = max(D(t, k + 1), q'(t, k)) + p(j, k) and the running maximum of
//   e(t - 1, k) + D(t, k) (a path leaves the prefix for job j at some machine k);
// - the last lane of each warp holds each position's makespan in turn and keeps the least.
// Where the tables of every block cost 2 (n + 1) m stores and reads each per step (at 800 x 60
// 312 MB, the step's whole time: docs/pfsp-gpu.md), a block now reads n m values of its
// walk's tables, which stay in L2.
#include "ig-common.cuh"

#if IG_WALKS != 1 || IG_SHARED_TIMES
#error "ig-grid runs one move per block and reads the times through L1"
#endif

#define IG_GRID_FIELD_BITS 11

// Block (from, walk)'s move, from a best-insertion key (makespan << IG_POS_BITS | to), as the
// host reads it.
__device__ __forceinline__ void ig_grid_store_key(u64* keys, int walk, int from, u64 key)
{
    const u64 makespan = key >> IG_POS_BITS;
    const u64 to = key & ((1u << IG_POS_BITS) - 1);
    keys[(size_t)walk * PFSP_N + from] =
        (makespan << (2 * IG_GRID_FIELD_BITS)) | ((u64)from << IG_GRID_FIELD_BITS) | to;
}

#if IG_GRID_FUSED

#if IG_GLOBAL_TABLES || IG_THREADS != 64
#error "the fused evaluation runs two warps per block and keeps its tables per walk"
#endif

// Block `walk` (64 threads): heads (warp 0) and tails (warp 1) of the walk's whole sequence.
extern "C" __global__ void __launch_bounds__(64)
pfsp_ig_grid_tables(const int* __restrict__ times, const int* __restrict__ seqs, ctime_t* tables)
{
    const int walk = blockIdx.x;
    const int* seq = seqs + (size_t)walk * PFSP_N;
    ctime_t* e = tables + (size_t)walk * 2 * (PFSP_N + 1) * IG_MS;
    ctime_t* q = e + (PFSP_N + 1) * IG_MS;
    if (IG_TID < 32) ig_heads(times, seq, PFSP_N, e);
    else ig_tails(times, seq, PFSP_N, q);
}

// The least key (makespan << IG_POS_BITS | t) over this warp's reinsertions of `job`; see the
// head of the file. `forward`: warp 0's positions t > from, else warp 1's t < from.
__device__ u64 ig_grid_scan(const int* __restrict__ times, const int* seq, const ctime_t* e,
                            const ctime_t* q, int from, int job, bool forward)
{
    const int lane = IG_TID & 31;
    const int k0 = forward ? lane * IG_R : PFSP_M - 1 - lane * IG_R;
    const bool mine = forward ? k0 < PFSP_M : k0 >= 0;
    ctime_t pj[IG_R], own[IG_R];
#pragma unroll
    for (int r = 0; r < IG_R; ++r) {
        const int k = forward ? k0 + r : k0 - r;
        const bool valid = mine && k >= 0 && k < PFSP_M;
        pj[r] = valid ? (ctime_t)IG_TIME(times + job * PFSP_MP + k) : 0;
        // Forward from the heads of S before `from`; backward from the tails after it.
        if (forward) own[r] = valid && from > 0 ? e[(from - 1) * IG_MS + k] : 0;
        else own[r] = valid ? q[(from + 1) * IG_MS + k] : 0;
    }
    // Positions this warp walks: S' positions from..n-2 forward, from-1..0 backward.
    const int count = forward ? PFSP_N - 1 - from : from;
    ctime_t chain = 0, span = 0;
    u64 best = PFSP_NO_KEY;
    for (int d = 0; d < count + IG_LANES - 1; ++d) {
        const int i = d - lane;
        const bool on = mine && i >= 0 && i < count;
        ctime_t link = __shfl_up_sync(IG_FULL, own[IG_R - 1], 1);
        ctime_t link_chain = __shfl_up_sync(IG_FULL, chain, 1);
        ctime_t link_span = __shfl_up_sync(IG_FULL, span, 1);
        if (lane == 0) link = link_chain = link_span = 0;
        if (on) {
            // Forward: S' position p = from + i holds S[p + 1], and j goes in at t = p + 1.
            // Backward: S' position p = from - 1 - i holds S[p], and j goes in at t = p.
            const int p = forward ? from + i : from - 1 - i;
            const int t = forward ? p + 1 : p;
            const int* row = times + seq[forward ? p + 1 : p] * PFSP_MP;
#pragma unroll
            for (int r = 0; r < IG_R; ++r) {
                const int k = forward ? k0 + r : k0 - r;
                if (k >= 0 && k < PFSP_M) {
                    own[r] = max(own[r], link) + (ctime_t)IG_TIME(row + k);
                    link = own[r];
                    const ctime_t c = max(link_chain, own[r]) + pj[r];
                    link_chain = c;
                    const ctime_t rest = forward ? q[(t + 1) * IG_MS + k]
                                                 : (t > 0 ? e[(t - 1) * IG_MS + k] : (ctime_t)0);
                    link_span = max(link_span, c + rest);
                }
            }
            chain = link_chain;
            span = link_span;
            if (lane == IG_LANES - 1) {
                const u64 key = ((u64)span << IG_POS_BITS) | (u64)t;
                best = key < best ? key : best;
            }
        }
    }
    return best;
}

#endif  // IG_GRID_FUSED

extern "C" __global__ void __launch_bounds__(IG_THREADS)
pfsp_ig_grid_moves(const int* __restrict__ times, const int* __restrict__ seqs, ctime_t* tables,
                   u64* __restrict__ keys)
{
    extern __shared__ __align__(16) unsigned char ig_smem[];
    __shared__ u64 scratch[33];
    const int from = blockIdx.x;
    const int walk = blockIdx.y;
#if IG_GRID_FUSED
    int* seq = reinterpret_cast<int*>(ig_smem);
    const int* global_seq = seqs + (size_t)walk * PFSP_N;
    for (int i = IG_TID; i < PFSP_N; i += IG_THREADS) seq[i] = global_seq[i];
    const ctime_t* e = tables + (size_t)walk * 2 * (PFSP_N + 1) * IG_MS;
    const ctime_t* q = e + (PFSP_N + 1) * IG_MS;
    __syncthreads();
    const int job = seq[from];
    const u64 best = ig_grid_scan(times, seq, e, q, from, job, IG_TID < 32);
    const u64 key = ig_block_min(best, scratch);
#else
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
#endif
    if (IG_TID == 0) ig_grid_store_key(keys, walk, from, key);
}
