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
// iterations per launch, the tables' place, maxrregcount and flags. Each walk reads its own d
// (`destructions`) so that `--adapt` can race destruction sizes across the walks of a launch.
#include "ig-common.cuh"

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
pfsp_ig_block(const int* __restrict__ times_in, u64 seed, int iterations,
              const int* __restrict__ destructions, double temperature,
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
    const int d = min(destructions[walk], 64);
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
