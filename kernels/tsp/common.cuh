// Shared pieces of the TSP kernels (ant colony construction, pheromone update, local search):
// TSPLIB's integer distances, computed exactly as the CPU computes them, and the layout of
// tours on the device.
//
// Compile-time parameters (set by the host driver as -D defines):
//   TSP_DIST   how d(i, j) is obtained:
//                0 EUC_2D  nint(sqrt(dx^2 + dy^2)) from coordinates
//                1 CEIL_2D ceil(sqrt(dx^2 + dy^2)) from coordinates
//                2 ATT     TSPLIB's pseudo-Euclidean distance from coordinates
//                3 MATRIX  a row-major n x n int32 matrix (GEO, EXPLICIT: GEO needs cos/acos,
//                          whose last bits differ between the GPU and libm, so the host
//                          computes those distances and uploads them)
//
// Layouts (the contract between construction, pheromone update and local search):
//   coords   double2[n] (x, y) for TSP_DIST 0..2
//   matrix   int[n * n] for TSP_DIST 3
//   tours    int[m * n]: ant a's tour is tours[a * n .. a * n + n), a permutation of 0..n
//   lengths  long long[m]: the exact length of each tour (sum of n integer distances)
#pragma once

#ifndef TSP_DIST
#define TSP_DIST 0
#endif

typedef long long i64;
typedef unsigned long long u64;

// Coordinate distances use the _rn intrinsics so that no multiply-add is contracted into an
// FMA, whatever the compiler flags: sqrt(dx*dx + dy*dy) then rounds exactly as the CPU's,
// and the integer distances (hence every tour length) agree bit for bit with
// solvers::tsp::distance.
__device__ __forceinline__ double tsp_squared(double2 a, double2 b)
{
    const double dx = __dsub_rn(a.x, b.x);
    const double dy = __dsub_rn(a.y, b.y);
    return __dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy));
}

__device__ __forceinline__ int tsp_dist(const double2* __restrict__ coords,
                                        const int* __restrict__ matrix, int n, int i, int j)
{
#if TSP_DIST == 0
    (void)matrix;
    (void)n;
    return (int)(__dsqrt_rn(tsp_squared(coords[i], coords[j])) + 0.5);
#elif TSP_DIST == 1
    (void)matrix;
    (void)n;
    return (int)ceil(__dsqrt_rn(tsp_squared(coords[i], coords[j])));
#elif TSP_DIST == 2
    (void)matrix;
    (void)n;
    const double r = __dsqrt_rn(__ddiv_rn(tsp_squared(coords[i], coords[j]), 10.0));
    const int t = (int)(r + 0.5);
    return ((double)t < r) ? t + 1 : t;
#elif TSP_DIST == 3
    (void)coords;
    return __ldg(matrix + (size_t)i * n + j);
#else
#error "TSP_DIST must be 0 (EUC_2D), 1 (CEIL_2D), 2 (ATT) or 3 (MATRIX)"
#endif
}
