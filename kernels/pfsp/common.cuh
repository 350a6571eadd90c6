// Shared pieces of the flowshop kernels: completion-time arithmetic, swap-pair ranking, move
// keys and block reductions.
//
// Compile-time parameters (set by the host driver as -D defines):
//   PFSP_N     jobs n; PFSP_M machines m. A completion row of m values lives in registers
//              (every loop over machines is unrolled), so m sets the register count.
//   PFSP_WIDE  1: completion times in int64; 0: int32, which the host allows only when the sum
//              of all processing times (a bound on every completion time of any sequence) is
//              below 2^31 (solvers::pfsp::gpu::completion_fits_i32).
// Processing times are int32, job-major, each job's row padded to PFSP_MP (a multiple of 4)
// with zeros so that a row is read as int4 vectors: times[job * PFSP_MP + k].
#pragma once

#ifndef PFSP_N
#error "PFSP_N (jobs) must be defined"
#endif
#ifndef PFSP_M
#error "PFSP_M (machines) must be defined"
#endif
#ifndef PFSP_WIDE
#define PFSP_WIDE 1
#endif

typedef long long i64;
typedef unsigned long long u64;
#if PFSP_WIDE
typedef long long ctime_t;
#else
typedef int ctime_t;
#endif

#define PFSP_MP ((PFSP_M + 3) / 4 * 4)
#define PFSP_PAIRS (PFSP_N * (PFSP_N - 1) / 2)
// A move key packs (makespan << 22) | pair: the minimum key is the first (in (i, j) order)
// move of least makespan, so atomicMin over 64 bits picks exactly the CPU's move. The host
// checks makespans stay below 2^41 and n <= 2048 (pairs < 2^22).
#define PFSP_PAIR_BITS 22
#define PFSP_NO_KEY 0xffffffffffffffffull

// Appends `job` to a schedule whose completion times are c[0..m): Taillard's recurrence
// c[k] = max(c[k], c[k-1]) + p[job][k].
__device__ __forceinline__ void pfsp_advance(ctime_t* c, const int* __restrict__ times, int job)
{
    const int4* row = reinterpret_cast<const int4*>(times + job * PFSP_MP);
    ctime_t previous = 0;
#pragma unroll
    for (int q = 0; q < PFSP_MP / 4; ++q) {
        const int4 v = __ldg(row + q);
        const int p[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            if (4 * q + r < PFSP_M) {
                previous = max(previous, c[4 * q + r]) + (ctime_t)p[r];
                c[4 * q + r] = previous;
            }
        }
    }
}

// Pair index k (row-major over i < j) -> (i, j). The closed form in double is exact for the
// sizes allowed (k < 2^22); the two loops only guard the boundary.
__device__ __forceinline__ void pfsp_unrank_pair(int k, int& i, int& j)
{
    const double n = (double)PFSP_N;
    int row = (int)((2.0 * n - 1.0 - sqrt((2.0 * n - 1.0) * (2.0 * n - 1.0) - 8.0 * (double)k)) / 2.0);
    if (row < 0) row = 0;
    // Offset of row r: r (2n - r - 1) / 2.
    while (row > 0 && row * (2 * PFSP_N - row - 1) / 2 > k) --row;
    while ((row + 1) * (2 * PFSP_N - row - 2) / 2 <= k) ++row;
    i = row;
    j = k - row * (2 * PFSP_N - row - 1) / 2 + row + 1;
}

__device__ __forceinline__ u64 pfsp_key(i64 makespan, int pair)
{
    return ((u64)makespan << PFSP_PAIR_BITS) | (u64)pair;
}

__device__ __forceinline__ u64 warp_min_u64(u64 v)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        const u64 other = __shfl_down_sync(0xffffffffu, v, offset);
        v = other < v ? other : v;
    }
    return v;
}

// Block-wide minimum of two keys; thread 0 folds them into out[0], out[1] with atomicMin.
// `scratch` holds 2 * 32 u64.
__device__ __forceinline__ void pfsp_block_min2_atomic(u64 a, u64 b, u64* scratch, u64* out)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    a = warp_min_u64(a);
    b = warp_min_u64(b);
    if (lane == 0) {
        scratch[warp] = a;
        scratch[32 + warp] = b;
    }
    __syncthreads();
    if (warp == 0) {
        const int warps = (blockDim.x + 31) >> 5;
        a = lane < warps ? scratch[lane] : PFSP_NO_KEY;
        b = lane < warps ? scratch[32 + lane] : PFSP_NO_KEY;
        a = warp_min_u64(a);
        b = warp_min_u64(b);
        if (lane == 0) {
            if (a != PFSP_NO_KEY) atomicMin(out, a);
            if (b != PFSP_NO_KEY) atomicMin(out + 1, b);
        }
    }
}

// The shared prologue of both tabu evaluation kernels: the parent sequence into shared memory,
// this block's tabu flags from the forbidden-pair list, and the reset of the other key slot
// (the next launch's) by block 0. control = [perm (n) | forbidden count | forbidden pairs].
__device__ __forceinline__ void pfsp_tabu_prologue(const int* __restrict__ control, int slot, u64* keys,
                                                   int* perm, unsigned char* tabu)
{
    for (int p = threadIdx.x; p < PFSP_N; p += blockDim.x) perm[p] = control[p];
    tabu[threadIdx.x] = 0;
    if (blockIdx.x == 0 && threadIdx.x < 2) keys[2 * (slot ^ 1) + threadIdx.x] = PFSP_NO_KEY;
    __syncthreads();
    const int forbidden = control[PFSP_N];
    const int base = blockIdx.x * blockDim.x;
    for (int f = threadIdx.x; f < forbidden; f += blockDim.x) {
        const int k = control[PFSP_N + 1 + f] - base;
        if (k >= 0 && k < (int)blockDim.x) tabu[k] = 1;
    }
    __syncthreads();
}
