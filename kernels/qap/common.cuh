// Shared pieces of the QAP kernels: the counter-based RNG, start permutations, the exact
// objective and the general swap delta.
//
// Compile-time parameters (set by the host driver as -D defines):
//   QAP_N   the instance size n; every per-solution array is sized by it, so loops have known
//           trip counts and permutations live in registers/local memory (which the hardware
//           interleaves across threads, so a warp's accesses coalesce).
// Matrices are int32 row-major n x n (QAPLIB entries fit), read through the read-only path;
// costs and deltas are exact int64.
#pragma once

#ifndef QAP_N
#error "QAP_N (the instance size) must be defined"
#endif

typedef long long i64;
typedef unsigned long long u64;

// SplitMix64's finaliser over (seed, stream, counter): a counter-based generator, so any
// thread can draw its k-th number without state, and the host can reproduce it exactly
// (solvers::qap::gpu::start_permutation mirrors this function).
__device__ __forceinline__ u64 qap_hash(u64 seed, u64 stream, u64 counter)
{
    u64 z = seed ^ (stream * 0x9E3779B97F4A7C15ull) ^ (counter * 0xD1B54A32D192ED03ull);
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Fisher-Yates from the top, drawing j in [0, i] as hash % (i + 1) (the modulo bias is below
// 2^-50 for n <= 2^14 and the host mirrors it, so starts are identical on both sides).
template <typename T>
__device__ __forceinline__ void qap_start_permutation(T* p, u64 seed, u64 solution)
{
    for (int i = 0; i < QAP_N; ++i) {
        p[i] = (T)i;
    }
    for (int i = QAP_N - 1; i > 0; --i) {
        int j = (int)(qap_hash(seed, solution, (u64)i) % (u64)(i + 1));
        T t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

// How matrix entries are read: through the read-only data cache from global memory, or
// plainly (shared memory, where the read-only path does not apply).
struct ReadOnly {
    static __device__ __forceinline__ int at(const int* __restrict__ m, int i) { return __ldg(m + i); }
};
struct Plain {
    static __device__ __forceinline__ int at(const int* m, int i) { return m[i]; }
};

// cost(p) = sum_ij a[i][j] * b[p(i)][p(j)].
template <typename R = ReadOnly, typename T>
__device__ __forceinline__ i64 qap_cost(const int* a, const int* b, const T* p)
{
    i64 total = 0;
    for (int i = 0; i < QAP_N; ++i) {
        const int pi = p[i];
        for (int j = 0; j < QAP_N; ++j) {
            total += (i64)R::at(a, i * QAP_N + j) * R::at(b, pi * QAP_N + p[j]);
        }
    }
    return total;
}

// cost(p with r and s swapped) - cost(p), correct for asymmetric matrices and nonzero
// diagonals (Taillard's general form; the CPU's solvers::qap::delta::swap_delta).
template <typename R = ReadOnly, typename T>
__device__ __forceinline__ i64 qap_swap_delta(const int* a, const int* b, const T* p, int r, int s)
{
    const int pr = p[r];
    const int ps = p[s];
    i64 d = (i64)(R::at(a, r * QAP_N + r) - R::at(a, s * QAP_N + s)) *
                (R::at(b, ps * QAP_N + ps) - R::at(b, pr * QAP_N + pr)) +
            (i64)(R::at(a, r * QAP_N + s) - R::at(a, s * QAP_N + r)) *
                (R::at(b, ps * QAP_N + pr) - R::at(b, pr * QAP_N + ps));
    for (int k = 0; k < QAP_N; ++k) {
        if (k == r || k == s) {
            continue;
        }
        const int pk = p[k];
        // 12 integer operations per k besides the loads: 4 subtractions into 2 products,
        // twice, and 2 additions (bench qap counts moves x n x this).
        d += (i64)(R::at(a, k * QAP_N + r) - R::at(a, k * QAP_N + s)) *
                 (R::at(b, pk * QAP_N + ps) - R::at(b, pk * QAP_N + pr)) +
             (i64)(R::at(a, r * QAP_N + k) - R::at(a, s * QAP_N + k)) *
                 (R::at(b, ps * QAP_N + pk) - R::at(b, pr * QAP_N + pk));
    }
    return d;
}

// The number of swap pairs, and the k-th pair in (r, s) order advanced by `stride`: threads
// that share a neighbourhood take pairs k = t, t + stride, ... and keep their position
// incrementally instead of inverting k each time.
#define QAP_PAIRS (QAP_N * (QAP_N - 1) / 2)

__device__ __forceinline__ void qap_pair_of(int k, int* r, int* s)
{
    int row = 0;
    int width = QAP_N - 1;
    while (k >= width) {
        k -= width;
        ++row;
        --width;
    }
    *r = row;
    *s = row + 1 + k;
}

// The index k of pair (r, s), r < s, in (r, s) order.
__device__ __forceinline__ int qap_pair_index(int r, int s)
{
    return r * (2 * QAP_N - r - 1) / 2 + (s - r - 1);
}

__device__ __forceinline__ void qap_pair_advance(int* r, int* s, int stride)
{
    int row = *r;
    int pos = *s - row - 1 + stride;
    while (row < QAP_N - 1 && pos >= QAP_N - 1 - row) {
        pos -= QAP_N - 1 - row;
        ++row;
    }
    *r = row;
    *s = row + 1 + pos;
}

// Best-improvement pairwise-swap local search of one thread's permutation `p`, reading the
// matrices through R: each scan evaluates all swaps, applies the first strictly best improving
// one in (r, s) order, and the search stops at a local optimum or after `max_iters` scans.
// Returns the number of scans (the last, non-improving one included), as the CPU counts them.
template <typename R, typename T>
__device__ __forceinline__ int qap_two_opt_search(const int* a, const int* b, T* p, i64* cost, int max_iters)
{
    int it = 0;
    while (it < max_iters) {
        i64 best = 0;
        int br = -1, bs = -1;
        for (int r = 0; r < QAP_N - 1; ++r) {
            for (int c = r + 1; c < QAP_N; ++c) {
                const i64 d = qap_swap_delta<R>(a, b, p, r, c);
                if (d < best) {
                    best = d;
                    br = r;
                    bs = c;
                }
            }
        }
        ++it;
        if (br < 0) {
            break;
        }
        const T t = p[br];
        p[br] = p[bs];
        p[bs] = t;
        *cost += best;
    }
    return it;
}

// Writes a thread's result: its permutation (solution-major) and cost.
template <typename T>
__device__ __forceinline__ void qap_store(int* __restrict__ perms, i64* __restrict__ costs, int solution, const T* p, i64 cost)
{
    for (int i = 0; i < QAP_N; ++i) {
        perms[(size_t)solution * QAP_N + i] = p[i];
    }
    costs[solution] = cost;
}
