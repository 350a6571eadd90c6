// Runs pfsp_ig_warp with one warp emulated by 32 threads (scripts/pfsp-igw-emulate/build.sh). stdin:
// seed walks iterations launches d_min d_max ties table_len budget_ns hard_ns, the table, the
// padded job-major times, the start sequence and its makespan; prints each walk's state.
thread_local dim3 threadIdx;
dim3 blockIdx, blockDim;
std::barrier<>* emu_bar;
long long emu_slot[32];
#include "/work/wt-pfsp/kernels/pfsp/ig-warp.cu"
#include <cstring>
int main() {
    unsigned long long seed, budget = 0, hard = 0; int walks, iterations, launches, dmin, dmax, ties, tl;
    if (scanf("%llu %d %d %d %d %d %d %d %llu %llu", &seed, &walks, &iterations, &launches, &dmin, &dmax, &ties, &tl, &budget, &hard) != 10) return 1;
    std::vector<unsigned> table(tl); for (auto& t : table) scanf("%u", &t);
    std::vector<int> times(PFSP_N * PFSP_MP); for (auto& t : times) scanf("%d", &t);
    std::vector<int> start(PFSP_N); for (auto& s : start) scanf("%d", &s);
    long long start_value; scanf("%lld", &start_value);
    std::vector<int> cur, best; for (int w = 0; w < walks; ++w) { cur.insert(cur.end(), start.begin(), start.end()); }
    best = cur;
    std::vector<i64> cv(walks, -1), bv(walks, start_value); std::vector<u64> cnt(walks, 0), ev(walks, 0); std::vector<int> ds(walks, dmin);
    std::vector<u64> it_out(walks, 0); std::vector<ctime_t> scratch((size_t)walks * IGW_TABLE);
    std::vector<unsigned char> smem(1 << 20);
    for (int l = 0; l < launches; ++l)
    for (int w = 0; w < walks; ++w) {
        // One warp per "block" here: IGW_WARPS must be 1.
        blockIdx.x = w;
        std::barrier<> bar(32); emu_bar = &bar;
        std::vector<std::thread> th;
        for (int t = 0; t < 32; ++t) th.emplace_back([&, t] {
            threadIdx.x = t;
            pfsp_ig_warp_emu(times.data(), seed, walks, iterations, dmin, dmax, ties, table.data(), tl, cur.data(), cv.data(), best.data(), bv.data(), cnt.data(), ds.data(), ev.data(), scratch.data(), budget, hard, it_out.data(), smem.data());
        });
        for (auto& t : th) t.join();
    }
    for (int w = 0; w < walks; ++w) {
        printf("%lld %lld %llu %d %llu", (long long)cv[w], (long long)bv[w], cnt[w], ds[w], ev[w]);
        for (int i = 0; i < PFSP_N; ++i) printf(" %d", cur[w * PFSP_N + i]);
        for (int i = 0; i < PFSP_N; ++i) printf(" %d", best[w * PFSP_N + i]);
        printf("\n");
    }
}
