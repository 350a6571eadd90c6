// QAP `rots-block`: one block per solution running Taillard's robust tabu search.
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
//      uniformly from [tenure_min, tenure_max] (the counter-based RNG).
//   3. the block recomputes the deltas: O(1) for pairs disjoint from the swap through
//      per-facility terms staged in shared memory, O(n) for the 2n - 3 pairs that touch it.
// State is kept in global memory between launches, so the host can run a time limit as a
// sequence of launches that continue the same trajectories. Between launches the host may
// restart a stagnating block from a perturbed copy of its best solution (written into `perms`,
// with done_iterations = -1): Ro-TS alone stalls on tai80a/tai100a.
//
// Tunables: threads per block (32..1024, multiple of 32), solutions per launch (blocks),
// iterations per launch, tenure_min/tenure_max (default 0.9 n .. 1.1 n), aspiration (default
// 2 n^2), maxrregcount and flags. Shared memory: 8 n(n-1)/2 + 40 n bytes, so n <= 230 on H100.
#include "common.cuh"

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
                                          int tenure_min, int tenure_max, int aspiration,
                                          int* __restrict__ perms, int* __restrict__ best_perms,
                                          i64* __restrict__ costs, i64* __restrict__ best_costs,
                                          i64* __restrict__ deltas, int* __restrict__ tabu_all,
                                          int* __restrict__ done_iterations)
{
    extern __shared__ unsigned char shared_bytes[];
    i64* delta = (i64*)shared_bytes;                       // QAP_PAIRS
    i64* x = delta + QAP_PAIRS;                            // per-facility update terms
    i64* y = x + QAP_N;
    i64* bs = y + QAP_N;
    i64* bt = bs + QAP_N;
    int* p = (int*)(bt + QAP_N);                           // QAP_N
    int* best_p = p + QAP_N;                               // QAP_N
    __shared__ Key warp_best[32];
    __shared__ i64 cost, best_cost;
    __shared__ int move_r, move_s, improved;

    const int sol = blockIdx.x;
    const int t = threadIdx.x;
    const int T = blockDim.x;
    int* tabu = tabu_all + (size_t)sol * QAP_N * QAP_N;
    i64* saved_delta = deltas + (size_t)sol * QAP_PAIRS;
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
        for (int k = t; k < QAP_PAIRS; k += T) delta[k] = saved_delta[k];
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
    for (int k = t; k < QAP_PAIRS; k += T) saved_delta[k] = delta[k];
    if (t == 0) {
        costs[sol] = cost;
        best_costs[sol] = best_cost;
        done_iterations[sol] = start_iteration + iterations;
    }
}
