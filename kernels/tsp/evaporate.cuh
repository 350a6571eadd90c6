// Evaporation, shared by the pheromone-update variants: tau = clamp((1 - rho) tau, tau_min,
// tau_max) on every cell. Ant System passes tau_min = 0 and tau_max = +inf; MAX-MIN Ant System
// its trail limits (and rho = 0 clamps without evaporating, e.g. after a deposit).
#pragma once

#include "common.cuh"

extern "C" __global__ void tsp_evaporate(float* __restrict__ pheromone, long long cells,
                                         float keep, float tau_min, float tau_max)
{
    for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < cells;
         c += (long long)gridDim.x * blockDim.x) {
        pheromone[c] = fminf(fmaxf(pheromone[c] * keep, tau_min), tau_max);
    }
}
