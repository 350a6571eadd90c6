// PFSP `ig-warp`: one warp per iterated-greedy walk, IGW_WARPS walks per block, so that the chip
// holds many more walks than `ig-block` (whose walks need two warps and two full tables each),
// and tables can live in global memory where they do not fit in shared memory (800 x 60).
//
// The walk is the CPU reference `solvers::pfsp::ig_warp` step for step (same counter-based draws,
// same moves, same acceptance table), which the GPU tests check walk by walk:
//   start: a walk whose cur_value is < 0 first improves its start by local search (its value is
//   best_values[walk], the host's NEH makespan);
//   iteration: remove d jobs (positions drawn from the shrinking sequence), reinsert each at its
//   first best position, local search, then accept if not worse, else if a 32-bit draw is below
//   accept_table[min(delta, K - 1)] (floor(exp(-delta / T) 2^32), computed on the host so that
//   no transcendental function differs between CPU and GPU);
//   adaptive destruction: d returns to d_min when the iteration's result beats the current
//   makespan, else grows by one up to d_max (d_min = d_max: the classic fixed d);
//   local search: sweeps over the jobs in a random order (Fisher-Yates from the identity each
//   sweep); remove a job, reinsert it at its first best position if that strictly improves; with
//   `ties` also where it equals the current makespan at another position (a plateau move, which
//   does not by itself start another sweep); sweep again while a sweep strictly improved.
//
// One insertion (job j into s[0..L), all L + 1 positions) costs two wavefronts of the warp, lane
// = machine (chunks of 32 machines for m > 32):
//   tails q of s along anti-diagonals into a skewed table Q[(i + k) m + k] (the lanes of one
//   step touch consecutive words: conflict-free in shared memory, coalesced in global memory);
//   then one pass that builds the heads e of s and the completion f of j inserted at every
//   position r in the same wavefront (f[r][k] = max(f[r][k-1], e[r-1][k]) + p_j[k], span_r =
//   max_k f[r][k] + q[r][k]), so the heads are never stored. Chunk boundaries (m > 32) pass
//   e, f and the partial span of the last machine of a chunk through three (n + 1) rows.
//
// Memory per walk: sequence, current, order (3 n ints) and the removed jobs (64 ints) in shared
// memory; Q ((n + m + 1) m values) and the boundary rows (3 (n + 1)) in shared memory when
// IGW_SHARED_TABLES is 1, else in the global scratch buffer (one slice per walk).
// ig_warp_bytes() in solvers/src/pfsp/gpu/ig_warp.rs mirrors these sizes.
#include "common.cuh"

#ifndef IGW_WARPS
#error "IGW_WARPS (walks per block) must be defined"
#endif
#ifndef IGW_SHARED_TABLES
#define IGW_SHARED_TABLES 0
#endif

#define IGW_FULL 0xffffffffu
#define IGW_MAX_D 64
// Values per walk in the table region: the skewed tails and three boundary rows.
#define IGW_TABLE ((PFSP_N + PFSP_M + 1) * PFSP_M + 3 * (PFSP_N + 1))

__device__ __forceinline__ u64 igw_hash(u64 seed, u64 stream, u64 counter)
{
    // SplitMix64 of a mix of seed, walk and counter; solvers::pfsp::ig_warp::hash mirrors it.
    u64 z = seed ^ (stream * 0x9E3779B97F4A7C15ull) ^ (counter * 0xD1B54A32D192ED03ull);
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// The GPU's nanosecond clock, the same value in every lane (lane 0's, broadcast).
__device__ __forceinline__ u64 igw_now()
{
    u64 t = 0;
#ifndef IGW_EMULATED
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
#else
    t = igw_emulated_clock();  // host emulation of one warp (a test harness outside the repo)
#endif
    return __shfl_sync(IGW_FULL, t, 0);
}

struct IgwWalk {
    int* seq;      // the sequence being changed
    int* cur;      // the walk's current sequence
    int* order;    // local-search order
    int* removed;  // jobs removed by destruction
    ctime_t* q;    // skewed tails
    ctime_t* be;   // boundary rows: heads, insertion completion, partial span
    ctime_t* bf;
    ctime_t* bs;
    u64 seed, stream, counter;
    u64 evaluated;
    __device__ __forceinline__ u64 next() { return igw_hash(seed, stream, counter++); }
};

#define IGW_Q(w, i, k) (w).q[((i) + (k)) * PFSP_M + (k)]

__device__ __forceinline__ int igw_time(const int* __restrict__ times, int job, int k)
{
    return __ldg(times + job * PFSP_MP + k);
}

// Tails of s[0..L) into Q, rows 0..L (row L zero).
__device__ __forceinline__ void igw_tails(const int* __restrict__ times, IgwWalk& w, int L)
{
    const int lane = threadIdx.x & 31;
    // Local copies: the walk's pointers stay in registers.
    ctime_t* const q = w.q;
    const int* const seq = w.seq;
    for (int k = lane; k < PFSP_M; k += 32) q[(L + k) * PFSP_M + k] = 0;
    __syncwarp();
    for (int c0 = 0; c0 < PFSP_M; c0 += 32) {
        const int k = PFSP_M - 1 - (c0 + lane);
        const int width = min(32, PFSP_M - c0);
        ctime_t own = 0;
        // The processing time of the next step is loaded one step ahead (off the shuffle chain).
        int next = (lane == 0 && lane < width && L - 1 >= 0) ? igw_time(times, seq[L - 1], k) : 0;
        for (int d = 0; d < L + width - 1; ++d) {
            const int i = L - 1 - (d - lane);
            const bool on = lane < width && d - lane >= 0 && i >= 0;
            const int t = next;
            const int i2 = i - 1;
            next = (lane < width && d + 1 - lane >= 0 && i2 >= 0) ? igw_time(times, seq[i2], k) : 0;
            ctime_t in = __shfl_up_sync(IGW_FULL, own, 1);
            if (lane == 0) in = (c0 > 0 && on) ? q[(i + k + 1) * PFSP_M + k + 1] : (ctime_t)0;
            if (on) {
                own = max(own, in) + (ctime_t)t;
                q[(i + k) * PFSP_M + k] = own;
            }
        }
        __syncwarp();
    }
}

// First best position to insert `job` into s[0..L) and its makespan (same in every lane).
__device__ __forceinline__ void igw_best_insertion(const int* __restrict__ times, IgwWalk& w, int L, int job, int& best_pos,
                                   i64& best_span)
{
    const int lane = threadIdx.x & 31;
    igw_tails(times, w, L);
    const ctime_t* const q = w.q;
    const int* const seq = w.seq;
    ctime_t* const be = w.be;
    ctime_t* const bf = w.bf;
    ctime_t* const bs = w.bs;
    ctime_t best = 0;
    int pos = 0;
    bool any = false;
    for (int c0 = 0; c0 < PFSP_M; c0 += 32) {
        const int width = min(32, PFSP_M - c0);
        const int k = c0 + lane;
        const bool last_chunk = c0 + 32 >= PFSP_M;
        const ctime_t pj = lane < width ? (ctime_t)igw_time(times, job, k) : (ctime_t)0;
        ctime_t e = 0, f = 0, sp = 0;  // e: heads of the row before, own machine
        // Loaded one step ahead (off the shuffle chain): the time of s[r] and the tail q[r][k].
        int t_next = (lane == 0 && lane < width && 0 < L) ? igw_time(times, seq[0], k) : 0;
        ctime_t q_next = (lane == 0 && lane < width) ? q[k * PFSP_M + k] : (ctime_t)0;
        for (int d = 0; d < L + width; ++d) {
            const int r = d - lane;
            const bool on = lane < width && r >= 0 && r <= L;
            const int t = t_next;
            const ctime_t tail = q_next;
            const int r2 = r + 1;
            const bool on2 = lane < width && r2 >= 0 && r2 <= L;
            t_next = on2 && r2 < L ? igw_time(times, seq[r2], k) : 0;
            q_next = on2 ? q[(r2 + k) * PFSP_M + k] : (ctime_t)0;
            ctime_t fin = __shfl_up_sync(IGW_FULL, f, 1);
            ctime_t ein = __shfl_up_sync(IGW_FULL, e, 1);
            ctime_t sin = __shfl_up_sync(IGW_FULL, sp, 1);
            if (lane == 0) {
                const bool from_chunk = c0 > 0 && on;
                fin = from_chunk ? bf[r] : (ctime_t)0;
                ein = from_chunk && r < L ? be[r] : (ctime_t)0;
                sin = from_chunk ? bs[r] : (ctime_t)0;
            }
            if (on) {
                // e holds e[r-1][k]: the insertion at r follows s[0..r).
                f = max(fin, e) + pj;
                sp = max(sin, f + tail);
                if (r < L) e = max(e, ein) + (ctime_t)t;
                if (lane == width - 1) {
                    if (last_chunk) {
                        if (!any || sp < best) {
                            best = sp;
                            pos = r;
                            any = true;
                        }
                    } else {
                        bf[r] = f;
                        bs[r] = sp;
                        if (r < L) be[r] = e;
                    }
                }
            }
            __syncwarp();
        }
    }
    const int src = (PFSP_M - 1) & 31;
    best_span = (i64)__shfl_sync(IGW_FULL, best, src);
    best_pos = __shfl_sync(IGW_FULL, pos, src);
    w.evaluated += (u64)(L + 1);
}

// s[pos] removed from s[0..L): shift left, ascending chunks (each chunk reads before it writes).
__device__ __forceinline__ void igw_remove(int* s, int L, int pos)
{
    const int lane = threadIdx.x & 31;
    for (int base = pos; base < L - 1; base += 32) {
        const int i = base + lane;
        const int v = i < L - 1 ? s[i + 1] : 0;
        __syncwarp();
        if (i < L - 1) s[i] = v;
        __syncwarp();
    }
}

// job inserted at pos into s[0..L): shift right, descending chunks.
__device__ __forceinline__ void igw_insert(int* s, int L, int pos, int job)
{
    const int lane = threadIdx.x & 31;
    for (int top = L; top > pos; top -= 32) {
        const int i = top - lane;  // s[i] = s[i - 1] for i in (pos, L]
        const int v = i > pos ? s[i - 1] : 0;
        __syncwarp();
        if (i > pos) s[i] = v;
        __syncwarp();
    }
    if (lane == 0) s[pos] = job;
    __syncwarp();
}

__device__ __forceinline__ int igw_find(const int* s, int L, int job)
{
    const int lane = threadIdx.x & 31;
    for (int base = 0; base < L; base += 32) {
        const int i = base + lane;
        const unsigned hit = __ballot_sync(IGW_FULL, i < L && s[i] == job);
        if (hit) return base + __ffs(hit) - 1;
    }
    return 0;  // unreachable for a permutation
}

// Local search on w.seq (n jobs) of makespan `value`; returns the final makespan, or -1 when the
// GPU clock reached `stop_at` (0: never) before it finished (the caller then drops w.seq).
__device__ __forceinline__ i64 igw_local_search(const int* __restrict__ times, IgwWalk& w, i64 value, int ties,
                                                u64 stop_at)
{
    const int lane = threadIdx.x & 31;
    bool improved = true;
    while (improved) {
        improved = false;
        for (int i = lane; i < PFSP_N; i += 32) w.order[i] = i;
        __syncwarp();
        // Every lane computes the same draws (counter-based); lane 0 swaps.
        for (int i = PFSP_N - 1; i > 0; --i) {
            const int j = (int)(w.next() % (u64)(i + 1));
            if (lane == 0) {
                const int t = w.order[i];
                w.order[i] = w.order[j];
                w.order[j] = t;
            }
        }
        __syncwarp();
        for (int o = 0; o < PFSP_N; ++o) {
            // One insertion at 800 x 60 takes milliseconds and an iteration can take seconds:
            // under a time limit the walk gives up its iteration rather than overrun it.
            if (stop_at && igw_now() >= stop_at) return -1;
            const int job = w.order[o];
            const int from = igw_find(w.seq, PFSP_N, job);
            igw_remove(w.seq, PFSP_N, from);
            int to;
            i64 v;
            igw_best_insertion(times, w, PFSP_N - 1, job, to, v);
            if (v < value) {
                igw_insert(w.seq, PFSP_N - 1, to, job);
                value = v;
                improved = true;
            } else if (ties && v == value && to != from) {
                igw_insert(w.seq, PFSP_N - 1, to, job);
            } else {
                igw_insert(w.seq, PFSP_N - 1, from, job);
            }
        }
    }
    return value;
}

// cur/best: walks x n sequences; cur_value < 0 marks a walk whose start (of makespan
// best_values[walk]) has not been improved by local search yet. d_state: each walk's current
// destruction size. scratch: IGW_TABLE values per walk when the tables are not in shared memory.
// budget_ns > 0: each walk also stops starting iterations once that long has passed since it
// began (GPU clock), so that every walk stays busy until the launch's end instead of idling
// behind the slowest walk of a fixed iteration count; iterations_out counts each walk's.
// hard_ns > 0: at that much time after its start a walk abandons the iteration in progress (the
// time limit of the whole run), keeping its current and best sequences as they were.
extern "C" __global__ void __launch_bounds__(32 * IGW_WARPS)
pfsp_ig_warp(const int* __restrict__ times, u64 seed, int walks, int iterations, int d_min, int d_max, int ties,
             const unsigned* __restrict__ accept_table, int table_len, int* __restrict__ cur_seqs,
             i64* __restrict__ cur_values, int* __restrict__ best_seqs, i64* __restrict__ best_values,
             u64* __restrict__ rng_counters, int* __restrict__ d_state, u64* __restrict__ evaluated_out,
             ctime_t* __restrict__ scratch, u64 budget_ns, u64 hard_ns, u64* __restrict__ iterations_out)
{
    extern __shared__ __align__(16) unsigned char igw_smem[];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int walk = blockIdx.x * IGW_WARPS + warp;
    if (walk >= walks) return;  // whole warps leave; nothing below synchronises the block
    int* ints = reinterpret_cast<int*>(igw_smem)
#if IGW_SHARED_TABLES
                + (size_t)IGW_WARPS * IGW_TABLE * (sizeof(ctime_t) / sizeof(int))
#endif
                + (size_t)warp * (3 * PFSP_N + IGW_MAX_D);
    IgwWalk w;
    w.seq = ints;
    w.cur = ints + PFSP_N;
    w.order = ints + 2 * PFSP_N;
    w.removed = ints + 3 * PFSP_N;
#if IGW_SHARED_TABLES
    w.q = reinterpret_cast<ctime_t*>(igw_smem) + (size_t)warp * IGW_TABLE;
#else
    w.q = scratch + (size_t)walk * IGW_TABLE;
#endif
    w.be = w.q + (PFSP_N + PFSP_M + 1) * PFSP_M;
    w.bf = w.be + (PFSP_N + 1);
    w.bs = w.bf + (PFSP_N + 1);
    w.seed = seed;
    w.stream = (u64)walk;
    w.counter = rng_counters[walk];
    w.evaluated = 0;
    int* my_cur = cur_seqs + (size_t)walk * PFSP_N;
    int* my_best = best_seqs + (size_t)walk * PFSP_N;
    for (int i = lane; i < PFSP_N; i += 32) w.cur[i] = my_cur[i];
    __syncwarp();
    i64 cur_value = cur_values[walk];
    i64 best_value = best_values[walk];
    int d = d_state[walk];
    const u64 started = budget_ns || hard_ns ? igw_now() : 0;
    const u64 stop_at = hard_ns ? started + hard_ns : 0;
    bool stopped = false;
    if (cur_value < 0) {
        for (int i = lane; i < PFSP_N; i += 32) w.seq[i] = w.cur[i];
        __syncwarp();
        const i64 v = igw_local_search(times, w, best_value, ties, stop_at);
        if (v < 0) {
            stopped = true;  // still unimproved: the next launch starts over
        } else {
            cur_value = v;
            for (int i = lane; i < PFSP_N; i += 32) w.cur[i] = w.seq[i];
            if (cur_value < best_value) {
                best_value = cur_value;
                for (int i = lane; i < PFSP_N; i += 32) my_best[i] = w.seq[i];
            }
        }
        __syncwarp();
    }
    int it = 0;
    for (; it < iterations && !stopped; ++it) {
        if (budget_ns && igw_now() - started >= budget_ns) break;
        for (int i = lane; i < PFSP_N; i += 32) w.seq[i] = w.cur[i];
        __syncwarp();
        for (int r = 0; r < d; ++r) {
            const int pos = (int)(w.next() % (u64)(PFSP_N - r));
            const int job = w.seq[pos];
            if (lane == 0) w.removed[r] = job;
            __syncwarp();
            igw_remove(w.seq, PFSP_N - r, pos);
        }
        i64 value = 0;
        for (int r = 0; r < d; ++r) {
            const int L = PFSP_N - d + r;
            const int job = w.removed[r];
            int pos;
            igw_best_insertion(times, w, L, job, pos, value);
            igw_insert(w.seq, L, pos, job);
        }
        value = igw_local_search(times, w, value, ties, stop_at);
        if (value < 0) break;  // the run's time is up: this iteration does not count
        bool accept = value <= cur_value;
        if (!accept) {
            const unsigned u = (unsigned)(w.next() >> 32);
            const i64 delta = value - cur_value;
            const int index = delta < (i64)(table_len - 1) ? (int)delta : table_len - 1;
            accept = u < __ldg(accept_table + index);
        }
        d = value < cur_value ? d_min : min(d + 1, d_max);
        if (accept) {
            for (int i = lane; i < PFSP_N; i += 32) w.cur[i] = w.seq[i];
            cur_value = value;
            if (value < best_value) {
                best_value = value;
                for (int i = lane; i < PFSP_N; i += 32) my_best[i] = w.seq[i];
            }
        }
        __syncwarp();
    }
    for (int i = lane; i < PFSP_N; i += 32) my_cur[i] = w.cur[i];
    if (lane == 0) {
        cur_values[walk] = cur_value;
        best_values[walk] = best_value;
        rng_counters[walk] = w.counter;
        d_state[walk] = d;
        evaluated_out[walk] += w.evaluated;
        iterations_out[walk] += (u64)it;
    }
}
