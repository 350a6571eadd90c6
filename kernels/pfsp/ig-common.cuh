// The iterated-greedy pieces ig-block.cu and ig-grid.cu share: the configuration macros (block
// size, where the tables and times live, walks per block), the counter-based RNG, and a
// block's best insertion of a job into a sequence with Taillard's acceleration (heads and tails
// along anti-diagonals by warps 0 and 1, every position evaluated in O(m) by the block, the
// first best position kept). See ig-block.cu for the layouts.
#pragma once
#include "common.cuh"

#ifndef IG_THREADS
#error "IG_THREADS (threads per block) must be defined"
#endif

#ifndef IG_GLOBAL_TABLES
#define IG_GLOBAL_TABLES 0
#endif

// With IG_SHARED_TIMES (only with global tables, where shared memory is otherwise nearly
// unused) the block first copies the processing times into shared memory: every wavefront step
// reads a time of another job, and from L2 that latency, not the arithmetic, set the pace.
#ifndef IG_SHARED_TIMES
#define IG_SHARED_TIMES 0
#endif
#if IG_SHARED_TIMES && !IG_GLOBAL_TABLES
#error "IG_SHARED_TIMES needs IG_GLOBAL_TABLES"
#endif
#if IG_SHARED_TIMES
#define IG_TIME(p) (*(p))
#else
#define IG_TIME(p) __ldg(p)
#endif

// IG_WALKS walks per block (default 1), each of IG_THREADS threads, only with global tables:
// the walks of a block share one staged copy of the times (IG_SHARED_TIMES), so an SM that
// holds one block runs IG_WALKS walks' warps instead of one walk's two, where a single walk
// leaves the schedulers idle (800 x 60: 2 warps per SM). A walk's threads synchronise on
// their own named barrier (1 + the walk's index in the block): the walks' local searches
// end at different times, so a block-wide barrier would deadlock.
#ifndef IG_WALKS
#define IG_WALKS 1
#endif
#if IG_WALKS < 1 || IG_WALKS > 8
#error "IG_WALKS must be in 1..=8"
#endif
#if IG_WALKS > 1 && !IG_GLOBAL_TABLES
#error "IG_WALKS > 1 needs IG_GLOBAL_TABLES"
#endif
// With one walk per block these are the expressions the kernel always had (its PTX is
// unchanged by IG_WALKS).
#if IG_WALKS == 1
#define IG_TID threadIdx.x
#define IG_GROUP 0
#else
#define IG_TID ((int)threadIdx.x % IG_THREADS)
#define IG_GROUP ((int)threadIdx.x / IG_THREADS)
#endif

// The barrier of this thread's walk.
__device__ __forceinline__ void ig_sync()
{
#if IG_WALKS == 1
    __syncthreads();
#else
    asm volatile("bar.sync %0, %1;" ::"r"(1 + IG_GROUP), "r"(IG_THREADS) : "memory");
#endif
}

#define IG_MS (PFSP_M | 1)
#define IG_FULL 0xffffffffu
#define IG_POS_BITS 16

__device__ __forceinline__ u64 ig_hash(u64 seed, u64 stream, u64 counter)
{
    u64 z = seed ^ (stream * 0x9E3779B97F4A7C15ull) ^ (counter * 0xD1B54A32D192ED03ull);
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

struct IgShared {
    ctime_t* e;     // heads: (n + 1) x IG_MS
    ctime_t* q;     // tails: (n + 1) x IG_MS, row L zero
    int* seq;       // the sequence being built
    int* tmp;       // copy for shifting
    int* cur;       // current sequence of the walk
    int* order;     // local-search order
};

// Lane l owns IG_R consecutive machines (all of m in one pass of the wavefront, so no lane
// waits on a table entry another pass wrote: at m = 60 that entry would be an L2 round trip
// per step where the tables live in global memory). At step d it handles job d - l: the lane
// to its left passes the completion on its last machine of that job through a shuffle.
#define IG_R ((PFSP_M + 31) / 32)
#define IG_LANES ((PFSP_M + IG_R - 1) / IG_R)

// Heads of seq[0..L) into e (warp-wide).
__device__ void ig_heads(const int* __restrict__ times, const int* seq, int L, ctime_t* e)
{
    const int lane = IG_TID & 31;
    const int k0 = lane * IG_R;
    ctime_t own[IG_R];  // e of the previous job on this lane's machines
#pragma unroll
    for (int j = 0; j < IG_R; ++j) own[j] = 0;
    for (int d = 0; d < L + IG_LANES - 1; ++d) {
        const int p = d - lane;
        const bool on = k0 < PFSP_M && p >= 0 && p < L;
        ctime_t left = __shfl_up_sync(IG_FULL, own[IG_R - 1], 1);
        if (lane == 0) left = 0;
        if (on) {
            const int* row = times + seq[p] * PFSP_MP;
#pragma unroll
            for (int j = 0; j < IG_R; ++j) {
                const int k = k0 + j;
                if (k < PFSP_M) {
                    own[j] = max(own[j], left) + (ctime_t)IG_TIME(row + k);
                    left = own[j];
                    e[p * IG_MS + k] = own[j];
                }
            }
        }
    }
    __syncwarp();
}

// Tails of seq[0..L) into q, rows 0..L (row L zero); lane l owns machines m - 1 - l IG_R
// downwards.
__device__ void ig_tails(const int* __restrict__ times, const int* seq, int L, ctime_t* q)
{
    const int lane = IG_TID & 31;
    for (int k = lane; k < PFSP_M; k += 32) q[L * IG_MS + k] = 0;
    const int k0 = PFSP_M - 1 - lane * IG_R;
    ctime_t own[IG_R];  // q of the next job on this lane's machines
#pragma unroll
    for (int j = 0; j < IG_R; ++j) own[j] = 0;
    for (int d = 0; d < L + IG_LANES - 1; ++d) {
        const int i = L - 1 - (d - lane);
        const bool on = k0 >= 0 && d - lane >= 0 && i >= 0;
        ctime_t right = __shfl_up_sync(IG_FULL, own[IG_R - 1], 1);
        if (lane == 0) right = 0;
        if (on) {
            const int* row = times + seq[i] * PFSP_MP;
#pragma unroll
            for (int j = 0; j < IG_R; ++j) {
                const int k = k0 - j;
                if (k >= 0) {
                    own[j] = max(own[j], right) + (ctime_t)IG_TIME(row + k);
                    right = own[j];
                    q[i * IG_MS + k] = own[j];
                }
            }
        }
    }
    __syncwarp();
}

__device__ __forceinline__ u64 ig_block_min(u64 v, u64* scratch)
{
    const int lane = IG_TID & 31, warp = IG_TID >> 5;
    v = warp_min_u64(v);
    ig_sync();  // scratch may still be read by a previous reduction
    if (lane == 0) scratch[warp] = v;
    ig_sync();
    if (warp == 0) {
        v = lane < IG_THREADS / 32 ? scratch[lane] : PFSP_NO_KEY;
        v = warp_min_u64(v);
        if (lane == 0) scratch[32] = v;
    }
    ig_sync();
    return scratch[32];
}

// Best position (first on ties) to insert `job` into seq[0..L), and the makespan there.
// `skip`: a position not to consider (ig-grid's tabu steps must not put a job back where it
// was); -1 considers every position.
__device__ u64 ig_best_insertion(const int* __restrict__ times, IgShared& s, int L, int job, u64* scratch,
                                 int skip = -1)
{
    const int warp = IG_TID >> 5;
    ig_sync();  // seq is final
    if (warp == 0) ig_heads(times, s.seq, L, s.e);
    if (warp == 1) ig_tails(times, s.seq, L, s.q);
    ig_sync();
    u64 best = PFSP_NO_KEY;
    const int4* row = reinterpret_cast<const int4*>(times + job * PFSP_MP);
    for (int pos = IG_TID; pos <= L; pos += IG_THREADS) {
        ctime_t previous = 0, span = 0;
#pragma unroll
        for (int c = 0; c < PFSP_MP / 4; ++c) {
            const int4 v = IG_TIME(row + c);
            const int p[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const int k = 4 * c + r;
                if (k < PFSP_M) {
                    const ctime_t before = pos > 0 ? s.e[(pos - 1) * IG_MS + k] : (ctime_t)0;
                    previous = max(previous, before) + (ctime_t)p[r];
                    span = max(span, previous + s.q[pos * IG_MS + k]);
                }
            }
        }
        const u64 key = ((u64)span << IG_POS_BITS) | (u64)pos;
        best = key < best && pos != skip ? key : best;
    }
    return ig_block_min(best, scratch);
}

__device__ __forceinline__ void ig_insert(IgShared& s, int L, int pos, int job)
{
    ig_sync();
    for (int i = IG_TID; i < L; i += IG_THREADS) s.tmp[i] = s.seq[i];
    ig_sync();
    for (int i = pos + 1 + IG_TID; i <= L; i += IG_THREADS) s.seq[i] = s.tmp[i - 1];
    if (IG_TID == 0) s.seq[pos] = job;
    ig_sync();
}

__device__ __forceinline__ void ig_remove(IgShared& s, int L, int pos)
{
    ig_sync();
    for (int i = IG_TID; i < L; i += IG_THREADS) s.tmp[i] = s.seq[i];
    ig_sync();
    for (int i = pos + IG_TID; i < L - 1; i += IG_THREADS) s.seq[i] = s.tmp[i + 1];
    ig_sync();
}

struct IgRng {
    u64 seed, walk, counter;
    __device__ __forceinline__ u64 next() { return ig_hash(seed, walk, counter++); }
};
