// QAP `2opt-shared`: the `2opt` search with both matrices staged in shared memory.
//
// Each block first copies A and B (2 n^2 int32) into dynamic shared memory, cooperatively and
// coalesced; then thread s of the grid runs the same best-improvement search as `2opt` for
// solution s, reading every matrix entry from shared memory instead of L1/L2.
//
// Fits when 8 n^2 bytes <= the device's opt-in shared memory per block (227 KiB on H100/H200,
// so n <= 170); the host driver refuses larger n with a clear error rather than fall back
// silently. Fewer, larger blocks amortise the staging; occupancy is bounded by shared memory
// (one or two blocks per SM at n ~ 100).
//
// Tunables: as `2opt` (solutions, threads per block, maxrregcount, flags).
#include "common.cuh"

extern "C" __global__ void qap_2opt_shared(const int* __restrict__ a, const int* __restrict__ b, int solutions,
                                           unsigned long long seed, int first_solution, int max_iters,
                                           int* __restrict__ perms, i64* __restrict__ costs,
                                           int* __restrict__ scans)
{
    extern __shared__ int matrices[];
    int* sa = matrices;
    int* sb = matrices + QAP_N * QAP_N;
    for (int i = threadIdx.x; i < QAP_N * QAP_N; i += blockDim.x) {
        sa[i] = __ldg(&a[i]);
        sb[i] = __ldg(&b[i]);
    }
    __syncthreads();

    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= solutions) {
        return;
    }
    int p[QAP_N];
    qap_start_permutation(p, seed, (u64)(first_solution + s));
    i64 cost = qap_cost<Plain>(sa, sb, p);
    const int it = qap_two_opt_search<Plain>(sa, sb, p, &cost, max_iters);
    qap_store(perms, costs, s, p, cost);
    scans[s] = it;
}
