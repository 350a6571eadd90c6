// Shared pieces of the HW/SW partitioning kernels (GPTS, Hou et al.): the 2-flip candidate
// evaluation, block scans, the decoupled look-back of the single-kernel compaction, the tabu
// evaluation of the compacted candidates and the move kernel.
//
// The neighbourhood of one iteration is the N = n (n - 1) / 2 2-flips (i, j), i < j, numbered
// row-major (the CPU `sts` order, solvers/src/hwsw/tabu.rs). Per node the host keeps on the GPU
//   w[k]  = ds_k + dc_k : the change of S + C when node k flips alone,
//   dh[k] = the change of H when node k flips alone,
//   x[k]  = 0 hardware, 1 software,
// so candidate (i, j) is feasible iff w[i] + w[j] - 2 inner_ij <= R - S - C (`slack`), with
// inner_ij = +c_ij if x_i == x_j else -c_ij (an edge (i, j) does not change when both flip),
// and its hardware cost is H + dh[i] + dh[j]. Every value is int64 (the host bounds every cost
// sum below 2^61, so no sum here overflows). Edges (i, j), j > i, come from the "upper" CSR
// lists, sorted by j, that a thread walks alongside its consecutive candidates.
//
// Compile-time parameters (-D defines set by solvers/src/hwsw/gpu):
//   HWSW_THREADS    threads per block of the neighbourhood kernels (multiple of 32, <= 1024).
//   HWSW_ITEMS      consecutive candidates per thread; a chunk is HWSW_THREADS * HWSW_ITEMS
//                   candidates, the unit of the scan.
//   HWSW_ZERO_COPY  1: the bit-level tabu status lives in mapped host memory (the host sets
//                   and clears bits itself; the tabu kernel reads them over PCIe); 0: in device
//                   memory, where the move kernel sets and clears the bits.
#pragma once

#ifndef HWSW_THREADS
#define HWSW_THREADS 256
#endif
#ifndef HWSW_ITEMS
#define HWSW_ITEMS 4
#endif
#ifndef HWSW_ZERO_COPY
#define HWSW_ZERO_COPY 1
#endif

#if HWSW_THREADS % 32 != 0 || HWSW_THREADS > 1024 || HWSW_THREADS < 32
#error "HWSW_THREADS must be a multiple of 32 in 32..1024"
#endif

typedef long long i64;
typedef unsigned long long u64;

#define HWSW_CHUNK ((u64)HWSW_THREADS * HWSW_ITEMS)
#define HWSW_WARPS (HWSW_THREADS / 32)
#define HWSW_FULL 0xffffffffu
#define HWSW_NONE 0xffffffffffffffffull
#define HWSW_I64_MAX 0x7fffffffffffffffll

// The graph as the kernels read it.
struct HwswGraph {
    const i64* w;               // n: ds + dc of each node
    const i64* dh;              // n: dH of each node
    const unsigned char* x;     // n: current solution
    const unsigned* up_start;   // n + 1: upper adjacency (neighbours j > i), sorted by j
    const int* up_node;
    const i64* up_cost;
};

// The graph arrives as six kernel parameters (in the struct's order).
#define HWSW_GRAPH_PARAMS                                                                      \
    const i64 *__restrict__ g_w, const i64 *__restrict__ g_dh,                                 \
        const unsigned char *__restrict__ g_x, const unsigned *__restrict__ g_up_start,        \
        const int *__restrict__ g_up_node, const i64 *__restrict__ g_up_cost
#define HWSW_GRAPH {g_w, g_dh, g_x, g_up_start, g_up_node, g_up_cost}

__device__ __forceinline__ u64 hwsw_row_start(u64 i, u64 n)
{
    return i * (2 * n - i - 1) / 2;
}

// Candidate index k -> (i, j). The double square root is within one of the answer for
// n <= 10^5 (k < 2^33); the two loops correct it exactly.
__device__ __forceinline__ void hwsw_pair_of(u64 k, u64 n, int& i, int& j)
{
    const double b = 2.0 * (double)n - 1.0;
    const double d = b * b - 8.0 * (double)k;
    i64 r = (i64)((b - sqrt(d > 0.0 ? d : 0.0)) * 0.5);
    if (r < 0) r = 0;
    if (r > (i64)n - 2) r = (i64)n - 2;
    while (r > 0 && hwsw_row_start((u64)r, n) > k) --r;
    while (r < (i64)n - 2 && hwsw_row_start((u64)r + 1, n) <= k) ++r;
    i = (int)r;
    j = (int)(r + 1 + (i64)(k - hwsw_row_start((u64)r, n)));
}

// Evaluates HWSW_ITEMS consecutive candidates first, first + 1, ... (those >= total are
// infeasible); bit t of the result is candidate first + t's feasibility.
__device__ __forceinline__ unsigned hwsw_evaluate_items(const HwswGraph& g, u64 n, u64 total,
                                                        u64 first, i64 slack)
{
    if (first >= total) return 0;
    int i, j;
    hwsw_pair_of(first, n, i, j);
    i64 wi = g.w[i];
    unsigned char xi = g.x[i];
    unsigned e = g.up_start[i], end = g.up_start[i + 1];
    unsigned bits = 0;
#pragma unroll
    for (int t = 0; t < HWSW_ITEMS; ++t) {
        if (first + t < total) {
            while (e < end && g.up_node[e] < j) ++e;
            const i64 c = (e < end && g.up_node[e] == j) ? g.up_cost[e] : 0;
            const i64 inner = xi == g.x[j] ? c : -c;
            if (wi + g.w[j] - 2 * inner <= slack) bits |= 1u << t;
            if (++j == (int)n) {
                ++i;
                j = i + 1;
                if (i < (int)n - 1) {
                    wi = g.w[i];
                    xi = g.x[i];
                    e = g.up_start[i];
                    end = g.up_start[i + 1];
                }
            }
        }
    }
    return bits;
}

// Exclusive scan of one value per thread over the block; `total` gets the block's sum.
// Ends with a barrier, so it may be called again at once.
__device__ __forceinline__ unsigned hwsw_block_exclusive_scan(unsigned v, unsigned& total)
{
    __shared__ unsigned warp_sums[HWSW_WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned x = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned y = __shfl_up_sync(HWSW_FULL, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        unsigned s = lane < HWSW_WARPS ? warp_sums[lane] : 0;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const unsigned y = __shfl_up_sync(HWSW_FULL, s, o);
            if (lane >= o) s += y;
        }
        if (lane < HWSW_WARPS) warp_sums[lane] = s;
    }
    __syncthreads();
    const unsigned before = warp > 0 ? warp_sums[warp - 1] : 0;
    total = warp_sums[HWSW_WARPS - 1];
    __syncthreads();
    return before + x - v;
}

// ---- decoupled look-back (single-kernel compaction, section 3.2) ----------------------------
// One status word per chunk: [flag 2 bits][epoch 24 bits][count 38 bits]. The epoch (the
// host's evaluation counter) tells this evaluation's words from the last one's, so the
// array is never cleared. AGGREGATE: the chunk's own count; PREFIX: the count of every
// candidate up to and including the chunk.
#define HWSW_FLAG_AGGREGATE 1ull
#define HWSW_FLAG_PREFIX 2ull
#define HWSW_COUNT_MASK ((1ull << 38) - 1)

__device__ __forceinline__ u64 hwsw_status(u64 flag, unsigned epoch, u64 count)
{
    return (flag << 62) | ((u64)(epoch & 0xffffffu) << 38) | (count & HWSW_COUNT_MASK);
}

__device__ __forceinline__ void hwsw_publish(u64* status, u64 chunk, u64 word)
{
    __threadfence();
    atomicExch(status + chunk, word);
}

// Warp 0 of the block: publishes the chunk's aggregate, looks back over the predecessors'
// words 32 at a time until a PREFIX, publishes the chunk's PREFIX; returns (in every lane) the
// number of feasible candidates before the chunk. Chunks are claimed in order from a counter,
// so every predecessor belongs to a running block and the wait ends.
__device__ __forceinline__ u64 hwsw_look_back(u64* status, u64 chunk, unsigned epoch,
                                              unsigned aggregate)
{
    const int lane = threadIdx.x & 31;
    if (chunk == 0) {
        if (lane == 0) hwsw_publish(status, 0, hwsw_status(HWSW_FLAG_PREFIX, epoch, aggregate));
        return 0;
    }
    if (lane == 0) hwsw_publish(status, chunk, hwsw_status(HWSW_FLAG_AGGREGATE, epoch, aggregate));
    u64 before = 0;
    i64 p = (i64)chunk - 1;
    const u64 tag = (u64)(epoch & 0xffffffu);
    while (true) {
        const i64 q = p - lane;
        u64 word = q >= 0 ? *(volatile u64*)(status + q) : hwsw_status(HWSW_FLAG_PREFIX, epoch, 0);
        const u64 flag = word >> 62;
        const bool ready = flag != 0 && ((word >> 38) & 0xffffffu) == tag;
        if (!__all_sync(HWSW_FULL, ready)) continue;
        const unsigned prefixes = __ballot_sync(HWSW_FULL, flag == HWSW_FLAG_PREFIX);
        const int stop = prefixes ? __ffs(prefixes) - 1 : 31;
        u64 mine = lane <= stop ? (word & HWSW_COUNT_MASK) : 0;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) mine += __shfl_xor_sync(HWSW_FULL, mine, o);
        before += mine;
        if (prefixes) break;
        p -= 32;
    }
    if (lane == 0) {
        hwsw_publish(status, chunk, hwsw_status(HWSW_FLAG_PREFIX, epoch, before + aggregate));
    }
    return before;
}

// Writes the indices of the feasible candidates among a thread's items at out[position...].
__device__ __forceinline__ void hwsw_write_feasible(u64* out, u64 position, u64 first, unsigned bits)
{
#pragma unroll
    for (int t = 0; t < HWSW_ITEMS; ++t) {
        if (bits & (1u << t)) out[position++] = first + t;
    }
}

// The persistent-threads loop of the single-kernel compaction: blocks claim chunks in order,
// `bits_of(first)` gives the feasibility bits of a thread's items (evaluated, or read from the
// flags of a separate evaluation), feasible indices go to out in index order, and the block of
// the last chunk writes the total to *count.
template <typename Bits>
__device__ __forceinline__ void hwsw_compact_chunks(u64 total, u64* out, u64* count, u64* status,
                                                    unsigned* chunk_counter, unsigned epoch,
                                                    Bits bits_of)
{
    __shared__ unsigned claimed;
    __shared__ u64 chunk_before;
    const u64 chunks = (total + HWSW_CHUNK - 1) / HWSW_CHUNK;
    while (true) {
        if (threadIdx.x == 0) claimed = atomicAdd(chunk_counter, 1u);
        __syncthreads();
        const u64 chunk = claimed;
        if (chunk >= chunks) break;
        const u64 first = chunk * HWSW_CHUNK + (u64)threadIdx.x * HWSW_ITEMS;
        const unsigned bits = bits_of(first);
        unsigned aggregate;
        const unsigned local = hwsw_block_exclusive_scan(__popc(bits), aggregate);
        if (threadIdx.x < 32) {
            const u64 before = hwsw_look_back(status, chunk, epoch, aggregate);
            if (threadIdx.x == 0) {
                chunk_before = before;
                if (chunk == chunks - 1) *count = before + aggregate;
            }
        }
        __syncthreads();
        hwsw_write_feasible(out, chunk_before + local, first, bits);
        __syncthreads();
    }
}

// ---- tabu evaluation of the compacted candidates (section 3.5) ------------------------------
// Each thread walks its share of the compacted list keeping the best (least dH, then least
// index) admissible candidate in registers: not tabu, or tabu with H + dH below the best H
// found (dH < admit_below). Only a candidate that would improve the thread's best has its
// tabu bit read, so the PCIe reads of the zero-copy variant stay few. Block minima go to
// partial[]; the last block to finish reduces them and writes the answer to result (mapped
// host memory, read after the stream synchronises):
//   result[0] = number of feasible candidates, result[1] = 1 if an admissible one exists,
//   result[2] = its dH, result[3] = its index.
// It also rewinds the compaction's chunk counter and its own block counter for the next
// evaluation.
__device__ __forceinline__ void hwsw_min2(i64& v, u64& k, i64 v2, u64 k2)
{
    if (v2 < v || (v2 == v && k2 < k)) {
        v = v2;
        k = k2;
    }
}

__device__ __forceinline__ void hwsw_block_min(i64& v, u64& k)
{
    __shared__ i64 sv[HWSW_WARPS];
    __shared__ u64 sk[HWSW_WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        hwsw_min2(v, k, __shfl_xor_sync(HWSW_FULL, v, o), __shfl_xor_sync(HWSW_FULL, k, o));
    }
    if (lane == 0) {
        sv[warp] = v;
        sk[warp] = k;
    }
    __syncthreads();
    if (warp == 0) {
        v = lane < HWSW_WARPS ? sv[lane] : HWSW_I64_MAX;
        k = lane < HWSW_WARPS ? sk[lane] : HWSW_NONE;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            hwsw_min2(v, k, __shfl_xor_sync(HWSW_FULL, v, o), __shfl_xor_sync(HWSW_FULL, k, o));
        }
    }
    __syncthreads();
}

__device__ __forceinline__ bool hwsw_is_tabu(const unsigned* tabu_bits, u64 k)
{
#if HWSW_ZERO_COPY
    const unsigned word = *(volatile const unsigned*)(tabu_bits + (k >> 5));
#else
    const unsigned word = tabu_bits[k >> 5];
#endif
    return (word >> (k & 31)) & 1u;
}

extern "C" __global__ void __launch_bounds__(HWSW_THREADS)
    hwsw_tabu(const i64* __restrict__ dh, u64 n, const u64* __restrict__ candidates,
              const u64* count_in, i64 admit_below, const unsigned* tabu_bits, i64* partial_v,
              u64* partial_k, unsigned* blocks_done, unsigned* chunk_counter, u64* result)
{
    const u64 count = *count_in;
    // Pass 1 ignores the tabu status: the block's least (dH, index) is the answer unless it is
    // tabu and does not aspire, which one read tells. Only then (the block holds a listed
    // move, at most tabu-length blocks) pass 2 walks the block's share again reading bits, so
    // zero-copy costs about one PCIe read per block.
    i64 best_v = HWSW_I64_MAX;
    u64 best_k = HWSW_NONE;
    for (u64 t = (u64)blockIdx.x * HWSW_THREADS + threadIdx.x; t < count;
         t += (u64)gridDim.x * HWSW_THREADS) {
        const u64 k = candidates[t];
        int i, j;
        hwsw_pair_of(k, n, i, j);
        hwsw_min2(best_v, best_k, __ldg(dh + i) + __ldg(dh + j), k);
    }
    hwsw_block_min(best_v, best_k);
    __shared__ bool s_again;
    __shared__ i64 s_v;
    __shared__ u64 s_k;
    if (threadIdx.x == 0) {
        s_v = best_v;
        s_k = best_k;
        s_again = best_k != HWSW_NONE && best_v >= admit_below && hwsw_is_tabu(tabu_bits, best_k);
    }
    __syncthreads();
    best_v = s_v;
    best_k = s_k;
    if (s_again) {
        best_v = HWSW_I64_MAX;
        best_k = HWSW_NONE;
        for (u64 t = (u64)blockIdx.x * HWSW_THREADS + threadIdx.x; t < count;
             t += (u64)gridDim.x * HWSW_THREADS) {
            const u64 k = candidates[t];
            int i, j;
            hwsw_pair_of(k, n, i, j);
            const i64 v = __ldg(dh + i) + __ldg(dh + j);
            // Indices grow along a thread's walk, so an equal dH never wins.
            if (v >= best_v) continue;
            if (v < admit_below || !hwsw_is_tabu(tabu_bits, k)) {
                best_v = v;
                best_k = k;
            }
        }
        hwsw_block_min(best_v, best_k);
    }
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partial_v[blockIdx.x] = best_v;
        partial_k[blockIdx.x] = best_k;
        __threadfence();
        last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    best_v = HWSW_I64_MAX;
    best_k = HWSW_NONE;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += HWSW_THREADS) {
        hwsw_min2(best_v, best_k, ((volatile i64*)partial_v)[b], ((volatile u64*)partial_k)[b]);
    }
    hwsw_block_min(best_v, best_k);
    if (threadIdx.x == 0) {
        volatile u64* r = result;
        r[0] = count;
        r[1] = best_k != HWSW_NONE ? 1 : 0;
        r[2] = (u64)best_v;
        r[3] = best_k;
        *blocks_done = 0;
        *chunk_counter = 0;
        __threadfence_system();
    }
}

// ---- the move (one block) ------------------------------------------------------------------
// Flips i and j (i < j), recomputes w and dh of the two nodes and of their neighbours from the
// full CSR adjacency, and (device-resident tabu status) clears bit `clear` and sets bit `set`
// (HWSW_NONE: none). With zero-copy status the host updates the bits itself.
extern "C" __global__ void __launch_bounds__(HWSW_THREADS)
    hwsw_move(int i, int j, unsigned char* x, i64* w, i64* dh, const i64* __restrict__ soft,
              const i64* __restrict__ hard, const unsigned* __restrict__ start,
              const int* __restrict__ node, const i64* __restrict__ cost, unsigned* tabu_bits,
              u64 clear, u64 set)
{
    if (threadIdx.x == 0) {
        x[i] ^= 1;
        x[j] ^= 1;
#if !HWSW_ZERO_COPY
        if (clear != HWSW_NONE) atomicAnd(tabu_bits + (clear >> 5), ~(1u << (clear & 31)));
        if (set != HWSW_NONE) atomicOr(tabu_bits + (set >> 5), 1u << (set & 31));
#endif
    }
    __syncthreads();
    const unsigned di = start[i + 1] - start[i];
    const unsigned dj = start[j + 1] - start[j];
    const unsigned affected = 2 + di + dj;
    for (unsigned t = threadIdx.x; t < affected; t += blockDim.x) {
        int a;
        if (t == 0) a = i;
        else if (t == 1) a = j;
        else if (t < 2 + di) a = node[start[i] + (t - 2)];
        else a = node[start[j] + (t - 2 - di)];
        const unsigned char xa = ((volatile unsigned char*)x)[a];
        i64 dc = 0;
        for (unsigned e = start[a]; e < start[a + 1]; ++e) {
            const i64 c = cost[e];
            dc += ((volatile unsigned char*)x)[node[e]] == xa ? c : -c;
        }
        // Several threads may write the same node; they write the same values.
        w[a] = (xa == 0 ? soft[a] : -soft[a]) + dc;
        dh[a] = xa == 0 ? -hard[a] : hard[a];
    }
}
