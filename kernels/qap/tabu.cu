// QAP `tabu`: one thread per start solution, tabu search with a recency-based tabu structure.
//
// Thread s owns solution s: its permutation, the iteration at which each facility last moved
// (`moved`), and its best solution so far, all in thread-local arrays. Each iteration scans
// every swap with the O(n) delta; a swap is tabu when either facility moved within the last
// `tenure` iterations, unless it would beat the thread's best cost (aspiration). The best
// admissible swap is applied even when it worsens the cost; if every swap is tabu and none
// aspires, the best swap overall is applied. Fixed iteration budget.
//
// Tunables: solutions, threads per block, `tenure` (run-time; 1..n/2, the host's default is
// n/4), iterations, maxrregcount and flags. Three n-sized arrays per thread make this the
// variant with the most local memory: watch spills when capping registers.
#include "common.cuh"

extern "C" __global__ void qap_tabu(const int* __restrict__ a, const int* __restrict__ b, int solutions,
                                    unsigned long long seed, int first_solution, int iterations, int tenure,
                                    int* __restrict__ perms, i64* __restrict__ costs, int* __restrict__ scans)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= solutions) {
        return;
    }
    int p[QAP_N];
    int best_p[QAP_N];
    int moved[QAP_N];
    qap_start_permutation(p, seed, (u64)(first_solution + s));
    for (int i = 0; i < QAP_N; ++i) {
        best_p[i] = p[i];
        moved[i] = -(1 << 30);
    }
    i64 cost = qap_cost(a, b, p);
    i64 best_cost = cost;
    for (int it = 0; it < iterations; ++it) {
        i64 chosen = 0, fallback = 0;
        int cr = -1, cs = -1, fr = 0, fs = 1;
        bool have_fallback = false;
        for (int r = 0; r < QAP_N - 1; ++r) {
            for (int c = r + 1; c < QAP_N; ++c) {
                const i64 d = qap_swap_delta(a, b, p, r, c);
                if (!have_fallback || d < fallback) {
                    fallback = d;
                    fr = r;
                    fs = c;
                    have_fallback = true;
                }
                const bool tabu = it - moved[r] <= tenure || it - moved[c] <= tenure;
                const bool admissible = !tabu || cost + d < best_cost;
                if (admissible && (cr < 0 || d < chosen)) {
                    chosen = d;
                    cr = r;
                    cs = c;
                }
            }
        }
        if (cr < 0) {
            chosen = fallback;
            cr = fr;
            cs = fs;
        }
        const int t = p[cr];
        p[cr] = p[cs];
        p[cs] = t;
        moved[cr] = it;
        moved[cs] = it;
        cost += chosen;
        if (cost < best_cost) {
            best_cost = cost;
            for (int i = 0; i < QAP_N; ++i) {
                best_p[i] = p[i];
            }
        }
    }
    qap_store(perms, costs, s, best_p, best_cost);
    scans[s] = iterations;
}
