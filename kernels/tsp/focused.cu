// Focused ant colony on the GPU, one warp per ant: the GPU counterpart of
// solvers::tsp::focused (read its module comment for the algorithm). Each ant changes a source
// tour in a bounded number of edges and repairs only around them, so an ant costs one O(n)
// copy of the source plus work proportional to the change, not n dependent construction steps.
//
// What each warp owns: ant a = blockIdx.x * FOCUSED_WARPS + warp, i.e. its rows of `orders`
// (the new tour), `positions` (the position of every city in it), `visited` and `queued`
// (stamps: a city is visited in this iteration's walk when visited[c] == mark, queued for the
// local search when queued[c] == mark, so no row is ever cleared), and lengths[a], moves[a].
// In shared memory, per warp: the ring of active cities of the local search and the positions
// of the edges where the copy of the source jumped over a walked city.
//
// 1. Walk (lane j holds candidate j of the current city; TSP_K <= 32): weights tau^alpha *
//    eta^beta of the unvisited candidates (precomputed per slot in `weight`), plus the source
//    successor when it is not in the list (pheromone tau_min); a warp scan and one uniform draw
//    pick the next city. A step that leaves the source's edges makes a new edge; after
//    min_new_edges[a] of them (one count per ant: `--adapt` races it), or FOCUSED_MAX_WALK
//    cities, the walk stops.
// 2. Copy: the source's order from the walk's last city on, skipping walked cities (a warp
//    compaction; reads of the source are coalesced), writing order and positions. Where the
//    copy skipped a city, the edge across the gap is recorded.
// 3. Changed cities: the ends of the new tour's edges that are not source edges, found among
//    the walk's edges, the copy's gaps and the closing edge, in tour order (the CPU's order),
//    deduplicated; they seed the queue, and the exact length is the source's minus the lost
//    edges plus the new ones.
// 4. Local search: pop a city, apply the best improving 2-opt move that gives it a list
//    neighbour (lanes 0-15 the successor side, 16-31 the predecessor side), else the best
//    Or-opt move of a segment of 1-3 cities starting at it (lanes over the combinations);
//    push the moved edges' ends. Moves are 2-opt reversals of the shorter side by all 32
//    lanes; the move choice, its tie-break and its application are those of the CPU's
//    tour::best_two_opt / best_or_opt / Tour::apply.
// With `touched` set, each ant also lists the cities whose edges may differ from the source
// (the changed cities and every end of an applied move), so that the host can merge the
// changes of several improving ants that touch disjoint stretches of the source
// (tsp_focused_merge).
//
// Defines: TSP_DIST (common.cuh), TSP_K (list length, <= 32), LS_NEIGHBOURS (<= 16, list
// entries the local search tries), FOCUSED_WARPS (ants per block), FOCUSED_OR_OPT (0/1),
// FOCUSED_QUEUE (ring capacity per warp, a power of two: a push that finds it full is dropped,
// which only leaves that city's don't-look bit set), FOCUSED_MAX_WALK (walked cities at most).
#include "colony.cuh"

#ifndef LS_NEIGHBOURS
#define LS_NEIGHBOURS 10
#endif
#ifndef FOCUSED_WARPS
#define FOCUSED_WARPS 4
#endif
#ifndef FOCUSED_OR_OPT
#define FOCUSED_OR_OPT 1
#endif
#ifndef FOCUSED_QUEUE
#define FOCUSED_QUEUE 1024
#endif
#ifndef FOCUSED_MAX_WALK
#define FOCUSED_MAX_WALK 256
#endif

#if TSP_K > 32
#error "the focused kernels hold one candidate per lane: TSP_K must be at most 32"
#endif
#if LS_NEIGHBOURS > 16 || LS_NEIGHBOURS > TSP_K
#error "LS_NEIGHBOURS must be at most 16 and at most TSP_K"
#endif
#if (FOCUSED_QUEUE & (FOCUSED_QUEUE - 1)) != 0
#error "FOCUSED_QUEUE must be a power of two"
#endif

#define FULL TSP_FULL_MASK

struct FocusedTour {
    int* order;
    int* pos;
    int n;
    __device__ __forceinline__ int succ(int c) const
    {
        const int i = pos[c] + 1;
        return order[i == n ? 0 : i];
    }
    __device__ __forceinline__ int pred(int c) const
    {
        const int i = pos[c];
        return order[i == 0 ? n - 1 : i - 1];
    }
    __device__ __forceinline__ bool adjacent(int a, int b) const
    {
        return succ(a) == b || pred(a) == b;
    }
};

struct FocusedSource {
    const int* __restrict__ order;
    const int* __restrict__ pos;
    int n;
    __device__ __forceinline__ int succ(int c) const
    {
        const int i = __ldg(pos + c) + 1;
        return __ldg(order + (i == n ? 0 : i));
    }
    __device__ __forceinline__ int pred(int c) const
    {
        const int i = __ldg(pos + c);
        return __ldg(order + (i == 0 ? n - 1 : i - 1));
    }
    __device__ __forceinline__ bool adjacent(int a, int b) const
    {
        return succ(a) == b || pred(a) == b;
    }
};

struct FocusedInstance {
    const double2* __restrict__ coords;
    const int* __restrict__ matrix;
    const int* __restrict__ cand;
    int n;
    __device__ __forceinline__ long long d(int a, int b) const
    {
        return tsp_dist(coords, matrix, n, a, b);
    }
    __device__ __forceinline__ int neighbour(int c, int q) const
    {
        return __ldg(cand + (size_t)c * TSP_K + q);
    }
};

// Tour::reverse: the path from `from` to `to` (walking forward, both included), or its
// complement when that is shorter; lane l swaps the pairs l, l + 32, ... from both ends.
__device__ void focused_reverse(FocusedTour t, int from, int to, int lane)
{
    const int n = t.n;
    const int i = t.pos[from];
    const int j = t.pos[to];
    const int inner = (j - i + n) % n + 1;
    int start = i;
    int len = inner;
    if (2 * inner > n) {
        start = j + 1 == n ? 0 : j + 1;
        len = n - inner;
    }
    for (int s = lane; s < len / 2; s += 32) {
        int p = start + s;
        int q = start + len - 1 - s;
        p -= p >= n ? n : 0;
        q -= q >= n ? n : 0;
        const int cp = t.order[p];
        const int cq = t.order[q];
        t.order[p] = cq;
        t.order[q] = cp;
        t.pos[cq] = p;
        t.pos[cp] = q;
    }
    __syncwarp();
}

// Tour::move2: replaces (a, b) and (c, d), oriented alike, by (a, c) and (b, d).
__device__ void focused_move2(FocusedTour t, int a, int b, int c, int d, int lane)
{
    if (t.succ(a) == b) {
        focused_reverse(t, b, c, lane);
    } else {
        focused_reverse(t, c, b, lane);
    }
}

// The lowest lane holding the smallest `delta` (ties to the lowest index), broadcast.
__device__ __forceinline__ int focused_argmin(long long delta, int index, long long* best)
{
    for (int off = 16; off > 0; off >>= 1) {
        const long long od = __shfl_down_sync(FULL, delta, off);
        const int oi = __shfl_down_sync(FULL, index, off);
        if (od < delta || (od == delta && oi < index)) {
            delta = od;
            index = oi;
        }
    }
    *best = __shfl_sync(FULL, delta, 0);
    return __shfl_sync(FULL, index, 0);
}

// The warp's ring of active cities (shared memory) with the queued stamps (global).
struct FocusedQueue {
    int* ring;
    unsigned* queued;
    unsigned mark;
    int head;
    int tail;
    // Lane 0 pushes `c` unless queued or the ring is full; the caller broadcasts `tail`.
    __device__ __forceinline__ void push_one(int c)
    {
        if (queued[c] != mark && tail - head < FOCUSED_QUEUE) {
            queued[c] = mark;
            ring[tail & (FOCUSED_QUEUE - 1)] = c;
            ++tail;
        }
    }
};

// Lane 0 records `c` as touched (once per ant and iteration; the list's overflow is counted
// so that the host can tell an incomplete list).
__device__ __forceinline__ void focused_touch(unsigned* vis, unsigned counted, int* row, int cap,
                                              int* count, int c)
{
    if (row && vis[c] != counted) {
        vis[c] = counted;
        if (*count < cap) {
            row[*count] = c;
        }
        ++*count;
    }
}

// 2-opt: the best improving move that gives `a` a list neighbour (best_two_opt).
// Returns the gain (< 0) and the move's (a, b, c, d) in m[0..4]; 0 when none improves.
__device__ long long focused_two_opt(FocusedInstance in, FocusedTour t, int a, int lane, int* m)
{
    const bool forward = lane < 16;
    const int q = lane & 15;
    long long delta = 0;
    int ma = -1, mb = -1, mc = -1, md = -1;
    if (q < LS_NEIGHBOURS) {
        const int b = forward ? t.succ(a) : t.pred(a);
        const int c = in.neighbour(a, q);
        const long long dab = in.d(a, b);
        const long long dac = in.d(a, c);
        if (dac < dab) {
            const int dd = forward ? t.succ(c) : t.pred(c);
            if (c != b && dd != a) {
                delta = dac + in.d(b, dd) - dab - in.d(c, dd);
                if (forward) {
                    ma = a, mb = b, mc = c, md = dd;
                } else {
                    ma = b, mb = a, mc = dd, md = c;
                }
            }
        }
    }
    long long best;
    const int from = focused_argmin(delta < 0 ? delta : 0, delta < 0 ? lane : 32, &best);
    if (best >= 0) {
        return 0;
    }
    m[0] = __shfl_sync(FULL, ma, from);
    m[1] = __shfl_sync(FULL, mb, from);
    m[2] = __shfl_sync(FULL, mc, from);
    m[3] = __shfl_sync(FULL, md, from);
    return best;
}

#if FOCUSED_OR_OPT
// Or-opt (best_or_opt): segments of 1-3 cities starting at `a`, either direction, put next to a
// list neighbour of one of their ends, either way round. Lane l evaluates combinations
// l, l + 32, ... of (direction, length, end, neighbour, side), numbered in the CPU's loop
// order so that the lowest index wins ties as the CPU's first-found does.
// Returns the gain (< 0) with m = (p, s1, s2, nx, c, d, reversed); 0 when none improves.
__device__ long long focused_or_opt(FocusedInstance in, FocusedTour t, int a, int lane, int* m)
{
    const int n = t.n;
    const int combos = 2 * 3 * 2 * LS_NEIGHBOURS * 2;
    long long best = 0;
    int best_index = 1 << 30;
    int mv[7] = {-1, -1, -1, -1, -1, -1, 0};
    for (int index = lane; index < combos; index += 32) {
        int r = index;
        const int side = r % 2;
        r /= 2;
        const int q = r % LS_NEIGHBOURS;
        r /= LS_NEIGHBOURS;
        const int end_is_s2 = r % 2;
        r /= 2;
        const int len = r % 3 + 1;
        const bool forward = r / 3 == 0;
        if (n < len + 5) {
            continue;
        }
        const int s1 = a;
        const int p = forward ? t.pred(s1) : t.succ(s1);
        int seg[3] = {s1, -1, -1};
        for (int i = 1; i < len; ++i) {
            seg[i] = forward ? t.succ(seg[i - 1]) : t.pred(seg[i - 1]);
        }
        const int s2 = seg[len - 1];
        const int nx = forward ? t.succ(s2) : t.pred(s2);
        const long long removed = in.d(p, s1) + in.d(s2, nx) - in.d(p, nx);
        if (removed <= 0) {
            continue;
        }
        const int end = end_is_s2 ? s2 : s1;
        const int other = end_is_s2 ? s1 : s2;
        const int g = in.neighbour(end, q);
        const long long dg = in.d(end, g);
        const bool g_in = g == seg[0] || g == seg[1] || g == seg[2];
        if (dg >= removed || g_in || g == p || g == nx) {
            continue;
        }
        const int h = side == 0 ? t.succ(g) : t.pred(g);
        const bool h_in = h == seg[0] || h == seg[1] || h == seg[2];
        if (h_in || h == p || h == nx) {
            continue;
        }
        const long long delta = dg + in.d(other, h) - in.d(g, h) - removed;
        if (delta < best) {
            // c is met before d walking from nx away from the segment.
            const int next_g = forward ? t.succ(g) : t.pred(g);
            const int c = next_g == h ? g : h;
            const int dd = next_g == h ? h : g;
            const bool reversed = !((end == s1 && g == c) || (end == s2 && g == dd));
            best = delta;
            best_index = index;
            mv[0] = p, mv[1] = s1, mv[2] = s2, mv[3] = nx, mv[4] = c, mv[5] = dd;
            mv[6] = reversed;
        }
    }
    long long overall;
    const int winner = focused_argmin(best, best_index, &overall);
    if (overall >= 0) {
        return 0;
    }
    const int from = winner & 31;
    for (int i = 0; i < 7; ++i) {
        m[i] = __shfl_sync(FULL, mv[i], from);
    }
    return overall;
}
#endif

// One iteration's ants: walk, copy, changed cities, local search. lengths[a] is the exact
// length of ant a's tour, moves[a] the local search's moves, cycles[a] the SM cycles its warp
// spent (`--adapt` charges an arm for its ants' time: ants that change more edges take longer,
// and every ant of a launch waits for the slowest). `iteration` numbers the random stream (per
// run); `stamp` the launches on these rows (over all runs).
extern "C" __global__ void __launch_bounds__(FOCUSED_WARPS * 32)
    tsp_focused_ants(const double2* __restrict__ coords, const int* __restrict__ matrix, int n,
                     const int* __restrict__ cand, const float* __restrict__ weight,
                     float tau_min, double alpha, double beta, const int* __restrict__ src_order,
                     const int* __restrict__ src_pos, long long src_length,
                     const int* __restrict__ min_new_edges,
                     u64 seed, u64 iteration, u64 stamp, int m, int* __restrict__ orders,
                     int* __restrict__ positions, unsigned* __restrict__ visited,
                     unsigned* __restrict__ queued, long long* __restrict__ lengths,
                     long long* __restrict__ moves_out, long long* __restrict__ cycles_out,
                     long long max_moves,
                     int* __restrict__ touched, int* __restrict__ touched_count, int touch_cap)
{
    __shared__ int rings[FOCUSED_WARPS][FOCUSED_QUEUE];
    __shared__ int gaps[FOCUSED_WARPS][FOCUSED_MAX_WALK];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int ant = blockIdx.x * FOCUSED_WARPS + warp;
    if (ant >= m) {
        return; // whole warps leave together
    }
    const long long began = clock64();
    const unsigned lanes_below = (1u << lane) - 1u;
    // Stamps count the launches on these rows over all runs (the host clears the rows when
    // they wrap); 0 is never a mark, so fresh (zeroed) rows hold no stale membership.
    const unsigned mark = (unsigned)(stamp % 0xfffffffeull) + 1u;
    FocusedInstance in = {coords, matrix, cand, n};
    FocusedSource src = {src_order, src_pos, n};
    FocusedTour t = {orders + (size_t)ant * n, positions + (size_t)ant * n, n};
    unsigned* vis = visited + (size_t)ant * n;

    // 1. The walk.
    const int start = tsp_start_city(seed, iteration, (unsigned)ant, n);
    if (lane == 0) {
        vis[start] = mark;
        t.order[0] = start;
        t.pos[start] = 0;
    }
    __syncwarp();
    int cur = start;
    int len = 1;
    int made = 0;
    unsigned step = 0;
    // Per ant: `--adapt` races the number of new edges across the ants of one launch.
    const int new_edges = min_new_edges[ant];
    while (len < n && made < new_edges && len < FOCUSED_MAX_WALK) {
        ++step;
        const int succ = src.succ(cur);
        const int pred = src.pred(cur);
        int c = -1;
        float w = 0.0f;
        if (lane < TSP_K) {
            c = in.neighbour(cur, lane);
            if (vis[c] != mark) {
                w = __ldg(weight + (size_t)cur * TSP_K + lane);
            }
        }
        const bool succ_listed = __any_sync(FULL, c == succ);
        float outside = 0.0f;
        if (!succ_listed && vis[succ] != mark) {
            outside = tsp_choice(tau_min, (int)in.d(cur, succ), alpha, beta);
        }
        float prefix = w;
        for (int off = 1; off < 32; off <<= 1) {
            const float o = __shfl_up_sync(FULL, prefix, off);
            if (lane >= off) {
                prefix += o;
            }
        }
        const float listed = __shfl_sync(FULL, prefix, 31);
        const double total = (double)listed + (double)outside;
        int next;
        if (total > 0.0) {
            const double r = tsp_uniform(seed, iteration, (unsigned)ant, step) * total;
            const unsigned past = __ballot_sync(FULL, w > 0.0f && (double)prefix > r);
            const unsigned positive = __ballot_sync(FULL, w > 0.0f);
            if (past != 0) {
                next = __shfl_sync(FULL, c, __ffs(past) - 1);
            } else if (outside > 0.0f || positive == 0) {
                next = succ;
            } else {
                // Rounding ran past the last positive weight: that one.
                next = __shfl_sync(FULL, c, 31 - __clz(positive));
            }
        } else {
            // Every candidate is visited: the next unvisited city along the source.
            int x = succ;
            if (lane == 0) {
                while (vis[x] == mark) {
                    x = src.succ(x);
                }
            }
            next = __shfl_sync(FULL, x, 0);
        }
        if (next != succ && next != pred) {
            ++made;
        }
        if (lane == 0) {
            vis[next] = mark;
            t.order[len] = next;
            t.pos[next] = len;
        }
        __syncwarp();
        ++len;
        cur = next;
    }
    const int walked = len;

    // 2. The copy, with the gaps it jumps.
    int* gap = gaps[warp];
    int gap_count = 0;
    if (len < n) {
        const int at = __ldg(src_pos + cur);
        bool skipped_before = false;
        for (int s0 = 1; s0 < n; s0 += 32) {
            const int s = s0 + lane;
            int x = -1;
            bool keep = false;
            if (s < n) {
                const int p = at + s >= n ? at + s - n : at + s;
                x = __ldg(src_order + p);
                keep = vis[x] != mark;
            }
            const unsigned kept = __ballot_sync(FULL, keep);
            const unsigned skip = __ballot_sync(FULL, s < n && !keep);
            const bool after_skip = lane == 0 ? skipped_before : ((skip >> (lane - 1)) & 1u);
            const int q = len + __popc(kept & lanes_below);
            if (keep) {
                t.order[q] = x;
                t.pos[x] = q;
            }
            const unsigned jumps = __ballot_sync(FULL, keep && after_skip);
            if (keep && after_skip) {
                // Gaps are no more than the walked cities, so FOCUSED_MAX_WALK holds them.
                gap[gap_count + __popc(jumps & lanes_below)] = q - 1;
            }
            gap_count += __popc(jumps);
            len += __popc(kept);
            skipped_before = (skip >> 31) & 1u;
        }
    }
    __syncwarp();

    // 3. Changed cities, in tour order: walk edges 0 .. walked - 2, the gaps, the closing edge.
    FocusedQueue queue = {rings[warp], queued + (size_t)ant * n, mark, 0, 0};
    // The cities whose edges may differ from the source's (for merging ants' changes):
    // every changed city and every end of an applied move, each once.
    int* const touch_row = touched ? touched + (size_t)ant * touch_cap : nullptr;
    int touch_n = 0;
    const int edges = (walked - 1) + gap_count + 1;
    long long delta = 0;
    const unsigned counted = ~mark; // vis stamp of a city whose lost edges are counted
    for (int e0 = 0; e0 < edges; e0 += 16) {
        const int e = e0 + (lane >> 1);
        int x = -1;
        bool active = false;
        if (e < edges) {
            const int p = e < walked - 1 ? e : (e < walked - 1 + gap_count ? gap[e - (walked - 1)] : n - 1);
            const int a = t.order[p];
            const int b = t.order[p + 1 == n ? 0 : p + 1];
            if (!src.adjacent(a, b)) {
                active = true;
                x = (lane & 1) ? b : a;
                if ((lane & 1) == 0) {
                    delta += in.d(a, b);
                }
            }
        }
        // The first lane of each city in this round speaks for it.
        const unsigned same = __match_any_sync(FULL, active ? x : -1 - lane);
        const bool leader = active && (__ffs(same) - 1) == lane;
        bool fresh_queue = false;
        bool newly = false;
        if (leader) {
            if (vis[x] != counted) {
                newly = true;
                vis[x] = counted;
                for (int side = 0; side < 2; ++side) {
                    const int y = side == 0 ? src.succ(x) : src.pred(x);
                    if (x < y && !t.adjacent(x, y)) {
                        delta -= in.d(x, y);
                    }
                }
            }
            fresh_queue = queue.queued[x] != mark;
        }
        if (touch_row) {
            const unsigned first_seen = __ballot_sync(FULL, newly);
            const int at = touch_n + __popc(first_seen & lanes_below);
            if (newly && at < touch_cap) {
                touch_row[at] = x;
            }
            touch_n += __popc(first_seen);
        }
        const unsigned fresh = __ballot_sync(FULL, fresh_queue);
        const int room = FOCUSED_QUEUE - (queue.tail - queue.head);
        const int rank = __popc(fresh & lanes_below);
        if (fresh_queue && rank < room) {
            queue.queued[x] = mark;
            queue.ring[(queue.tail + rank) & (FOCUSED_QUEUE - 1)] = x;
        }
        queue.tail += min(__popc(fresh), room);
        __syncwarp();
    }
    for (int off = 16; off > 0; off >>= 1) {
        delta += __shfl_down_sync(FULL, delta, off);
    }
    delta = __shfl_sync(FULL, delta, 0);

    // 4. The local search.
    long long moves = 0;
    while (queue.head != queue.tail && moves < max_moves) {
        const int a = queue.ring[queue.head & (FOCUSED_QUEUE - 1)];
        ++queue.head;
        if (lane == 0) {
            queue.queued[a] = 0;
        }
        __syncwarp();
        int mv[7];
        long long gain = focused_two_opt(in, t, a, lane, mv);
        if (gain < 0) {
            if (lane == 0) {
                for (int i = 0; i < 4; ++i) {
                    queue.push_one(mv[i]);
                    focused_touch(vis, counted, touch_row, touch_cap, &touch_n, mv[i]);
                }
            }
            focused_move2(t, mv[0], mv[1], mv[2], mv[3], lane);
        }
#if FOCUSED_OR_OPT
        else {
            gain = focused_or_opt(in, t, a, lane, mv);
            if (gain < 0) {
                if (lane == 0) {
                    for (int i = 0; i < 6; ++i) {
                        queue.push_one(mv[i]);
                        focused_touch(vis, counted, touch_row, touch_cap, &touch_n, mv[i]);
                    }
                }
                // p [s1..s2] [nx..c] d -> p [c..nx] [s2..s1] d -> p [nx..c] [s2..s1] d
                const int p = mv[0], s1 = mv[1], s2 = mv[2], nx = mv[3], c = mv[4], d = mv[5];
                focused_move2(t, p, s1, c, d, lane);
                focused_move2(t, p, c, nx, s2, lane);
                if (!mv[6] && s1 != s2) {
                    focused_move2(t, c, s2, s1, d, lane);
                }
            }
        }
#endif
        queue.tail = __shfl_sync(FULL, queue.tail, 0);
        touch_n = __shfl_sync(FULL, touch_n, 0);
        __syncwarp();
        if (gain < 0) {
            delta += gain;
            ++moves;
        }
    }
    if (lane == 0) {
        lengths[ant] = src_length + delta;
        moves_out[ant] = moves;
        cycles_out[ant] = clock64() - began;
        if (touched_count) {
            touched_count[ant] = touch_n <= touch_cap ? touch_n : -1; // -1: list overflowed
        }
    }
}

// Merging: ant plan[5 w] replaces the source's positions lo .. lo + len - 1 (cyclic) by its own
// path from `start` (the source's city at lo) away from `prev` (the one at lo - 1); the host
// chose blocks that do not overlap and that hold every city whose edges the ant changed, so
// outside them the source's order stands and each block's ends keep their cities. One warp per
// block; `order` / `pos` hold a copy of the source on entry.
extern "C" __global__ void tsp_focused_merge(const int* __restrict__ orders,
                                             const int* __restrict__ positions, int n,
                                             const int* __restrict__ plan, int blocks,
                                             int* __restrict__ order, int* __restrict__ pos)
{
    const int lane = threadIdx.x & 31;
    const int w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (w >= blocks) {
        return;
    }
    const int ant = plan[5 * w];
    const int lo = plan[5 * w + 1];
    const int len = plan[5 * w + 2];
    const int start = plan[5 * w + 3];
    const int prev = plan[5 * w + 4];
    const int* o = orders + (size_t)ant * n;
    const int p0 = positions[(size_t)ant * n + start];
    const int dir = o[p0 == 0 ? n - 1 : p0 - 1] == prev ? 1 : -1;
    for (int i = lane; i < len; i += 32) {
        int q = (p0 + dir * i) % n;
        q += q < 0 ? n : 0;
        const int c = o[q];
        const int at = lo + i >= n ? lo + i - n : lo + i;
        order[at] = c;
        pos[c] = at;
    }
}

// The pheromone of the candidate edges (one thread per slot, grid-stride): evaporation clamped
// at tau_min, then the deposit tour's edges gain `amount`, capped at tau_max (with `reset`,
// every slot is set to tau_max instead); the choice weight tau^alpha * eta^beta follows.
// A slot (a, c) is on the deposit tour when c is a's successor or predecessor there.
extern "C" __global__ void tsp_focused_pheromone(
    const double2* __restrict__ coords, const int* __restrict__ matrix, int n,
    const int* __restrict__ cand, float* __restrict__ tau, float* __restrict__ weight,
    float keep, float tau_min, float tau_max, const int* __restrict__ dep_order,
    const int* __restrict__ dep_pos, float amount, double alpha, double beta, int reset)
{
    const size_t slots = (size_t)n * TSP_K;
    for (size_t s = (size_t)blockIdx.x * blockDim.x + threadIdx.x; s < slots;
         s += (size_t)gridDim.x * blockDim.x) {
        const int a = (int)(s / TSP_K);
        const int c = __ldg(cand + s);
        float t;
        if (reset) {
            t = tau_max;
        } else {
            t = fmaxf(tau[s] * keep, tau_min);
            const int i = __ldg(dep_pos + a);
            const int succ = __ldg(dep_order + (i + 1 == n ? 0 : i + 1));
            const int pred = __ldg(dep_order + (i == 0 ? n - 1 : i - 1));
            if (c == succ || c == pred) {
                t = fminf(t + amount, tau_max);
            }
        }
        tau[s] = t;
        weight[s] = tsp_choice(t, tsp_dist(coords, matrix, n, a, c), alpha, beta);
    }
}
