//! 2-opt local search restricted to candidate lists, with don't-look bits: the local search
//! ACOTSP runs on every ant's tour (`two_opt_first`), and the CPU reference of the GPU kernel
//! `kernels/tsp/ls-2opt.cu`.
//!
//! A move removes the edges (a, succ a) and (b, succ b) and adds (a, b) and (succ a, succ b),
//! reversing the path succ a .. b (or, equivalently, its complement: whichever is shorter).
//! From a city c1 whose don't-look bit is off, the search tries each neighbour h in c1's
//! candidate list as the new partner of c1, first in the successor direction, then in the
//! predecessor direction, and stops a direction at the first h with d(c1, h) >= the length
//! of the edge it would replace (no improving move can follow in a list sorted by distance).
//! The first improving move is applied; the four cities at its ends get their bits cleared.
//! A city without an improving move gets its bit set. When every bit is set, all are cleared
//! for a confirming sweep; the search ends after a sweep without a move, so the tour is
//! 2-optimal with respect to the candidate lists (the end bits alone do not guarantee it: a
//! move can create an improving move from a city whose bit stays set).

use rand::seq::SliceRandom;
use rand::Rng;

use super::candidates::CandidateLists;

/// A tour with the position of every city, as the moves need both.
pub struct TourPositions<'t> {
    tour: &'t mut [usize],
    pos: Vec<usize>,
}

impl<'t> TourPositions<'t> {
    pub fn new(tour: &'t mut [usize]) -> Self {
        let mut pos = vec![0; tour.len()];
        for (i, &c) in tour.iter().enumerate() {
            pos[c] = i;
        }
        TourPositions { tour, pos }
    }

    fn n(&self) -> usize {
        self.tour.len()
    }

    pub fn succ(&self, c: usize) -> usize {
        let i = self.pos[c] + 1;
        self.tour[if i == self.n() { 0 } else { i }]
    }

    pub fn pred(&self, c: usize) -> usize {
        let i = self.pos[c];
        self.tour[if i == 0 { self.n() - 1 } else { i - 1 }]
    }

    /// Removes (a, succ a) and (b, succ b), adds (a, b) and (succ a, succ b).
    pub fn two_opt_move(&mut self, a: usize, b: usize) {
        let n = self.n();
        let inner = (self.pos[b] + n - self.pos[a]) % n; // cities succ a ..= b
        if inner <= n - inner {
            self.reverse((self.pos[a] + 1) % n, inner);
        } else {
            self.reverse((self.pos[b] + 1) % n, n - inner);
        }
    }

    /// Reverses `len` positions from `start`, cyclically.
    fn reverse(&mut self, start: usize, len: usize) {
        let n = self.n();
        for k in 0..len / 2 {
            let p = (start + k) % n;
            let q = (start + len - 1 - k) % n;
            self.tour.swap(p, q);
            self.pos[self.tour[p]] = p;
            self.pos[self.tour[q]] = q;
        }
    }
}

/// The first improving 2-opt move from `c1`, as (a, b) of [`TourPositions::two_opt_move`],
/// with its gain.
fn improving_move(
    t: &TourPositions,
    dist: &[i64],
    n: usize,
    neighbours: &[usize],
    c1: usize,
) -> Option<(usize, usize)> {
    let d = |i: usize, j: usize| dist[i * n + j];
    let s1 = t.succ(c1);
    let d_s = d(c1, s1);
    for &h in neighbours {
        let d1h = d(c1, h);
        if d1h >= d_s {
            break;
        }
        let sh = t.succ(h);
        if d_s + d(h, sh) - d1h - d(s1, sh) > 0 {
            return Some((c1, h));
        }
    }
    let p1 = t.pred(c1);
    let d_p = d(p1, c1);
    for &h in neighbours {
        let d1h = d(c1, h);
        if d1h >= d_p {
            break;
        }
        let ph = t.pred(h);
        if d_p + d(ph, h) - d1h - d(p1, ph) > 0 {
            // Removes (ph, h) and (p1, c1), adds (ph, p1) and (h, c1).
            return Some((ph, p1));
        }
    }
    None
}

/// Improves `tour` (a permutation of 0..n) to a 2-opt local optimum over the first `depth`
/// candidates of each city, visiting cities in an order drawn from `rng`. Returns the number
/// of moves applied.
pub fn two_opt(
    tour: &mut [usize],
    dist: &[i64],
    lists: &CandidateLists,
    depth: usize,
    rng: &mut impl Rng,
) -> u64 {
    two_opt_until(tour, dist, lists, depth, rng, &|| false)
}

/// [`two_opt`] that ends early, with the tour improved so far, once `stop` says so (asked
/// every 64 cities tried): a 2-opt of a 10,000-city tour takes long enough to overrun a time
/// limit. With a `stop` that never fires the result equals [`two_opt`]'s.
pub fn two_opt_until(
    tour: &mut [usize],
    dist: &[i64],
    lists: &CandidateLists,
    depth: usize,
    rng: &mut impl Rng,
    stop: &(dyn Fn() -> bool + Sync),
) -> u64 {
    let n = tour.len();
    if n < 4 {
        return 0;
    }
    let depth = depth.min(lists.k());
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(rng);
    let mut t = TourPositions::new(tour);
    let mut done = vec![false; n];
    let mut moves = 0;
    let mut swept_from = 0;
    let mut improved = true;
    let mut tried = 0u64;
    loop {
        while improved {
            improved = false;
            for &c1 in &order {
                if done[c1] {
                    continue;
                }
                tried += 1;
                if tried % 64 == 0 && stop() {
                    return moves;
                }
                match improving_move(&t, dist, n, &lists.of(c1)[..depth], c1) {
                    Some((a, b)) => {
                        for c in [a, t.succ(a), b, t.succ(b)] {
                            done[c] = false;
                        }
                        t.two_opt_move(a, b);
                        moves += 1;
                        improved = true;
                    }
                    None => done[c1] = true,
                }
            }
        }
        // Bits are cleared only at a move's four ends, so a city whose candidates' neighbours
        // changed may have gained a move: sweep all cities again until a sweep applies none.
        if moves == swept_from {
            return moves;
        }
        swept_from = moves;
        done.fill(false);
        improved = true;
    }
}

/// Whether some 2-opt move over the first `depth` candidates improves `tour`: what the tests
/// ask of any local optimum, the GPU's included.
pub fn has_improving_move(
    tour: &mut [usize],
    dist: &[i64],
    lists: &CandidateLists,
    depth: usize,
) -> bool {
    let n = tour.len();
    let depth = depth.min(lists.k());
    let t = TourPositions::new(tour);
    (0..n).any(|c| improving_move(&t, dist, n, &lists.of(c)[..depth], c).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::stream_rng;
    use crate::tsp::distance::EdgeWeightType;
    use crate::tsp::instance::Instance;

    fn length(dist: &[i64], n: usize, tour: &[usize]) -> i64 {
        (0..n).map(|i| dist[tour[i] * n + tour[(i + 1) % n]]).sum()
    }

    fn random_instance(n: usize, seed: u64) -> Instance {
        let mut rng = stream_rng(seed, 0);
        let coords = (0..n)
            .map(|_| (rng.random_range(0.0..1000.0), rng.random_range(0.0..1000.0)))
            .collect();
        Instance::from_coords("random", EdgeWeightType::Euc2d, coords).unwrap()
    }

    #[test]
    fn moves_keep_a_permutation_and_the_length_bookkeeping() {
        let inst = random_instance(60, 1);
        let dist = inst.distance_matrix();
        let mut tour: Vec<usize> = (0..60).collect();
        let mut t = TourPositions::new(&mut tour);
        // Moves of every span, both reversal sides.
        for (a, b) in [(0, 30), (5, 58), (59, 2), (10, 11), (40, 20)] {
            let (sa, sb) = (t.succ(a), t.succ(b));
            let before: Vec<usize> = t.tour.to_vec();
            let expected = length(&dist, 60, &before) - dist[a * 60 + sa] - dist[b * 60 + sb]
                + dist[a * 60 + b]
                + dist[sa * 60 + sb];
            t.two_opt_move(a, b);
            assert_eq!(length(&dist, 60, t.tour), expected, "move ({a}, {b})");
            for (i, &c) in t.tour.iter().enumerate() {
                assert_eq!(t.pos[c], i);
            }
        }
        tour.sort_unstable();
        assert_eq!(tour, (0..60).collect::<Vec<_>>());
    }

    #[test]
    fn ends_in_a_local_optimum_shorter_than_the_start() {
        for seed in 0..5 {
            let inst = random_instance(200, seed);
            let dist = inst.distance_matrix();
            let lists = CandidateLists::from_instance(&inst, 20);
            let mut rng = stream_rng(seed, 9);
            let mut tour: Vec<usize> = (0..200).collect();
            tour.shuffle(&mut rng);
            let start = length(&dist, 200, &tour);
            let moves = two_opt(&mut tour, &dist, &lists, 20, &mut rng);
            assert!(moves > 0);
            assert!(
                length(&dist, 200, &tour) < start * 2 / 3,
                "2-opt shortens a random tour"
            );
            assert!(!has_improving_move(&mut tour, &dist, &lists, 20));
            let mut sorted = tour.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..200).collect::<Vec<_>>());
        }
    }

    #[test]
    fn finds_the_move_that_removes_a_crossing() {
        // A square visited as 0-2-1-3 crosses itself; 2-opt makes it 0-1-2-3 (length 4).
        let inst = Instance::from_coords(
            "square",
            EdgeWeightType::Euc2d,
            vec![(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)],
        )
        .unwrap();
        let dist = inst.distance_matrix();
        let lists = CandidateLists::from_matrix(&dist, 4, 3);
        let mut tour = vec![0, 2, 1, 3];
        assert!(has_improving_move(&mut tour, &dist, &lists, 3));
        two_opt(&mut tour, &dist, &lists, 3, &mut stream_rng(0, 0));
        assert_eq!(length(&dist, 4, &tour), 40);
    }
}
