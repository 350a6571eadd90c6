// HW/SW partitioning, `gpts-multi`: many independent tabu searches, one per block, each with
// 1-flip moves besides 2-flips, run for a number of iterations per launch; the host restarts
// stagnating searches from elite solutions between launches (solvers/src/hwsw/gpu/multi.rs).
//
// Beyond the paper: STS's 2-flips from all-hardware keep the number of software nodes even;
// 1-flips reach every solution. Per iteration a block evaluates all n 1-flips (thread per node)
// and MULTI_SAMPLES sampled 2-flips per thread (even samples: both ends of a random edge, which
// communication-heavy graphs need; odd ones: a uniform pair), each incrementally from the block's w = ds + dc
// (as in GPTS, common.cuh), keeps only feasible ones (S + C + delta <= R), and takes the least
// dH that is admissible: none of its nodes tabu, or H + dH below the block's best (aspiration).
// Flipped nodes stay tabu for t = min(tenure, n / 4 + 1) plus a random 0..t/4 iterations;
// each search has its own tenure (`tenures`, one per block) so that `--adapt` can race tabu
// lengths across the searches of one launch.
// When every feasible candidate is tabu the best of them is taken; when none is feasible the
// search starts again from all-hardware.
//
// State per search, in global memory, rows of n: x, w, tabu_until (iteration numbers),
// best_x; per search: best_h, iteration count, tenure. Each launch first rebuilds w, H and
// S + C from x (so the host may replace x by an elite between launches) and clears the tabu
// list of searches marked in `restart`.
//
// Tunables: HWSW_THREADS (block size), MULTI_SAMPLES, flags. Moves are drawn from a
// counter-based hash of (seed, search, iteration, thread), so runs repeat for a seed.
#include "common.cuh"

#ifndef MULTI_SAMPLES
#define MULTI_SAMPLES 4
#endif

__device__ __forceinline__ u64 hwsw_mix(u64 z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

__device__ __forceinline__ i64 hwsw_block_sum(i64 v)
{
    __shared__ i64 sums[HWSW_WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(HWSW_FULL, v, o);
    if (lane == 0) sums[warp] = v;
    __syncthreads();
    i64 total = 0;
    for (int q = 0; q < HWSW_WARPS; ++q) total += sums[q];
    __syncthreads();
    return total;
}

// Recomputes w of every node from x and returns (in every thread) H and S + C.
__device__ __forceinline__ void hwsw_multi_rebuild(int n, const unsigned char* x, i64* w,
                                                   const i64* soft, const i64* hard,
                                                   const unsigned* start, const int* node,
                                                   const i64* cost, i64& h, i64& sc)
{
    i64 my_h = 0, my_sc = 0;
    for (int k = threadIdx.x; k < n; k += HWSW_THREADS) {
        const unsigned char xk = x[k];
        i64 dc = 0;
        for (unsigned e = start[k]; e < start[k + 1]; ++e) {
            const int q = node[e];
            const i64 c = cost[e];
            dc += x[q] == xk ? c : -c;
            // Each cut edge once, from its lower end.
            if (q > k && x[q] != xk) my_sc += c;
        }
        w[k] = (xk == 0 ? soft[k] : -soft[k]) + dc;
        if (xk == 0) my_h += hard[k];
        else my_sc += soft[k];
    }
    h = hwsw_block_sum(my_h);
    sc = hwsw_block_sum(my_sc);
}

// Flips node a of the block's search: w[a] changes sign (every term of ds_a and dc_a does),
// and each neighbour's term for the edge to a changes sign.
__device__ __forceinline__ void hwsw_multi_flip(int a, unsigned char* x, i64* w,
                                                const unsigned* start, const int* node,
                                                const i64* cost)
{
    const unsigned char xa = x[a];
    for (unsigned e = start[a] + threadIdx.x; e < start[a + 1]; e += HWSW_THREADS) {
        const int q = node[e];
        const i64 c = cost[e];
        w[q] -= 2 * (x[q] == xa ? c : -c);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        x[a] = xa ^ 1;
        w[a] = -w[a];
    }
    __syncthreads();
}

extern "C" __global__ void __launch_bounds__(HWSW_THREADS)
    hwsw_multi(const i64* __restrict__ soft, const i64* __restrict__ hard,
               const unsigned* __restrict__ start, const int* __restrict__ node,
               const i64* __restrict__ cost, int n, i64 r, unsigned char* xs, i64* ws,
               unsigned* tabus, unsigned char* best_xs, i64* best_hs, unsigned* iteration_counts,
               const unsigned* restart, unsigned iterations,
               const unsigned* __restrict__ tenures, u64 seed)
{
    const u64 b = blockIdx.x;
    unsigned char* x = xs + b * n;
    i64* w = ws + b * n;
    unsigned* tabu = tabus + b * n;
    unsigned char* best_x = best_xs + b * n;
    __shared__ i64 s_h, s_sc, s_best;
    __shared__ int s_i, s_j;
    __shared__ i64 s_dh, s_dsc;
    if (restart[b]) {
        for (int k = threadIdx.x; k < n; k += HWSW_THREADS) tabu[k] = 0;
    }
    i64 h, sc;
    hwsw_multi_rebuild(n, x, w, soft, hard, start, node, cost, h, sc);
    unsigned first = restart[b] ? 0 : iteration_counts[b];
    if (threadIdx.x == 0) {
        s_h = h;
        s_sc = sc;
        s_best = best_hs[b];
    }
    __syncthreads();
    if (h < s_best && sc <= r) {
        for (int k = threadIdx.x; k < n; k += HWSW_THREADS) best_x[k] = x[k];
        __syncthreads();
        if (threadIdx.x == 0) {
            s_best = h;
            best_hs[b] = h;
        }
        __syncthreads();
    }
    for (unsigned it = 0; it < iterations; ++it) {
        const unsigned now = first + it + 1;
        const i64 cur_h = s_h, cur_sc = s_sc, best = s_best;
        i64 best_v = HWSW_I64_MAX, any_v = HWSW_I64_MAX;
        u64 best_code = HWSW_NONE, any_code = HWSW_NONE;
        for (int k = threadIdx.x; k < n; k += HWSW_THREADS) {
            const i64 d = w[k];
            if (cur_sc + d > r) continue;
            const i64 dh = x[k] ? hard[k] : -hard[k];
            hwsw_min2(any_v, any_code, dh, (u64)k);
            if (dh > best_v || (dh == best_v && (u64)k >= best_code)) continue;
            if (tabu[k] >= now && cur_h + dh >= best) continue;
            best_v = dh;
            best_code = (u64)k;
        }
#pragma unroll
        for (int p = 0; p < MULTI_SAMPLES; ++p) {
            const u64 z = hwsw_mix(seed ^ hwsw_mix((b << 40) ^ ((u64)now << 12) ^
                                                   (u64)(threadIdx.x * MULTI_SAMPLES + p)));
            int i = (int)((z & 0xffffffffull) % (u64)n);
            int j;
            const unsigned degree = start[i + 1] - start[i];
            if ((p & 1) == 0 && degree > 0) {
                // Both ends of an edge: the move that keeps a costly edge uncut.
                j = node[start[i] + (unsigned)((z >> 32) % degree)];
            } else {
                j = (int)((z >> 32) % (u64)(n - 1));
                if (j >= i) ++j;
            }
            if (i > j) {
                const int t = i;
                i = j;
                j = t;
            }
            i64 c = 0;
            for (unsigned e = start[i]; e < start[i + 1]; ++e) {
                if (node[e] == j) {
                    c = cost[e];
                    break;
                }
            }
            const unsigned char xi = x[i], xj = x[j];
            const i64 d = w[i] + w[j] - 2 * (xi == xj ? c : -c);
            if (cur_sc + d > r) continue;
            const i64 dh = (xi ? hard[i] : -hard[i]) + (xj ? hard[j] : -hard[j]);
            const u64 code = ((u64)(i + 1) << 32) | (u64)j;
            hwsw_min2(any_v, any_code, dh, code);
            if (dh > best_v || (dh == best_v && code >= best_code)) continue;
            if ((tabu[i] >= now || tabu[j] >= now) && cur_h + dh >= best) continue;
            best_v = dh;
            best_code = code;
        }
        hwsw_block_min(best_v, best_code);
        hwsw_block_min(any_v, any_code);
        if (threadIdx.x == 0) {
            // Every feasible move tabu: the best of them (the tabu list must not stop the
            // search).
            if (best_code == HWSW_NONE) {
                best_code = any_code;
                best_v = any_v;
            }
            if (best_code == HWSW_NONE) {
                s_i = -1;
            } else if (best_code >> 32) {
                s_i = (int)(best_code >> 32) - 1;
                s_j = (int)(best_code & 0xffffffffull);
            } else {
                s_i = (int)best_code;
                s_j = -1;
            }
            s_dh = best_v;
        }
        __syncthreads();
        const int mi = s_i, mj = s_j;
        if (mi < 0) {
            // Nothing feasible and admissible: all hardware again (always feasible).
            for (int k = threadIdx.x; k < n; k += HWSW_THREADS) {
                x[k] = 0;
                tabu[k] = 0;
            }
            __syncthreads();
            hwsw_multi_rebuild(n, x, w, soft, hard, start, node, cost, h, sc);
            if (threadIdx.x == 0) {
                s_h = h;
                s_sc = sc;
            }
            __syncthreads();
            continue;
        }
        // S + C after the move, read before w changes.
        if (threadIdx.x == 0) {
            s_dsc = mj < 0 ? w[mi] : w[mi] + w[mj];
            if (mj >= 0) {
                i64 c = 0;
                for (unsigned e = start[mi]; e < start[mi + 1]; ++e) {
                    if (node[e] == mj) c = cost[e];
                }
                s_dsc -= 2 * (x[mi] == x[mj] ? c : -c);
            }
        }
        __syncthreads();
        hwsw_multi_flip(mi, x, w, start, node, cost);
        if (mj >= 0) hwsw_multi_flip(mj, x, w, start, node, cost);
        if (threadIdx.x == 0) {
            const u64 z = hwsw_mix(seed ^ (b << 32) ^ now);
            // A tenure near n would leave no move free on small graphs.
            const unsigned t = min(tenures[b], (unsigned)n / 4 + 1);
            const unsigned until = now + t + (unsigned)(z % (t / 4 + 1));
            tabu[mi] = until;
            if (mj >= 0) tabu[mj] = until;
            s_h += s_dh;
            s_sc += s_dsc;
        }
        __syncthreads();
        if (s_h < s_best) {
            for (int k = threadIdx.x; k < n; k += HWSW_THREADS) best_x[k] = x[k];
            __syncthreads();
            if (threadIdx.x == 0) {
                s_best = s_h;
                best_hs[b] = s_h;
            }
            __syncthreads();
        }
    }
    if (threadIdx.x == 0) iteration_counts[b] = first + iterations;
}
