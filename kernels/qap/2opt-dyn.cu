// QAP `2opt-dyn`: dynamic parallelism. A parent thread owns one solution; each step it
// applies the best move its child grid found, then launches a child grid that searches the
// whole neighbourhood of the new permutation in DYN_CHILD_THREADS chunks.
//
// CDP2 (the only dynamic parallelism on sm_90) has no device-side wait for children, so a
// parent cannot consume its children's results inside one launch. The host therefore launches
// the parent grid once per step; the stream orders each step after the previous step's
// children (a grid completes only when its children have), and step k applies what step
// k - 1's children found. Same moves, same tie-breaking as `2opt`: child thread t takes pairs
// k = t, t + DYN_CHILD_THREADS, ... in (r, s) order and keeps its first strict minimum; the
// parent reduces (delta, k) lexicographically, which is the first minimum in (r, s) order.
//
// Tunables: DYN_CHILD_THREADS (chunks per neighbourhood, 32..1024, a power of two helps),
// solutions, parent threads per block, maxrregcount and flags. The host raises the device
// runtime's pending-launch limit to the number of solutions.
#include "common.cuh"

#ifndef DYN_CHILD_THREADS
#define DYN_CHILD_THREADS 64
#endif

extern "C" __global__ void qap_2opt_dyn_child(const int* __restrict__ a, const int* __restrict__ b,
                                              const int* __restrict__ perm, i64* __restrict__ best_delta,
                                              int* __restrict__ best_pair)
{
    int p[QAP_N];
    for (int i = 0; i < QAP_N; ++i) {
        p[i] = perm[i];
    }
    const int t = threadIdx.x;
    i64 best = 0;
    int best_k = -1;
    int r, s;
    qap_pair_of(t < QAP_PAIRS ? t : 0, &r, &s);
    for (int k = t; k < QAP_PAIRS; k += DYN_CHILD_THREADS) {
        const i64 d = qap_swap_delta(a, b, p, r, s);
        if (d < best) {
            best = d;
            best_k = k;
        }
        qap_pair_advance(&r, &s, DYN_CHILD_THREADS);
    }
    best_delta[t] = best;
    best_pair[t] = best_k;
}

// One step for every solution. `step` 0 draws the start permutations; a step with
// `launch` = 0 only applies the previous step's results (the budget is spent).
extern "C" __global__ void qap_2opt_dyn_step(const int* __restrict__ a, const int* __restrict__ b, int solutions,
                                             unsigned long long seed, int first_solution, int step, int launch,
                                             int* __restrict__ perms, i64* __restrict__ costs,
                                             int* __restrict__ scans, int* __restrict__ active,
                                             i64* __restrict__ child_delta, int* __restrict__ child_pair,
                                             int* __restrict__ launched)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= solutions) {
        return;
    }
    int* perm = perms + (size_t)s * QAP_N;
    if (step == 0) {
        int p[QAP_N];
        qap_start_permutation(p, seed, (u64)(first_solution + s));
        for (int i = 0; i < QAP_N; ++i) {
            perm[i] = p[i];
        }
        costs[s] = qap_cost(a, b, p);
        scans[s] = 0;
        active[s] = 1;
    } else if (active[s]) {
        i64 best = 0;
        int best_k = -1;
        for (int t = 0; t < DYN_CHILD_THREADS; ++t) {
            const i64 d = child_delta[(size_t)s * DYN_CHILD_THREADS + t];
            const int k = child_pair[(size_t)s * DYN_CHILD_THREADS + t];
            if (k >= 0 && (d < best || (d == best && best_k >= 0 && k < best_k))) {
                best = d;
                best_k = k;
            }
        }
        scans[s] += 1;
        if (best_k < 0) {
            active[s] = 0;
        } else {
            int r, c;
            qap_pair_of(best_k, &r, &c);
            const int tmp = perm[r];
            perm[r] = perm[c];
            perm[c] = tmp;
            costs[s] += best;
        }
    }
    if (launch && active[s]) {
        qap_2opt_dyn_child<<<1, DYN_CHILD_THREADS>>>(a, b, perm, child_delta + (size_t)s * DYN_CHILD_THREADS,
                                                     child_pair + (size_t)s * DYN_CHILD_THREADS);
        atomicAdd(launched, 1);
    }
}
