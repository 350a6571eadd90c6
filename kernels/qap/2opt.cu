// QAP `2opt`: one thread per start solution, best-improvement pairwise-swap local search.
//
// Thread s owns solution s: it draws its start permutation from the counter-based RNG,
// then each iteration scans all n(n-1)/2 swaps with the O(n) general delta and applies the
// best improving one (the first in (r, s) order on ties, as the CPU reference does), until a
// local optimum or `max_iters` scans. Matrices come through the read-only path (__ldg).
//
// Tunables: solutions P (grid x block threads; 512..16384), threads per block (multiple of
// 32, up to 1024, dividing P), maxrregcount and ptxas/NVRTC flags via the runtime.
#include "common.cuh"

extern "C" __global__ void qap_2opt(const int* __restrict__ a, const int* __restrict__ b, int solutions,
                                    unsigned long long seed, int first_solution, int max_iters,
                                    int* __restrict__ perms, i64* __restrict__ costs,
                                    int* __restrict__ scans)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= solutions) {
        return;
    }
    int p[QAP_N];
    qap_start_permutation(p, seed, (u64)(first_solution + s));
    i64 cost = qap_cost(a, b, p);
    const int it = qap_two_opt_search<ReadOnly>(a, b, p, &cost, max_iters);
    qap_store(perms, costs, s, p, cost);
    scans[s] = it;
}
