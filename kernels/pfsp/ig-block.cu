// PFSP `ig-block`: one block per independent iterated-greedy walk (Ruiz & Stuetzle 2007), many
// walks per launch.
//
// Block b owns walk b: its current sequence (shared memory, copied from/to global memory at the
// launch's ends), its best sequence (global memory, written on improvement) and its counter of
// the counter-based RNG. Each iteration is the CPU `ig`'s (solvers/src/pfsp/ig.rs): remove d
// random jobs, reinsert each at its best position, iterative improvement by insertion (jobs in
// a random order; a move is kept only if the makespan strictly drops; sweep again while a sweep
// improved), and Ruiz-Stuetzle acceptance (not worse: accept; worse: with probability
// exp(-delta / T)). The draws differ from the CPU's (its ChaCha stream is not mirrored): the
// walk is the same algorithm, not the same trajectory.
//
// Every insertion is evaluated for all positions at once with Taillard's acceleration, computed
// by the block: warp 0 builds the heads e (completion times of the partial sequence) and warp 1
// the tails q along anti-diagonals, one machine per lane, the left neighbour passed by a warp
// shuffle (chunks of 32 machines); then thread t evaluates positions t, t + T, ... in O(m) from
// e and q, and the block reduces (makespan, position) to the first best position.
//
// Shared memory (dynamic): e and q, (n + 1) rows of an odd stride of machines each (bank
// spread), plus the sequence, a copy of it, the current sequence and the local-search order (n
// ints each). ig_shared_bytes() in solvers/src/pfsp/gpu/ig.rs mirrors it. With
// IG_GLOBAL_TABLES (instances whose tables exceed the opt-in shared memory, e.g. 800 x 60) e
// and q of walk b live in `tables` at b * 2 (n + 1) IG_MS instead, and shared memory holds only
// the four sequences; the host then runs few walks so that their tables stay in L2.
//
// Tunables: IG_THREADS (64..1024, multiple of 32), blocks (walks), destruction d, temperature,
// iterations per launch, the tables' place, maxrregcount and flags.
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
__device__ u64 ig_best_insertion(const int* __restrict__ times, IgShared& s, int L, int job, u64* scratch)
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
        best = key < best ? key : best;
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

// Iterative improvement by insertion on s.seq (n jobs) whose makespan is `value`; returns the
// final makespan. Thread 0 draws; every thread keeps the same copy of the RNG state.
__device__ i64 ig_local_search(const int* __restrict__ times, IgShared& s, i64 value, IgRng& rng,
                               u64* scratch, int* found, u64& evaluated)
{
    bool improved = true;
    while (improved) {
        improved = false;
        ig_sync();
        if (IG_TID == 0) {
            for (int i = PFSP_N - 1; i > 0; --i) {
                const int j = (int)(rng.next() % (u64)(i + 1));
                const int t = s.order[i];
                s.order[i] = s.order[j];
                s.order[j] = t;
            }
        }
        rng.counter += PFSP_N - 1;  // the other threads' copies follow thread 0's
        if (IG_TID == 0) rng.counter -= PFSP_N - 1;
        ig_sync();
        for (int o = 0; o < PFSP_N; ++o) {
            const int job = s.order[o];
            for (int i = IG_TID; i < PFSP_N; i += IG_THREADS) {
                if (s.seq[i] == job) *found = i;
            }
            ig_sync();
            const int from = *found;
            ig_remove(s, PFSP_N, from);
            const u64 key = ig_best_insertion(times, s, PFSP_N - 1, job, scratch);
            evaluated += PFSP_N;
            const i64 v = (i64)(key >> IG_POS_BITS);
            if (v < value) {
                ig_insert(s, PFSP_N - 1, (int)(key & ((1u << IG_POS_BITS) - 1)), job);
                value = v;
                improved = true;
            } else {
                ig_insert(s, PFSP_N - 1, from, job);
            }
        }
    }
    return value;
}

// cur/best: walks x n sequences; cur_value < 0 marks a walk whose start has not been improved
// by local search yet (the host's NEH, or a restart). evaluated: insertion positions per walk.
// tables: every walk's heads and tails with IG_GLOBAL_TABLES, else unused.
extern "C" __global__ void __launch_bounds__(IG_THREADS * IG_WALKS)
pfsp_ig_block(const int* __restrict__ times_in, u64 seed, int iterations, int destruction, double temperature,
              int* __restrict__ cur_seqs, i64* __restrict__ cur_values, int* __restrict__ best_seqs,
              i64* __restrict__ best_values, u64* __restrict__ rng_counters, u64* __restrict__ evaluated_out,
              ctime_t* tables)
{
    extern __shared__ __align__(16) unsigned char ig_smem[];
#if IG_WALKS == 1
    __shared__ u64 scratch[33];
    __shared__ int found;
    __shared__ int removed[64];
    __shared__ int draw;
#define IG_WALK blockIdx.x
#else
    __shared__ u64 scratch_of[IG_WALKS][33];
    __shared__ int found_of[IG_WALKS];
    __shared__ int removed_of[IG_WALKS][64];
    __shared__ int draw_of[IG_WALKS];
    u64* scratch = scratch_of[IG_GROUP];
    int& found = found_of[IG_GROUP];
    int* removed = removed_of[IG_GROUP];
    int& draw = draw_of[IG_GROUP];
#define IG_WALK (blockIdx.x * IG_WALKS + IG_GROUP)
#endif
    IgShared s;
    const int* times = times_in;
#if IG_GLOBAL_TABLES
    s.e = tables + (size_t)IG_WALK * 2 * (PFSP_N + 1) * IG_MS;
    s.q = s.e + (PFSP_N + 1) * IG_MS;
#if IG_SHARED_TIMES
    {
        int4* staged = reinterpret_cast<int4*>(ig_smem);
        const int4* from = reinterpret_cast<const int4*>(times_in);
        for (int i = threadIdx.x; i < PFSP_N * PFSP_MP / 4; i += IG_THREADS * IG_WALKS)
            staged[i] = __ldg(from + i);
        times = reinterpret_cast<const int*>(staged);
    }
    s.seq = reinterpret_cast<int*>(ig_smem) + PFSP_N * PFSP_MP + IG_GROUP * 4 * PFSP_N;
#else
    s.seq = reinterpret_cast<int*>(ig_smem) + IG_GROUP * 4 * PFSP_N;
#endif
#else
    s.e = reinterpret_cast<ctime_t*>(ig_smem);
    s.q = s.e + (PFSP_N + 1) * IG_MS;
    s.seq = reinterpret_cast<int*>(s.q + (PFSP_N + 1) * IG_MS);
#endif
    s.tmp = s.seq + PFSP_N;
    s.cur = s.tmp + PFSP_N;
    s.order = s.cur + PFSP_N;
    const int walk = IG_WALK;
    int* my_cur = cur_seqs + (size_t)walk * PFSP_N;
    int* my_best = best_seqs + (size_t)walk * PFSP_N;
    IgRng rng{seed, (u64)walk, rng_counters[walk]};
    u64 evaluated = 0;
    for (int i = IG_TID; i < PFSP_N; i += IG_THREADS) {
        s.cur[i] = my_cur[i];
        s.seq[i] = my_cur[i];
        s.order[i] = i;
    }
    i64 cur_value = cur_values[walk];
    i64 best_value = best_values[walk];
    __syncthreads();  // block-wide: the staged times are every walk's
    if (cur_value < 0) {
        if (IG_TID < 32) ig_heads(times, s.seq, PFSP_N, s.e);
        ig_sync();
        const i64 start = (i64)s.e[(PFSP_N - 1) * IG_MS + PFSP_M - 1];
        cur_value = ig_local_search(times, s, start, rng, scratch, &found, evaluated);
        for (int i = IG_TID; i < PFSP_N; i += IG_THREADS) s.cur[i] = s.seq[i];
        if (cur_value < best_value) {
            best_value = cur_value;
            for (int i = IG_TID; i < PFSP_N; i += IG_THREADS) my_best[i] = s.seq[i];
        }
    }
    const int d = min(destruction, 64);
    for (int it = 0; it < iterations; ++it) {
        ig_sync();
        for (int i = IG_TID; i < PFSP_N; i += IG_THREADS) s.seq[i] = s.cur[i];
        // Destruction: d positions drawn one after the other from the shrinking sequence.
        for (int r = 0; r < d; ++r) {
            ig_sync();
            if (IG_TID == 0) {
                draw = (int)(rng.next() % (u64)(PFSP_N - r));
                removed[r] = s.seq[draw];
            } else {
                rng.counter++;
            }
            ig_sync();
            ig_remove(s, PFSP_N - r, draw);
        }
        // Construction: each removed job at its best position.
        u64 key = 0;
        for (int r = 0; r < d; ++r) {
            const int L = PFSP_N - d + r;
            key = ig_best_insertion(times, s, L, removed[r], scratch);
            evaluated += L + 1;
            ig_insert(s, L, (int)(key & ((1u << IG_POS_BITS) - 1)), removed[r]);
        }
        const i64 built = (i64)(key >> IG_POS_BITS);
        const i64 value = ig_local_search(times, s, built, rng, scratch, &found, evaluated);
        bool accept = value <= cur_value;
        if (!accept) {
            // Every thread draws the same number: the RNG is counter-based.
            const double u = (double)(rng.next() >> 11) * (1.0 / 9007199254740992.0);
            accept = temperature > 0.0 && u < exp(-(double)(value - cur_value) / temperature);
        }
        if (accept) {
            ig_sync();
            for (int i = IG_TID; i < PFSP_N; i += IG_THREADS) s.cur[i] = s.seq[i];
            cur_value = value;
            if (value < best_value) {
                best_value = value;
                for (int i = IG_TID; i < PFSP_N; i += IG_THREADS) my_best[i] = s.seq[i];
            }
        }
    }
    ig_sync();
    for (int i = IG_TID; i < PFSP_N; i += IG_THREADS) my_cur[i] = s.cur[i];
    if (IG_TID == 0) {
        cur_values[walk] = cur_value;
        best_values[walk] = best_value;
        rng_counters[walk] = rng.counter;
        evaluated_out[walk] += evaluated;
    }
}
