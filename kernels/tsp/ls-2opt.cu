// 2-opt local search on candidate lists with don't-look bits, one warp per tour: the GPU
// counterpart of solvers::tsp::local_search::two_opt, run on every ant's tour by the GPU
// MAX-MIN Ant System.
//
// What each warp owns: tour t = blockIdx.x * LS_WARPS + warp, i.e. its row of `tours`
// (the permutation, improved in place), its row of `pos` (position of each city, scratch),
// its row of `dlb` (one don't-look bit per city, set = no improving move from that city), and
// lengths[t] / moves[t] (written at the end).
//
// The warp walks the cities in chunks of 32, lane l owning city 32 * chunk + l. Each lane
// whose bit is clear finds its best improving move over the first LS_NEIGHBOURS candidates,
// in both directions, with the pruning of the CPU search (a direction stops at the first
// candidate h with d(c1, h) >= the edge it would replace). Lanes without an improving move
// set their bits; of the others, the warp applies the move of largest gain (lowest lane on
// ties), reversing the shorter side of the tour with all 32 lanes, and clears the bits of the
// move's four end cities. The chunk is searched again until no lane improves; when W
// consecutive chunks (W = ceil(n / 32), i.e. all of them) have every bit set, all bits are
// cleared for a confirming sweep, and the search ends after a sweep without a move. The
// result is 2-optimal with respect to the candidate lists, as the CPU's: the tests check it.
//
// Where the tour lives while it is searched: with `in_shared` set, each warp copies its tour
// into dynamic shared memory (2 n ints per warp: tour, then positions; the host sets it when
// LS_WARPS * 8 n bytes fit a block) and writes it back at the end, so the reversals and the
// successor lookups pay shared-memory latency instead of global; otherwise both rows stay
// in global memory (`tours`, `positions`).
//
// Defines: TSP_DIST (common.cuh), LS_NEIGHBOURS candidates tried per city (<= the list
// length k), LS_WARPS tours per block.
#include "common.cuh"

#ifndef LS_NEIGHBOURS
#define LS_NEIGHBOURS 10
#endif
#ifndef LS_WARPS
#define LS_WARPS 4
#endif

#define FULL_MASK 0xffffffffu

struct Move {
    long long gain;
    int a; // the move removes (a, succ a) and (b, succ b), adds (a, b) and (succ a, succ b)
    int b;
};

__device__ __forceinline__ int ls_succ(const int* tour, const int* pos, int n, int c)
{
    const int i = pos[c] + 1;
    return tour[i == n ? 0 : i];
}

__device__ __forceinline__ int ls_pred(const int* tour, const int* pos, int n, int c)
{
    const int i = pos[c];
    return tour[i == 0 ? n - 1 : i - 1];
}

// The best improving move from c1 (gain 0 when there is none).
__device__ Move ls_best_move(const double2* __restrict__ coords, const int* __restrict__ matrix,
                             int n, const int* __restrict__ neighbours, int k, const int* tour,
                             const int* pos, int c1)
{
    Move best = {0, -1, -1};
    const int* list = neighbours + (size_t)c1 * k;
    const int s1 = ls_succ(tour, pos, n, c1);
    const int d_s = tsp_dist(coords, matrix, n, c1, s1);
    for (int q = 0; q < LS_NEIGHBOURS; ++q) {
        const int h = __ldg(list + q);
        const int d1h = tsp_dist(coords, matrix, n, c1, h);
        if (d1h >= d_s) {
            break;
        }
        const int sh = ls_succ(tour, pos, n, h);
        const long long gain = (long long)d_s + tsp_dist(coords, matrix, n, h, sh) - d1h -
                               tsp_dist(coords, matrix, n, s1, sh);
        if (gain > best.gain) {
            best = {gain, c1, h};
        }
    }
    const int p1 = ls_pred(tour, pos, n, c1);
    const int d_p = tsp_dist(coords, matrix, n, p1, c1);
    for (int q = 0; q < LS_NEIGHBOURS; ++q) {
        const int h = __ldg(list + q);
        const int d1h = tsp_dist(coords, matrix, n, c1, h);
        if (d1h >= d_p) {
            break;
        }
        const int ph = ls_pred(tour, pos, n, h);
        const long long gain = (long long)d_p + tsp_dist(coords, matrix, n, ph, h) - d1h -
                               tsp_dist(coords, matrix, n, p1, ph);
        if (gain > best.gain) {
            // Removes (ph, h) and (p1, c1), adds (ph, p1) and (h, c1).
            best = {gain, ph, p1};
        }
    }
    return best;
}

// Reverses `len` positions from `start` (cyclically) with the warp's 32 lanes: lane l swaps
// the pairs l, l + 32, ... from both ends, so no two lanes touch the same position.
__device__ void ls_reverse(int* tour, int* pos, int n, int start, int len, int lane)
{
    for (int q = lane; q < len / 2; q += 32) {
        int p = start + q;
        int r = start + len - 1 - q;
        p -= (p >= n) ? n : 0;
        r -= (r >= n) ? n : 0;
        r -= (r >= n) ? n : 0;
        const int cp = tour[p];
        const int cr = tour[r];
        tour[p] = cr;
        tour[r] = cp;
        pos[cr] = p;
        pos[cp] = r;
    }
}

extern "C" __global__ void __launch_bounds__(LS_WARPS * 32)
    tsp_ls_2opt(const double2* __restrict__ coords, const int* __restrict__ matrix, int n,
                const int* __restrict__ neighbours, int k, int* tours, int* positions,
                unsigned* dont_look, long long* lengths, long long* moves_out, int m,
                long long max_moves, int in_shared)
{
    extern __shared__ int ls_rows[];
    const int lane = threadIdx.x & 31;
    const int t = blockIdx.x * LS_WARPS + (threadIdx.x >> 5);
    if (t >= m) {
        return; // whole warps leave together: m is checked per warp
    }
    const int words = (n + 31) >> 5;
    int* const home = tours + (size_t)t * n;
    int* tour = home;
    int* pos = positions + (size_t)t * n;
    if (in_shared) {
        tour = ls_rows + (size_t)(threadIdx.x >> 5) * 2 * n;
        pos = tour + n;
        for (int i = lane; i < n; i += 32) {
            tour[i] = home[i];
        }
        __syncwarp();
    }
    unsigned* dlb = dont_look + (size_t)t * words;
    for (int i = lane; i < n; i += 32) {
        pos[tour[i]] = i;
    }
    long long moves = 0;
    long long swept_from = -1; // moves when every bit was last cleared
    int chunk = 0;
    int idle = words;
    while (moves < max_moves) {
        if (idle >= words) {
            // Every bit is set. Bits are cleared only at a move's four ends, so a city whose
            // candidates' neighbours changed may have gained a move: sweep every city again
            // until a whole sweep applies none, which makes the tour a true local optimum.
            if (moves == swept_from) {
                break;
            }
            swept_from = moves;
            for (int w = lane; w < words; w += 32) {
                // Bits of the last word past city n - 1 stay set: they are no cities.
                const int valid = n - 32 * w;
                dlb[w] = valid >= 32 ? 0u : ~((1u << valid) - 1u);
            }
            __syncwarp();
            idle = 0;
        }
        const unsigned word = dlb[chunk];
        if (word == FULL_MASK) {
            chunk = (chunk + 1 == words) ? 0 : chunk + 1;
            ++idle;
            continue;
        }
        const int c1 = 32 * chunk + lane;
        const bool active = !((word >> lane) & 1u);
        Move mv = {0, -1, -1};
        if (active) {
            mv = ls_best_move(coords, matrix, n, neighbours, k, tour, pos, c1);
        }
        const unsigned settled = __ballot_sync(FULL_MASK, active && mv.gain <= 0);
        const unsigned improving = __ballot_sync(FULL_MASK, mv.gain > 0);
        if (lane == 0 && settled) {
            dlb[chunk] = word | settled;
        }
        if (!improving) {
            __syncwarp();
            chunk = (chunk + 1 == words) ? 0 : chunk + 1;
            ++idle;
            continue;
        }
        // The improving lane of largest gain, lowest lane first.
        long long g = mv.gain;
        int from = lane;
        for (int off = 16; off > 0; off >>= 1) {
            const long long og = __shfl_down_sync(FULL_MASK, g, off);
            const int of = __shfl_down_sync(FULL_MASK, from, off);
            if (og > g || (og == g && of < from)) {
                g = og;
                from = of;
            }
        }
        from = __shfl_sync(FULL_MASK, from, 0);
        const int a = __shfl_sync(FULL_MASK, mv.a, from);
        const int b = __shfl_sync(FULL_MASK, mv.b, from);
        const int pa = pos[a];
        const int pb = pos[b];
        const int sa = tour[pa + 1 == n ? 0 : pa + 1];
        const int sb = tour[pb + 1 == n ? 0 : pb + 1];
        __syncwarp();
        if (lane < 4) {
            const int c = lane == 0 ? a : lane == 1 ? sa : lane == 2 ? b : sb;
            atomicAnd(dlb + (c >> 5), ~(1u << (c & 31)));
        }
        const int inner = (pb - pa + n) % n; // cities succ a ..= b
        if (inner <= n - inner) {
            ls_reverse(tour, pos, n, pa + 1 == n ? 0 : pa + 1, inner, lane);
        } else {
            ls_reverse(tour, pos, n, pb + 1 == n ? 0 : pb + 1, n - inner, lane);
        }
        __syncwarp();
        ++moves;
        idle = 0;
    }

    long long length = 0;
    for (int i = lane; i < n; i += 32) {
        length += tsp_dist(coords, matrix, n, tour[i], tour[i + 1 == n ? 0 : i + 1]);
        if (in_shared) {
            home[i] = tour[i];
        }
    }
    for (int off = 16; off > 0; off >>= 1) {
        length += __shfl_down_sync(FULL_MASK, length, off);
    }
    if (lane == 0) {
        lengths[t] = length;
        moves_out[t] = moves;
    }
}
