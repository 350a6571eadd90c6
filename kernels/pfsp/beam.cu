// PFSP `beam`: one level of a bidirectional beam search (the CPU reference and the rules:
// solvers/src/pfsp/beam.rs). The host drives the levels; per level it runs
//   pfsp_beam_bounds     both directions' bound sums (the host picks the level's direction),
//   pfsp_beam_keys       every child's key in the chosen direction,
//   pfsp_beam_histogram  eight times, one byte of the key each: a radix select of the
//                        width-th smallest key (keys are unique, so "every key up to it" is
//                        exactly the next beam),
//   pfsp_beam_count      how many keys each tile of BEAM_TILE children keeps,
//   pfsp_beam_select     the kept children, in index order, written as the next beam,
// and at the end pfsp_beam_trace turns final nodes back into sequences.
//
// Child c = p * n + j of beam node p places job j; its thread owns it in every kernel. A node's
// state is front[k] (when its prefix leaves machine k), tail[k] (how long its suffix takes
// from machine k on), remaining[k] (the unplaced jobs' work on machine k), its idle time and a
// bitset of placed jobs; rows of nodes are node-major (node * PFSP_M + k), so the threads of
// one parent read the same row (a broadcast).
#include "common.cuh"

#define BEAM_WORDS ((PFSP_N + 31) / 32)
#define BEAM_BOUND_SCALE 10
#define BEAM_TILE 1024
#define BEAM_NO_KEY 0xffffffffffffffffull

// The bound of placing `job` on node `p` in one direction, and the idle time it adds; with
// `out` the node's new front (forward) or tail (backward).
__device__ __forceinline__ i64 beam_child(const int* __restrict__ times, const ctime_t* __restrict__ front,
                                          const ctime_t* __restrict__ tail,
                                          const ctime_t* __restrict__ remaining, size_t p, int job,
                                          bool forward, i64& idle, ctime_t* out)
{
    const int* row = times + job * PFSP_MP;
    const ctime_t* mine = (forward ? front : tail) + p * PFSP_M;
    const ctime_t* other = (forward ? tail : front) + p * PFSP_M;
    const ctime_t* left = remaining + p * PFSP_M;
    i64 bound = 0;
    ctime_t previous = 0;
    idle = 0;
#pragma unroll
    for (int step = 0; step < PFSP_M; ++step) {
        const int k = forward ? step : PFSP_M - 1 - step;
        const ctime_t before = mine[k];
        const ctime_t start = max(previous, before);
        if (step > 0) idle += (i64)(start - before);
        const ctime_t t = (ctime_t)__ldg(row + k);
        previous = start + t;
        if (out) out[k] = previous;
        const i64 b = (i64)previous + (i64)left[k] - (i64)t + (i64)other[k];
        bound = b > bound ? b : bound;
    }
    return bound;
}

__device__ __forceinline__ bool beam_placed(const unsigned* __restrict__ placed, size_t p, int job)
{
    return (placed[p * BEAM_WORDS + (job >> 5)] >> (job & 31)) & 1u;
}

__device__ __forceinline__ u64 beam_block_sum(u64 v, u64* scratch)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = 0;
    if (warp == 0) {
        const int warps = (blockDim.x + 31) >> 5;
        v = lane < warps ? scratch[lane] : 0;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    }
    return v;
}

// sums[0] += forward bounds, sums[1] += backward bounds, over the unplaced children.
extern "C" __global__ void pfsp_beam_bounds(const int* __restrict__ times, const ctime_t* __restrict__ front,
                                            const ctime_t* __restrict__ tail,
                                            const ctime_t* __restrict__ remaining,
                                            const unsigned* __restrict__ placed, int nodes, u64* sums)
{
    __shared__ u64 scratch[2][32];
    const size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    u64 f = 0, b = 0;
    if (c < (size_t)nodes * PFSP_N) {
        const size_t p = c / PFSP_N;
        const int job = (int)(c % PFSP_N);
        if (!beam_placed(placed, p, job)) {
            i64 idle;
            f = (u64)beam_child(times, front, tail, remaining, p, job, true, idle, nullptr);
            b = (u64)beam_child(times, front, tail, remaining, p, job, false, idle, nullptr);
        }
    }
    f = beam_block_sum(f, scratch[0]);
    b = beam_block_sum(b, scratch[1]);
    if (threadIdx.x == 0) {
        atomicAdd(sums, f);
        atomicAdd(sums + 1, b);
    }
}

// keys[c]: guide << index_bits | c, or BEAM_NO_KEY for a placed job (index_bits: enough for
// every child of the widest level; the host checks the guide fits beside it). At the last level
// the guide is the bound alone (the makespan).
extern "C" __global__ void pfsp_beam_keys(const int* __restrict__ times, const ctime_t* __restrict__ front,
                                          const ctime_t* __restrict__ tail,
                                          const ctime_t* __restrict__ remaining,
                                          const i64* __restrict__ idle, const unsigned* __restrict__ placed,
                                          int nodes, int forward, int last, int idle_weight, int index_bits,
                                          u64* keys)
{
    const size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= (size_t)nodes * PFSP_N) return;
    const size_t p = c / PFSP_N;
    const int job = (int)(c % PFSP_N);
    if (beam_placed(placed, p, job)) {
        keys[c] = BEAM_NO_KEY;
        return;
    }
    i64 added;
    const i64 bound = beam_child(times, front, tail, remaining, p, job, forward != 0, added, nullptr);
    const i64 guide = last ? bound : BEAM_BOUND_SCALE * bound + (i64)idle_weight * (idle[p] + added);
    keys[c] = ((u64)guide << index_bits) | (u64)c;
}

// hist[d] += keys k with (k & mask) == prefix and byte `shift / 8` of k equal to d.
extern "C" __global__ void pfsp_beam_histogram(const u64* __restrict__ keys, size_t count, u64 prefix, u64 mask,
                                               int shift, unsigned* hist)
{
    __shared__ unsigned local[256];
    for (int d = threadIdx.x; d < 256; d += blockDim.x) local[d] = 0;
    __syncthreads();
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < count;
         c += (size_t)gridDim.x * blockDim.x) {
        const u64 k = keys[c];
        if (k != BEAM_NO_KEY && (k & mask) == prefix) atomicAdd(&local[(k >> shift) & 0xff], 1u);
    }
    __syncthreads();
    for (int d = threadIdx.x; d < 256; d += blockDim.x)
        if (local[d]) atomicAdd(&hist[d], local[d]);
}

// tile_counts[t] = keys of tile t (BEAM_TILE children) at most `threshold`.
extern "C" __global__ void __launch_bounds__(BEAM_TILE) pfsp_beam_count(const u64* __restrict__ keys, size_t count, u64 threshold,
                                           unsigned* tile_counts)
{
    __shared__ unsigned total;
    if (threadIdx.x == 0) total = 0;
    __syncthreads();
    const size_t c = (size_t)blockIdx.x * BEAM_TILE + threadIdx.x;
    const bool kept = c < count && keys[c] <= threshold;
    const unsigned votes = __popc(__ballot_sync(0xffffffffu, kept));
    if ((threadIdx.x & 31) == 0 && votes) atomicAdd(&total, votes);
    __syncthreads();
    if (threadIdx.x == 0) tile_counts[blockIdx.x] = total;
}

// Launched with BEAM_TILE threads, so bounded to 64 registers a thread (a new row of m
// values stays in registers up to m = 20 or so, and spills to local memory beyond).
// The kept children of tile blockIdx.x (BEAM_TILE threads) become nodes offsets[tile] + rank
// of the next beam; the history of `level` records each one's parent and job (job, or ~job
// for a backward placement), node_keys its key.
extern "C" __global__ void __launch_bounds__(BEAM_TILE) pfsp_beam_select(const int* __restrict__ times, const u64* __restrict__ keys,
                                            size_t count, u64 threshold, const unsigned* __restrict__ offsets,
                                            int forward, const ctime_t* __restrict__ front,
                                            const ctime_t* __restrict__ tail,
                                            const ctime_t* __restrict__ remaining,
                                            const i64* __restrict__ idle, const unsigned* __restrict__ placed,
                                            ctime_t* next_front, ctime_t* next_tail, ctime_t* next_remaining,
                                            i64* next_idle, unsigned* next_placed, unsigned* history_parent,
                                            int* history_job, u64* node_keys)
{
    __shared__ unsigned warp_base[BEAM_TILE / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const size_t c = (size_t)blockIdx.x * BEAM_TILE + threadIdx.x;
    const bool kept = c < count && keys[c] <= threshold;
    const unsigned ballot = __ballot_sync(0xffffffffu, kept);
    if (lane == 0) warp_base[warp] = __popc(ballot);
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned run = 0;
        for (int w = 0; w < BEAM_TILE / 32; ++w) {
            const unsigned v = warp_base[w];
            warp_base[w] = run;
            run += v;
        }
    }
    __syncthreads();
    if (!kept) return;
    const size_t q = offsets[blockIdx.x] + warp_base[warp] + __popc(ballot & ((1u << lane) - 1));
    const size_t p = c / PFSP_N;
    const int job = (int)(c % PFSP_N);
    ctime_t row[PFSP_M];
    i64 added;
    beam_child(times, front, tail, remaining, p, job, forward != 0, added, row);
    const int* t = times + job * PFSP_MP;
#pragma unroll
    for (int k = 0; k < PFSP_M; ++k) {
        next_front[q * PFSP_M + k] = forward ? row[k] : front[p * PFSP_M + k];
        next_tail[q * PFSP_M + k] = forward ? tail[p * PFSP_M + k] : row[k];
        next_remaining[q * PFSP_M + k] = remaining[p * PFSP_M + k] - (ctime_t)__ldg(t + k);
    }
    next_idle[q] = idle[p] + added;
    for (int w = 0; w < BEAM_WORDS; ++w) {
        unsigned bits = placed[p * BEAM_WORDS + w];
        if (w == (job >> 5)) bits |= 1u << (job & 31);
        next_placed[q * BEAM_WORDS + w] = bits;
    }
    history_parent[q] = (unsigned)p;
    history_job[q] = forward ? job : ~job;
    node_keys[q] = keys[c];
}

// Sequence of final node nodes[i], walked back through the n levels of history (level l's
// entries at l * stride); position[l] is where level l's job goes (the host knows each level's
// direction).
extern "C" __global__ void pfsp_beam_trace(const unsigned* __restrict__ history_parent,
                                           const int* __restrict__ history_job, size_t stride,
                                           const int* __restrict__ position, const unsigned* __restrict__ nodes,
                                           int count, int* sequences)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    size_t node = nodes[i];
    for (int level = PFSP_N - 1; level >= 0; --level) {
        const int e = history_job[level * stride + node];
        sequences[(size_t)i * PFSP_N + position[level]] = e >= 0 ? e : ~e;
        node = history_parent[level * stride + node];
    }
}
