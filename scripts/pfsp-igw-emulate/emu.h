#define IGW_EMULATED 1
#include <cmath>
#include <algorithm>
#include <barrier>
#include <thread>
#include <vector>
#include <cstdio>
#define __device__
#define __global__
#define __forceinline__ inline
#define __restrict__
#define __launch_bounds__(x)
#define __align__(x)
#define __shared__
using std::max; using std::min;
struct dim3 { unsigned x, y, z; };
extern thread_local dim3 threadIdx;
extern dim3 blockIdx, blockDim;
struct int4 { int x, y, z, w; };
extern std::barrier<>* emu_bar;
extern long long emu_slot[32];
inline void __syncwarp() { emu_bar->arrive_and_wait(); }
inline void __syncthreads() { emu_bar->arrive_and_wait(); }
template <class T> T emu_exchange(T v, int src) {
    emu_bar->arrive_and_wait();
    emu_slot[threadIdx.x & 31] = (long long)v;
    emu_bar->arrive_and_wait();
    T r = (T)emu_slot[src];
    emu_bar->arrive_and_wait();
    return r;
}
template <class T> T __shfl_up_sync(unsigned, T v, int d) { int l = threadIdx.x & 31; return emu_exchange(v, l >= d ? l - d : l); }
template <class T> T __shfl_down_sync(unsigned, T v, int d) { int l = threadIdx.x & 31; return emu_exchange(v, l + d < 32 ? l + d : l); }
template <class T> T __shfl_sync(unsigned, T v, int s) { return emu_exchange(v, s); }
template <class T> T __ldg(const T* p) { return *p; }
inline unsigned __ballot_sync(unsigned, int p) {
    emu_bar->arrive_and_wait();
    emu_slot[threadIdx.x & 31] = p ? 1 : 0;
    emu_bar->arrive_and_wait();
    unsigned r = 0; for (int i = 0; i < 32; ++i) if (emu_slot[i]) r |= 1u << i;
    emu_bar->arrive_and_wait();
    return r;
}
inline int __ffs(unsigned x) { return x ? __builtin_ffs(x) : 0; }
#include <atomic>
inline std::atomic<unsigned long long> emu_clock{0};
inline unsigned long long igw_emulated_clock() { return emu_clock += 1000; }
unsigned long long atomicMin(unsigned long long*, unsigned long long);
