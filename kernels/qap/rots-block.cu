// QAP `rots-block`: one block per solution running Taillard's robust tabu search. Two kernels
// run the same search move for move: qap_rots_block (below; the tabu matrix in global memory,
// any n whose delta matrix fits) and qap_rots_block_fast (further down; everything in shared
// memory, ~20x the iterations per block at n = 100), which the host picks where it fits.
//
// Block b owns solution b. Shared memory holds its permutation, best permutation and the delta
// of every swap (packed upper triangle, n(n-1)/2 int64); the tabu matrix (facility x location
// -> first iteration it may return, int32 n x n) lives in global memory, where each block only
// touches its own and L2 keeps it. Each iteration:
//   1. thread t evaluates pairs k = t, t + T, ... with Taillard's rules and keeps the best
//      candidate by key (class, delta, k): class 0 aspired (beats the best cost, or a location
//      unvisited for `aspiration` iterations), 1 allowed, 2 tabu; the block reduces the keys
//      (warp shuffles, then one warp). The lexicographic minimum is exactly the move Taillard's
//      sequential scan picks, the fallback to the best tabu move included.
//   2. thread 0 applies the swap and makes each facility's old location tabu for a tenure drawn
//      uniformly from the block's [tenure_min, tenure_max] (`tenures[2 b]`, `tenures[2 b + 1]`:
//      one range per block, so that `--adapt` can race tenures within a launch; the
//      counter-based RNG).
//   3. the block recomputes the deltas: O(1) for pairs disjoint from the swap through
//      per-facility terms staged in shared memory, O(n) for the 2n - 3 pairs that touch it.
// State is kept in global memory between launches, so the host can run a time limit as a
// sequence of launches that continue the same trajectories. Between launches the host may
// restart a stagnating block from a perturbed copy of its best solution (written into `perms`,
// with done_iterations = -1): Ro-TS alone stalls on tai80a/tai100a.
//
// Tunables: threads per block (32..1024, multiple of 32), solutions per launch (blocks),
// iterations per launch, tenure_min/tenure_max per block (Taillard: 0.9 n .. 1.1 n; default
// 0.4 n .. 0.8 n), aspiration (Taillard: 2 n^2; default off, a lag no entry reaches), maxrregcount and
// flags. Shared memory: 8 n(n-1)/2 + 40 n bytes (n <= 240 on H100), or 40 n with the deltas in
// global memory (QAP_DELTA_GLOBAL; n <= 512, the host's limit).
#include "common.cuh"

// QAP_DELTA_GLOBAL (qap_rots_block only): 1 keeps the delta matrix in global memory (layout
// `global`), 0 in shared memory (layout `global-tabu`).
#ifndef QAP_DELTA_GLOBAL
#define QAP_DELTA_GLOBAL 0
#endif

struct Key {
    int cls;
    int k;
    i64 delta;
};

__device__ __forceinline__ bool key_less(const Key& x, const Key& y)
{
    if (x.cls != y.cls) return x.cls < y.cls;
    if (x.delta != y.delta) return x.delta < y.delta;
    return x.k < y.k;
}

__device__ __forceinline__ Key shuffle_down(Key key, int offset)
{
    Key other;
    other.cls = __shfl_down_sync(0xffffffffu, key.cls, offset);
    other.k = __shfl_down_sync(0xffffffffu, key.k, offset);
    other.delta = __shfl_down_sync(0xffffffffu, key.delta, offset);
    return other;
}

__device__ __forceinline__ Key warp_min(Key key)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        Key other = shuffle_down(key, offset);
        if (key_less(other, key)) key = other;
    }
    return key;
}

extern "C" __global__ void qap_rots_block(const int* __restrict__ a, const int* __restrict__ b,
                                          unsigned long long seed, int first_solution, int iterations,
                                          const int* __restrict__ tenures, int aspiration,
                                          int* __restrict__ perms, int* __restrict__ best_perms,
                                          i64* __restrict__ costs, i64* __restrict__ best_costs,
                                          i64* __restrict__ deltas, int* __restrict__ tabu_all,
                                          int* __restrict__ done_iterations)
{
    extern __shared__ unsigned char shared_bytes[];
    const int sol = blockIdx.x;
    const int tenure_min = tenures[2 * sol], tenure_max = tenures[2 * sol + 1];
    i64* saved_delta = deltas + (size_t)sol * QAP_PAIRS;
#if QAP_DELTA_GLOBAL
    // Layout `global`: the delta matrix does not fit in shared memory (8 n(n-1)/2 bytes:
    // n > ~240 on H100), so the block works on its slice of `deltas` in place. Each thread
    // reads and writes the same pairs k = t, t + T, ... (coalesced), the touching-pairs pass
    // writes other threads' pairs, and __syncthreads orders global memory within the block as
    // it does shared memory; L2 keeps what the blocks' slices and tabu matrices leave room for.
    i64* delta = saved_delta;
    i64* x = (i64*)shared_bytes;                           // per-facility update terms
#else
    i64* delta = (i64*)shared_bytes;                       // QAP_PAIRS
    i64* x = delta + QAP_PAIRS;                            // per-facility update terms
#endif
    i64* y = x + QAP_N;
    i64* bs = y + QAP_N;
    i64* bt = bs + QAP_N;
    int* p = (int*)(bt + QAP_N);                           // QAP_N
    int* best_p = p + QAP_N;                               // QAP_N
    __shared__ Key warp_best[32];
    __shared__ i64 cost, best_cost;
    __shared__ int move_r, move_s, improved;

    const int t = threadIdx.x;
    const int T = blockDim.x;
    int* tabu = tabu_all + (size_t)sol * QAP_N * QAP_N;
    const int start_iteration = done_iterations[sol] > 0 ? done_iterations[sol] : 0;
    const int start_mode = done_iterations[sol];

    // done_iterations: 0 = fresh start; -1 = restart from the permutation the host wrote into
    // `perms` (a perturbed best), keeping this block's best; > 0 = continue.
    const bool fresh = start_mode == 0;
    if (start_mode <= 0) {
        if (fresh) {
            if (t == 0) {
                qap_start_permutation(p, seed, (u64)(first_solution + sol));
            }
        } else {
            for (int i = t; i < QAP_N; i += T) {
                p[i] = perms[(size_t)sol * QAP_N + i];
                best_p[i] = best_perms[(size_t)sol * QAP_N + i];
            }
        }
        __syncthreads();
        if (fresh) {
            for (int i = t; i < QAP_N; i += T) best_p[i] = p[i];
        }
        for (int i = t; i < QAP_N * QAP_N; i += T) tabu[i] = -i;  // Taillard's distinct start values
        if (t == 0) {
            cost = qap_cost(a, b, p);
            best_cost = fresh ? cost : best_costs[sol];
            if (cost < best_cost) {
                best_cost = cost;
                improved = 1;
            } else {
                improved = 0;
            }
        }
        if (t < QAP_PAIRS) {
            int r, s;
            qap_pair_of(t, &r, &s);
            for (int k = t; k < QAP_PAIRS; k += T) {
                delta[k] = qap_swap_delta(a, b, p, r, s);
                qap_pair_advance(&r, &s, T);
            }
        }
        __syncthreads();
        if (!fresh && improved) {
            for (int i = t; i < QAP_N; i += T) best_p[i] = p[i];
        }
    } else {
        for (int i = t; i < QAP_N; i += T) {
            p[i] = perms[(size_t)sol * QAP_N + i];
            best_p[i] = best_perms[(size_t)sol * QAP_N + i];
        }
#if !QAP_DELTA_GLOBAL
        for (int k = t; k < QAP_PAIRS; k += T) delta[k] = saved_delta[k];
#endif
        if (t == 0) {
            cost = costs[sol];
            best_cost = best_costs[sol];
        }
    }
    __syncthreads();

    const int lanes = (T + 31) / 32;
    for (int step = 0; step < iterations; ++step) {
        const int it = start_iteration + step + 1;  // Taillard counts from 1
        // 1. Choose the move.
        Key mine = {3, 0x7fffffff, 0};
        if (t < QAP_PAIRS) {
            int r, s;
            qap_pair_of(t, &r, &s);
            for (int k = t; k < QAP_PAIRS; k += T) {
                const i64 d = delta[k];
                const int tr = tabu[r * QAP_N + p[s]];
                const int ts = tabu[s * QAP_N + p[r]];
                const bool allowed = tr < it || ts < it;
                const bool aspired = tr < it - aspiration || ts < it - aspiration || cost + d < best_cost;
                const Key key = {aspired ? 0 : (allowed ? 1 : 2), k, d};
                if (key_less(key, mine)) mine = key;
                qap_pair_advance(&r, &s, T);
            }
        }
        mine = warp_min(mine);
        if ((t & 31) == 0) warp_best[t >> 5] = mine;
        __syncthreads();
        if (t < 32) {
            Key key = t < lanes ? warp_best[t] : Key{3, 0x7fffffff, 0};
            key = warp_min(key);
            // 2. Apply it.
            if (t == 0) {
                int r, s;
                qap_pair_of(key.k, &r, &s);
                const int left_r = p[r];
                const int left_s = p[s];
                p[r] = left_s;
                p[s] = left_r;
                cost += key.delta;
                const int span = tenure_max - tenure_min + 1;
                tabu[r * QAP_N + left_r] = it + tenure_min + (int)(qap_hash(seed ^ 0x7ab05eedull, (u64)(first_solution + sol), 2ull * it) % (u64)span);
                tabu[s * QAP_N + left_s] = it + tenure_min + (int)(qap_hash(seed ^ 0x7ab05eedull, (u64)(first_solution + sol), 2ull * it + 1) % (u64)span);
                improved = cost < best_cost;
                if (improved) best_cost = cost;
                move_r = r;
                move_s = s;
            }
        }
        __syncthreads();
        const int r = move_r, s = move_s;
        if (improved) {
            for (int i = t; i < QAP_N; i += T) best_p[i] = p[i];
        }
        // 3. Update the deltas: stage the per-facility terms of the O(1) update.
        const int pr = p[r], ps = p[s];
        for (int u = t; u < QAP_N; u += T) {
            const int pu = p[u];
            x[u] = (i64)__ldg(&a[r * QAP_N + u]) - __ldg(&a[s * QAP_N + u]);
            y[u] = (i64)__ldg(&a[u * QAP_N + r]) - __ldg(&a[u * QAP_N + s]);
            bs[u] = (i64)__ldg(&b[ps * QAP_N + pu]) - __ldg(&b[pr * QAP_N + pu]);
            bt[u] = (i64)__ldg(&b[pu * QAP_N + ps]) - __ldg(&b[pu * QAP_N + pr]);
        }
        __syncthreads();
        // O(1) pairs first; the 2n - 3 pairs that touch the swap are recomputed in their own
        // pass, one per thread, so a warp never waits on an O(n) lane inside the O(1) loop.
        if (t < QAP_PAIRS) {
            int u, v;
            qap_pair_of(t, &u, &v);
            for (int k = t; k < QAP_PAIRS; k += T) {
                if (u != r && u != s && v != r && v != s) {
                    delta[k] += (x[u] - x[v]) * (bs[u] - bs[v]) + (y[u] - y[v]) * (bt[u] - bt[v]);
                }
                qap_pair_advance(&u, &v, T);
            }
        }
        // Touching pairs: index j < n - 1 pairs r with the other facilities (s included);
        // index n - 1 + j pairs s with the facilities other than r and s.
        for (int j = t; j < 2 * QAP_N - 3; j += T) {
            const int anchor = j < QAP_N - 1 ? r : s;
            int other = j < QAP_N - 1 ? j : j - (QAP_N - 1);
            if (j < QAP_N - 1) {
                other += other >= r;  // skip r itself
            } else {
                const int lo = r < s ? r : s;
                const int hi = r < s ? s : r;
                other += other >= lo;  // skip r and s
                other += other >= hi;
            }
            const int u = anchor < other ? anchor : other;
            const int v = anchor < other ? other : anchor;
            delta[qap_pair_index(u, v)] = qap_swap_delta(a, b, p, u, v);
        }
        __syncthreads();
    }

    // Keep the state for the next launch.
    for (int i = t; i < QAP_N; i += T) {
        perms[(size_t)sol * QAP_N + i] = p[i];
        best_perms[(size_t)sol * QAP_N + i] = best_p[i];
    }
#if !QAP_DELTA_GLOBAL
    for (int k = t; k < QAP_PAIRS; k += T) saved_delta[k] = delta[k];
#endif
    if (t == 0) {
        costs[sol] = cost;
        best_costs[sol] = best_cost;
        done_iterations[sol] = start_iteration + iterations;
    }
}

// ---------------------------------------------------------------------------------------------
// qap_rots_block_fast: the same search (identical move choice, tenure draws and aspiration) with
// the whole per-block state in shared memory, for the sizes where it fits (the host picks it):
//   delta   packed upper triangle, int32 or int64    tabu   facility x location, int32
//   A       the flow matrix (and A^T unless QAP_SYM) BP     B in solution order, BP[i][j] =
//           b[p(i)][p(j)] (and BP^T unless QAP_SYM), kept current by swapping two rows and
//           columns per move
// With A and BP in shared memory the 2n - 3 pairs that touch the swap are recomputed by
// threads over the other facility v (consecutive v read consecutive words: no bank conflicts),
// ROTS_SPLIT threads per v each summing every ROTS_SPLIT-th k, then a shuffle reduction.
// Each thread keeps the pairs it owns (k = t, t + T, ...) packed in registers, every warp
// reduces the per-warp minima itself (xor shuffles), so all threads know the move without a
// second barrier, and cost/best cost live in registers: 3 barriers per iteration.
// QAP_SYM (both matrices symmetric) halves the delta work: the two halves of every term agree.
// Compile-time: ROTS_THREADS (block size, = the launch's), QAP_SYM (0/1), QAP_DELTA32 (0/1).
// Shared memory: w P' + 16 h n (anchor columns) + 2 w h n (staged update terms) + 4 n^2 (tabu)
// + e (m - 1) n^2 (matrices) + 8 n bytes, w = 4 (QAP_DELTA32) or 8, P' = n(n-1)/2 rounded up
// to a multiple of 16 / w, h = 1 (QAP_SYM) or 2, m = 3 (QAP_SYM) or 5, e = 2 (QAP_M16) or 4.
// Not compiled beside the `global` layout (n up to 512), which never runs it: at n = 512 its
// unrolled per-thread pair lists would spill and take NVRTC seconds.
#if !QAP_DELTA_GLOBAL
#ifndef ROTS_THREADS
#define ROTS_THREADS 256
#endif
#ifndef QAP_SYM
#define QAP_SYM 0
#endif
#ifndef QAP_DELTA32
#define QAP_DELTA32 0
#endif
// QAP_M16: A, A^T, BP and BP^T in int16 (the host sets it only where every entry of both
// matrices lies in -32768..=32767). Half the matrix bytes: at n = 100 (symmetric) the block
// needs ~103 KB instead of ~143 KB, so two blocks fit on an SM. Every value is widened before
// any arithmetic, so the deltas are the same.
#ifndef QAP_M16
#define QAP_M16 0
#endif
// ROTS_MIN_BLOCKS: the resident blocks per SM the host expects (its shared memory allows),
// passed to __launch_bounds__ so ptxas keeps the registers within 65536 / (that x threads).
#ifndef ROTS_MIN_BLOCKS
#define ROTS_MIN_BLOCKS 1
#endif
#if QAP_M16
typedef short mval;
#else
typedef int mval;
#endif
#define ROTS_PPT ((QAP_PAIRS + ROTS_THREADS - 1) / ROTS_THREADS)
#define ROTS_SPLIT_RAW (ROTS_THREADS / QAP_N)
#define ROTS_SPLIT                                                                                 \
    (ROTS_SPLIT_RAW >= 32 ? 32                                                                    \
                          : ROTS_SPLIT_RAW >= 16 ? 16                                             \
                                                 : ROTS_SPLIT_RAW >= 8 ? 8                        \
                                                                       : ROTS_SPLIT_RAW >= 4 ? 4 \
                                                                                             : ROTS_SPLIT_RAW >= 2 ? 2 : 1)
#define ROTS_HALVES (QAP_SYM ? 1 : 2)
#define NN (QAP_N * QAP_N)

// Delta arithmetic: int32 where the host proved every delta and partial sum fits
// (QAP_DELTA32: 16 (n + 4) max|a| max|b| < 2^31; half the shared memory and shuffles, and
// 32-bit multiplies), else int64.
#if QAP_DELTA32
typedef int dval;
typedef int2 dpair;
#define make_dpair make_int2
#define ROTS_PAIRS_PAD ((QAP_PAIRS + 3) & ~3)
#else
typedef i64 dval;
typedef longlong2 dpair;
#define make_dpair make_longlong2
#define ROTS_PAIRS_PAD ((QAP_PAIRS + 1) & ~1)
#endif

// A candidate move as one 64-bit key whose unsigned order is Taillard's choice (class, delta,
// pair): class in bits 62-63, the biased delta in bits 16-61 (the host requires
// |delta| < 2^45), the pair (r << 8) | s (n <= 256) in bits 0-15. One u64 minimum replaces the
// three-field comparison, and a warp reduces it with two shuffles per step.
typedef unsigned long long rkey;
#define ROTS_NONE 0xffffffffffffffffull

__device__ __forceinline__ rkey rots_key(int cls, dval d, int rs)
{
#if QAP_DELTA32
    return ((rkey)cls << 62) | ((rkey)((unsigned)d ^ 0x80000000u) << 16) | (rkey)rs;
#else
    return ((rkey)cls << 62) | ((rkey)(d + (1ll << 45)) << 16) | (rkey)rs;
#endif
}

__device__ __forceinline__ dval rots_key_delta(rkey key)
{
#if QAP_DELTA32
    return (int)((unsigned)(key >> 16) ^ 0x80000000u);
#else
    return (i64)((key >> 16) & ((1ull << 46) - 1)) - (1ll << 45);
#endif
}

__device__ __forceinline__ rkey warp_min_all(rkey key)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const rkey other = __shfl_xor_sync(0xffffffffu, key, offset);
        key = other < key ? other : key;
    }
    return key;
}

extern "C" __global__ void __launch_bounds__(ROTS_THREADS, ROTS_MIN_BLOCKS)
    qap_rots_block_fast(const int* __restrict__ a, const int* __restrict__ b, unsigned long long seed,
                        int first_solution, int iterations, const int* __restrict__ tenures, int aspiration,
                        int* __restrict__ perms, int* __restrict__ best_perms, i64* __restrict__ costs,
                        i64* __restrict__ best_costs, i64* __restrict__ deltas, int* __restrict__ tabu_all,
                        int* __restrict__ done_iterations)
{
    constexpr int T = ROTS_THREADS;
    constexpr int N = QAP_N;
    constexpr int S = ROTS_SPLIT;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    dval* delta = (dval*)shared_bytes;
    int4* anc = (int4*)(delta + ROTS_PAIRS_PAD);
    dpair* st = (dpair*)(anc + ROTS_HALVES * N);
    int* tabu = (int*)(st + ROTS_HALVES * N);
    mval* A = (mval*)(tabu + NN);
    mval* BP = A + NN;
    // p follows the matrices: 2 or 4 arrays of n^2 int16 keep it 4-byte aligned.
#if QAP_SYM
    int* p = (int*)(BP + NN);
#else
    mval* AT = BP + NN;
    mval* BPT = AT + NN;
    int* p = (int*)(BPT + NN);
#endif
    int* best_p = p + N;
    __shared__ rkey warp_best[32];
    __shared__ i64 s_cost, s_best;
    __shared__ int s_improved;

    const int sol = blockIdx.x;
    const int t = threadIdx.x;
    const int tenure_min = tenures[2 * sol], tenure_max = tenures[2 * sol + 1];
    int* gtabu = tabu_all + (size_t)sol * NN;
    i64* saved_delta = deltas + (size_t)sol * QAP_PAIRS;
    const int start_mode = done_iterations[sol];
    const int start_iteration = start_mode > 0 ? start_mode : 0;
    const bool fresh = start_mode == 0;

    for (int i = t; i < NN; i += T) {
        const int v = __ldg(&a[i]);
        A[i] = (mval)v;
#if !QAP_SYM
        AT[(i % N) * N + i / N] = (mval)v;
#endif
    }
    if (fresh) {
        if (t == 0) qap_start_permutation(p, seed, (u64)(first_solution + sol));
    } else {
        for (int i = t; i < N; i += T) {
            p[i] = perms[(size_t)sol * N + i];
            best_p[i] = best_perms[(size_t)sol * N + i];
        }
    }
    if (start_mode <= 0) {
        for (int i = t; i < NN; i += T) tabu[i] = -i;  // Taillard's distinct start values
    } else {
        for (int i = t; i < NN; i += T) tabu[i] = gtabu[i];
    }
    __syncthreads();
    if (fresh) {
        for (int i = t; i < N; i += T) best_p[i] = p[i];
    }
    for (int i = t; i < NN; i += T) {
        const int x = i / N, y = i % N;
        const int v = __ldg(&b[p[x] * N + p[y]]);
        BP[i] = (mval)v;
#if !QAP_SYM
        BPT[y * N + x] = (mval)v;
#endif
    }
    if (start_mode <= 0) {
        if (t == 0) {
            const i64 c = qap_cost(a, b, p);
            s_cost = c;
            const i64 old_best = fresh ? c : best_costs[sol];
            s_improved = c < old_best;
            s_best = c < old_best ? c : old_best;
        }
        if (t < QAP_PAIRS) {
            int r, s;
            qap_pair_of(t, &r, &s);
            for (int k = t; k < QAP_PAIRS; k += T) {
                delta[k] = (dval)qap_swap_delta(a, b, p, r, s);
                qap_pair_advance(&r, &s, T);
            }
        }
    } else {
        for (int k = t; k < QAP_PAIRS; k += T) delta[k] = (dval)saved_delta[k];
        if (t == 0) {
            s_cost = costs[sol];
            s_best = best_costs[sol];
            s_improved = 0;
        }
    }
    __syncthreads();
    if (!fresh && s_improved) {
        for (int i = t; i < N; i += T) best_p[i] = p[i];
    }
    i64 cost = s_cost;
    i64 best_cost = s_best;

    // The pairs this thread owns, packed (r << 8) | s (the same order as k), or -1.
    int own[ROTS_PPT];
    {
        int r = 0, s = 1;
        if (t < QAP_PAIRS) qap_pair_of(t, &r, &s);
#pragma unroll
        for (int i = 0; i < ROTS_PPT; ++i) {
            const bool valid = t + i * T < QAP_PAIRS;
            own[i] = valid ? (r << 8) | s : -1;
            if (valid) qap_pair_advance(&r, &s, T);
        }
    }
    const int span = tenure_max - tenure_min + 1;
    const u64 stream_id = (u64)(first_solution + sol);

    for (int step = 0; step < iterations; ++step) {
        const int it = start_iteration + step + 1;  // Taillard counts from 1
        // 1. Evaluate the owned moves (Taillard's rules, as in qap_rots_block).
        // A move aspires by cost when delta < best - cost (at most 0).
        const i64 beats = best_cost - cost;
        rkey mine = ROTS_NONE;
#pragma unroll
        for (int i = 0; i < ROTS_PPT; ++i) {
            if (own[i] >= 0) {
                const int r = own[i] >> 8, s = own[i] & 0xff;
                const dval d = delta[t + i * T];
                const int tr = tabu[r * N + p[s]];
                const int ts = tabu[s * N + p[r]];
                const bool allowed = tr < it || ts < it;
                const bool aspired = tr < it - aspiration || ts < it - aspiration || d < beats;
                const rkey key = rots_key(aspired ? 0 : (allowed ? 1 : 2), d, own[i]);
                mine = key < mine ? key : mine;
            }
        }
        mine = warp_min_all(mine);
        if ((t & 31) == 0) warp_best[t >> 5] = mine;
        __syncthreads();
        // 2. Every warp reduces the warp minima itself, so every thread knows the move.
        rkey key = (t & 31) < T / 32 ? warp_best[t & 31] : ROTS_NONE;
        key = warp_min_all(key);
        const int r = (int)(key >> 8) & 0xff, s = (int)key & 0xff;
        const dval move_delta = rots_key_delta(key);
        cost += move_delta;
        const bool improved = cost < best_cost;
        if (improved) best_cost = cost;
        if (t == 0) {
            const int left_r = p[r];
            const int left_s = p[s];
            p[r] = left_s;
            p[s] = left_r;
            tabu[r * N + left_r] = it + tenure_min + (int)(qap_hash(seed ^ 0x7ab05eedull, stream_id, 2ull * it) % (u64)span);
            tabu[s * N + left_s] = it + tenure_min + (int)(qap_hash(seed ^ 0x7ab05eedull, stream_id, 2ull * it + 1) % (u64)span);
        }
        // Swap rows and columns r, s of BP (and BP^T) and stage the update terms; thread u owns
        // entries (r,u), (s,u), (u,r), (u,s) for u outside {r, s}, thread r the 2 x 2 block.
        for (int u = t; u < N; u += T) {
            if (u != r && u != s) {
                const int bru = BP[r * N + u], bsu = BP[s * N + u];
                BP[r * N + u] = bsu;
                BP[s * N + u] = bru;
#if QAP_SYM
                BP[u * N + r] = bsu;
                BP[u * N + s] = bru;
                anc[u] = make_int4(A[u * N + r], A[u * N + s], bsu, bru);
                st[u] = make_dpair((dval)A[r * N + u] - A[s * N + u], (dval)bru - bsu);
#else
                const int bur = BP[u * N + r], bus = BP[u * N + s];
                BP[u * N + r] = bus;
                BP[u * N + s] = bur;
                BPT[u * N + r] = bsu;
                BPT[u * N + s] = bru;
                BPT[r * N + u] = bus;
                BPT[s * N + u] = bur;
                anc[2 * u] = make_int4(A[u * N + r], A[u * N + s], A[r * N + u], A[s * N + u]);
                anc[2 * u + 1] = make_int4(bus, bur, bsu, bru);
                st[2 * u] = make_dpair((dval)A[r * N + u] - A[s * N + u], (dval)A[u * N + r] - A[u * N + s]);
                st[2 * u + 1] = make_dpair((dval)bru - bsu, (dval)bur - bus);
#endif
            } else if (u == r) {
                const int rr = BP[r * N + r], rs = BP[r * N + s], sr = BP[s * N + r], ss = BP[s * N + s];
                BP[r * N + r] = ss;
                BP[s * N + s] = rr;
                BP[r * N + s] = sr;
                BP[s * N + r] = rs;
#if QAP_SYM
                anc[r] = make_int4(A[r * N + r], A[r * N + s], ss, sr);
                anc[s] = make_int4(A[s * N + r], A[s * N + s], rs, rr);
#else
                BPT[r * N + r] = ss;
                BPT[s * N + s] = rr;
                BPT[r * N + s] = rs;
                BPT[s * N + r] = sr;
                anc[2 * r] = make_int4(A[r * N + r], A[r * N + s], A[r * N + r], A[s * N + r]);
                anc[2 * r + 1] = make_int4(ss, sr, ss, rs);
                anc[2 * s] = make_int4(A[s * N + r], A[s * N + s], A[r * N + s], A[s * N + s]);
                anc[2 * s + 1] = make_int4(rs, rr, sr, rr);
#endif
            }
        }
        __syncthreads();
        // 3. O(1) updates of the owned pairs disjoint from the swap.
#pragma unroll
        for (int i = 0; i < ROTS_PPT; ++i) {
            if (own[i] >= 0) {
                const int u = own[i] >> 8, v = own[i] & 0xff;
                if (u != r && u != s && v != r && v != s) {
#if QAP_SYM
                    const dpair su = st[u], sv = st[v];
                    delta[t + i * T] += 2 * (su.x - sv.x) * (su.y - sv.y);
#else
                    const dpair au = st[2 * u], av = st[2 * v];
                    const dpair bu = st[2 * u + 1], bv = st[2 * v + 1];
                    delta[t + i * T] += (au.x - av.x) * (bu.x - bv.x) + (au.y - av.y) * (bu.y - bv.y);
#endif
                }
            }
        }
        if (t == 0) delta[qap_pair_index(r, s)] = -move_delta;  // swapping back undoes the move
        if (improved) {
            for (int i = t; i < N; i += T) best_p[i] = p[i];
        }
        // The pairs (r, v) and (s, v), v outside {r, s}, from A and the new BP.
        for (int base = 0; base < N * S; base += T) {
            const int v = (base + t) / S;
            const int part = (base + t) % S;
            const bool active = v < N && v != r && v != s;
            dval dr = 0, ds = 0;
            if (active) {
                for (int k = part; k < N; k += S) {
                    const int akv = A[k * N + v];
                    const int bkv = BP[k * N + v];
#if QAP_SYM
                    const int4 an = anc[k];  // A[k][r], A[k][s], BP[k][r], BP[k][s]
                    const dval tr = (dval)(an.x - akv) * (bkv - an.z);
                    const dval ts = (dval)(an.y - akv) * (bkv - an.w);
#else
                    const int avk = AT[k * N + v];
                    const int bvk = BPT[k * N + v];
                    const int4 aa = anc[2 * k];      // A[k][r], A[k][s], A[r][k], A[s][k]
                    const int4 bb = anc[2 * k + 1];  // BP[k][r], BP[k][s], BP[r][k], BP[s][k]
                    const dval tr = (dval)(aa.x - akv) * (bkv - bb.x) + (dval)(aa.z - avk) * (bvk - bb.z);
                    const dval ts = (dval)(aa.y - akv) * (bkv - bb.y) + (dval)(aa.w - avk) * (bvk - bb.w);
#endif
                    dr += (k != r && k != v) ? tr : 0;
                    ds += (k != s && k != v) ? ts : 0;
                }
            }
#pragma unroll
            for (int offset = S / 2; offset > 0; offset >>= 1) {
                dr += __shfl_xor_sync(0xffffffffu, dr, offset);
                ds += __shfl_xor_sync(0xffffffffu, ds, offset);
            }
            if (active && part == 0) {
                const dval avv = A[v * N + v], bvv = BP[v * N + v];
#if QAP_SYM
                dr = 2 * dr + ((dval)A[r * N + r] - avv) * (bvv - BP[r * N + r]);
                ds = 2 * ds + ((dval)A[s * N + s] - avv) * (bvv - BP[s * N + s]);
#else
                dr += ((dval)A[r * N + r] - avv) * (bvv - BP[r * N + r]) +
                      ((dval)A[r * N + v] - A[v * N + r]) * ((dval)BP[v * N + r] - BP[r * N + v]);
                ds += ((dval)A[s * N + s] - avv) * (bvv - BP[s * N + s]) +
                      ((dval)A[s * N + v] - A[v * N + s]) * ((dval)BP[v * N + s] - BP[s * N + v]);
#endif
                delta[r < v ? qap_pair_index(r, v) : qap_pair_index(v, r)] = dr;
                delta[s < v ? qap_pair_index(s, v) : qap_pair_index(v, s)] = ds;
            }
        }
        __syncthreads();
    }

    // Keep the state for the next launch.
    for (int i = t; i < N; i += T) {
        perms[(size_t)sol * N + i] = p[i];
        best_perms[(size_t)sol * N + i] = best_p[i];
    }
    for (int k = t; k < QAP_PAIRS; k += T) saved_delta[k] = delta[k];
    for (int i = t; i < NN; i += T) gtabu[i] = tabu[i];
    if (t == 0) {
        costs[sol] = cost;
        best_costs[sol] = best_cost;
        done_iterations[sol] = start_iteration + iterations;
    }
}
#endif  // !QAP_DELTA_GLOBAL
