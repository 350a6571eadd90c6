// PFSP `tabu-full` (Czapinski & Barnes): one thread per child of the swap neighbourhood, each
// rebuilding its child's whole completion-time table.
//
// One launch evaluates one tabu-search iteration's neighbourhood. Thread g of the grid owns
// pair g (row-major over positions i < j): it walks the parent sequence with positions i and j
// exchanged, keeping one row of m completion times in registers (n m cell updates), and forms
// the move key (makespan, pair). A child is admissible unless its pair is in the forbidden list
// the host derived from the tabu list, or its makespan beats the best so far (aspiration). The
// block reduces both keys (admissible, any) and folds them into keys[2 slot..] with atomicMin,
// so the host reads back the exact move the CPU tabu (solvers/src/pfsp/tabu.rs) takes.
//
// Block shared memory: the parent sequence (4 n bytes), the block's tabu flags and 512 bytes
// of reduction scratch. Tunables: threads per block (32..1024, multiple of 32), maxrregcount
// and flags; PFSP_WIDE when completion times may exceed int32.
#include "common.cuh"

extern "C" __global__ void pfsp_tabu_full(const int* __restrict__ times, const int* __restrict__ control,
                                          i64 best_value, int slot, u64* keys)
{
    __shared__ int perm[PFSP_N];
    __shared__ unsigned char tabu[1024];
    __shared__ u64 scratch[64];
    pfsp_tabu_prologue(control, slot, keys, perm, tabu);
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    u64 any = PFSP_NO_KEY, admissible = PFSP_NO_KEY;
    if (k < PFSP_PAIRS) {
        int i, j;
        pfsp_unrank_pair(k, i, j);
        ctime_t c[PFSP_M];
#pragma unroll
        for (int q = 0; q < PFSP_M; ++q) c[q] = 0;
        for (int p = 0; p < PFSP_N; ++p) {
            const int job = p == i ? perm[j] : (p == j ? perm[i] : perm[p]);
            pfsp_advance(c, times, job);
        }
        const i64 value = (i64)c[PFSP_M - 1];
        any = pfsp_key(value, k);
        if (!tabu[threadIdx.x] || value < best_value) admissible = any;
    }
    pfsp_block_min2_atomic(admissible, any, scratch, keys + 2 * slot);
}
