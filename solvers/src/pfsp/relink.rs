//! Path relinking between job sequences, and the elite pool it draws its guides from: the
//! host side of the iterated-greedy restarts with relinking (`relink`, `elite`).
//!
//! The path from a sequence A to a guide B is made of insertion moves, the flowshop's natural
//! neighbourhood. The jobs of a longest common subsequence of A and B (a longest subsequence of
//! A whose jobs appear in the same order in B) never move; every other job is moved once, in
//! B's order, to just behind its predecessor in B (to the front for B's first job). So the path
//! has n - LCS(A, B) steps, the fewest insertion moves that turn A into B, and the sequence
//! after k steps is exactly k moves from A and n - LCS - k from B: "at least `min_distance`
//! moves from both ends" holds in the insertion metric itself, not just in steps of this path.
//! (Fixing B's positions left to right, the rule of the swap path in `qap::gpu::relink`, can
//! take up to n - 1 insertions where one would do: B = A with its first job moved to the end.)
//!
//! Each step changes the sequence only from the first position it touches, so the heads
//! (completion times of each prefix) before it are kept and the step costs (n - first) m; a
//! path costs at most n^2 m. Taillard's acceleration (`eval::Insertion`) evaluates all n + 1
//! positions of one job in O(n m) and would pay for a path that chose the best position at
//! each step, but here every step's position is fixed by B.

use super::instance::{advance, Instance};

/// The best sequence strictly inside the insertion path from `from` to `to` with at least
/// `min_distance` moves (at least 1) to each end, and its makespan; `None` where the path is
/// too short for one (including `from == to`). Ties go to the earlier step. Both must be
/// permutations of the instance's jobs.
pub fn relink(
    inst: &Instance,
    from: &[usize],
    to: &[usize],
    min_distance: usize,
) -> Option<(Vec<usize>, i64)> {
    let min_distance = min_distance.max(1);
    let mut path = InsertionPath::new(from, to);
    let distance = path.len();
    if distance < 2 * min_distance {
        return None;
    }
    let mut heads = Heads::new(inst, from);
    let mut best: Option<(Vec<usize>, i64)> = None;
    for step in 1..=distance - min_distance {
        let first_changed = path.step()?;
        let makespan = heads.update(inst, path.sequence(), first_changed);
        if step >= min_distance && best.as_ref().is_none_or(|b| makespan < b.1) {
            best = Some((path.sequence().to_vec(), makespan));
        }
    }
    best
}

/// The fewest insertion moves that turn `from` into `to` (n minus their longest common
/// subsequence), which is the length of [`relink`]'s path. Both must be permutations of
/// 0..n.
pub fn insertion_distance(from: &[usize], to: &[usize]) -> usize {
    InsertionPath::new(from, to).len()
}

/// The insertion path from one sequence to another, one move at a time (see the module
/// documentation for the rule).
#[derive(Debug, Clone)]
pub struct InsertionPath<'a> {
    to: &'a [usize],
    current: Vec<usize>,
    /// Whether each job is where `to` wants it relative to the other placed jobs: the common
    /// subsequence at first, then every job moved so far.
    placed: Vec<bool>,
    /// The next index of `to` whose job may still have to move.
    next: usize,
    steps_left: usize,
}

impl<'a> InsertionPath<'a> {
    /// The path from `from` to `to`, both permutations of 0..n.
    pub fn new(from: &[usize], to: &'a [usize]) -> InsertionPath<'a> {
        let n = from.len();
        let mut rank = vec![0usize; n];
        for (i, &job) in to.iter().enumerate() {
            rank[job] = i;
        }
        let ranks: Vec<usize> = from.iter().map(|&job| rank[job]).collect();
        let mut placed = vec![false; n];
        for i in longest_increasing(&ranks) {
            placed[from[i]] = true;
        }
        let steps_left = placed.iter().filter(|&&p| !p).count();
        InsertionPath {
            to,
            current: from.to_vec(),
            placed,
            next: 0,
            steps_left,
        }
    }

    /// Moves still to make.
    pub fn len(&self) -> usize {
        self.steps_left
    }

    pub fn is_empty(&self) -> bool {
        self.steps_left == 0
    }

    /// The sequence after the moves made so far.
    pub fn sequence(&self) -> &[usize] {
        &self.current
    }

    /// Makes the next move and returns the first position it changed; `None` at the end.
    pub fn step(&mut self) -> Option<usize> {
        while self.next < self.to.len() && self.placed[self.to[self.next]] {
            self.next += 1;
        }
        let t = self.next;
        let job = *self.to.get(t)?;
        let at = self.current.iter().position(|&j| j == job)?;
        self.current.remove(at);
        let into = if t == 0 {
            0
        } else {
            let previous = self.to[t - 1];
            self.current.iter().position(|&j| j == previous)? + 1
        };
        self.current.insert(into, job);
        self.placed[job] = true;
        self.steps_left -= 1;
        Some(at.min(into))
    }
}

/// Indices of one longest strictly increasing subsequence of `values` (patience sorting,
/// O(n log n); the same input always gives the same subsequence).
fn longest_increasing(values: &[usize]) -> Vec<usize> {
    // tails[k]: the index of the smallest last value of an increasing run of length k + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut previous = vec![usize::MAX; values.len()];
    for (i, &v) in values.iter().enumerate() {
        let k = tails.partition_point(|&t| values[t] < v);
        if k > 0 {
            previous[i] = tails[k - 1];
        }
        if k == tails.len() {
            tails.push(i);
        } else {
            tails[k] = i;
        }
    }
    let mut out = Vec::with_capacity(tails.len());
    let mut i = tails.last().copied().unwrap_or(usize::MAX);
    while i != usize::MAX {
        out.push(i);
        i = previous[i];
    }
    out.reverse();
    out
}

/// Completion times of every prefix of a sequence (`e[i m + k]`: position i on machine k),
/// recomputed from the first changed position after a move.
struct Heads {
    m: usize,
    e: Vec<i64>,
}

impl Heads {
    fn new(inst: &Instance, sequence: &[usize]) -> Heads {
        let mut heads = Heads {
            m: inst.machines,
            e: vec![0; sequence.len() * inst.machines],
        };
        heads.update(inst, sequence, 0);
        heads
    }

    /// Recomputes positions `first..` of `sequence` and returns its makespan.
    fn update(&mut self, inst: &Instance, sequence: &[usize], first: usize) -> i64 {
        let m = self.m;
        let mut completion = vec![0i64; m];
        if first > 0 {
            completion.copy_from_slice(&self.e[(first - 1) * m..first * m]);
        }
        for (i, &job) in sequence.iter().enumerate().skip(first) {
            advance(&mut completion, inst.job_times(job));
            self.e[i * m..(i + 1) * m].copy_from_slice(&completion);
        }
        self.e.last().copied().unwrap_or(0)
    }
}

/// The best distinct sequences seen, best first (by makespan, then sequence), at most
/// `capacity` of them: the guides of path relinking.
#[derive(Debug, Clone)]
pub struct ElitePool {
    capacity: usize,
    members: Vec<(i64, Vec<usize>)>,
}

impl ElitePool {
    pub fn new(capacity: usize) -> ElitePool {
        ElitePool {
            capacity,
            members: Vec::with_capacity(capacity + 1),
        }
    }

    /// Whether a sequence of this makespan could enter (the pool is not full, or it is no
    /// worse than the worst member), so callers fetch sequences only for those.
    pub fn admits(&self, makespan: i64) -> bool {
        self.members.len() < self.capacity
            || self.members.last().is_some_and(|(v, _)| makespan <= *v)
    }

    /// Adds a sequence unless it is already a member or worse than every member of a full
    /// pool; returns whether it entered.
    pub fn offer(&mut self, sequence: &[usize], makespan: i64) -> bool {
        if self.capacity == 0 {
            return false;
        }
        let key = (makespan, sequence);
        let at = self
            .members
            .partition_point(|(v, s)| (*v, s.as_slice()) < key);
        if self
            .members
            .get(at)
            .is_some_and(|(v, s)| (*v, s.as_slice()) == key)
            || at >= self.capacity
        {
            return false;
        }
        self.members.insert(at, (makespan, sequence.to_vec()));
        self.members.truncate(self.capacity);
        true
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The i-th best member: its sequence and makespan.
    pub fn get(&self, i: usize) -> Option<(&[usize], i64)> {
        self.members.get(i).map(|(v, s)| (s.as_slice(), *v))
    }

    /// Members best first.
    pub fn iter(&self) -> impl Iterator<Item = (&[usize], i64)> {
        self.members.iter().map(|(v, s)| (s.as_slice(), *v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pfsp::generate;
    use rand::seq::SliceRandom;

    /// The same path, built by its own rule from scratch at every step (the position of each
    /// job searched anew, no kept state but the sequence) and every step re-scored by
    /// `Instance::makespan`.
    fn reference(
        inst: &Instance,
        from: &[usize],
        to: &[usize],
        min_distance: usize,
    ) -> Option<(Vec<usize>, i64)> {
        let path = reference_path(from, to);
        let d = path.len() - 1;
        let m = min_distance.max(1);
        let mut best: Option<(Vec<usize>, i64)> = None;
        for (k, p) in path.iter().enumerate() {
            if k >= m && d >= k + m {
                let c = inst.makespan(p);
                if best.as_ref().is_none_or(|b| c < b.1) {
                    best = Some((p.clone(), c));
                }
            }
        }
        best
    }

    /// Every sequence of the path, both ends included.
    fn reference_path(from: &[usize], to: &[usize]) -> Vec<Vec<usize>> {
        let fixed = lcs_jobs(from, to);
        let mut cur = from.to_vec();
        let mut path = vec![cur.clone()];
        for (t, &job) in to.iter().enumerate() {
            if fixed.contains(&job) {
                continue;
            }
            cur.retain(|&j| j != job);
            let at = if t == 0 {
                0
            } else {
                cur.iter().position(|&j| j == to[t - 1]).unwrap() + 1
            };
            cur.insert(at, job);
            path.push(cur.clone());
        }
        assert_eq!(cur, to, "the path ends at the guide");
        path
    }

    /// The longest common subsequence by dynamic programming, O(n^2): the length is what
    /// matters (the tests compare it with the path's), the jobs one such subsequence.
    fn lcs_jobs(a: &[usize], b: &[usize]) -> Vec<usize> {
        let n = a.len();
        let mut table = vec![vec![0usize; n + 1]; n + 1];
        for i in (0..n).rev() {
            for j in (0..n).rev() {
                table[i][j] = if a[i] == b[j] {
                    table[i + 1][j + 1] + 1
                } else {
                    table[i + 1][j].max(table[i][j + 1])
                };
            }
        }
        // The patience subsequence the path keeps has this length; reuse it so that the
        // reference walks the same path.
        let rank: Vec<usize> = {
            let mut r = vec![0; n];
            for (i, &job) in b.iter().enumerate() {
                r[job] = i;
            }
            r
        };
        let ranks: Vec<usize> = a.iter().map(|&j| rank[j]).collect();
        let kept: Vec<usize> = longest_increasing(&ranks).iter().map(|&i| a[i]).collect();
        assert_eq!(kept.len(), table[0][0], "a longest common subsequence");
        kept
    }

    fn random_sequence(n: usize, rng: &mut crate::run::SolverRng) -> Vec<usize> {
        let mut s: Vec<usize> = (0..n).collect();
        s.shuffle(rng);
        s
    }

    /// `from` with `k` random insertion moves.
    fn moved(from: &[usize], k: usize, rng: &mut crate::run::SolverRng) -> Vec<usize> {
        use rand::Rng;
        let mut s = from.to_vec();
        for _ in 0..k {
            let job = s.remove(rng.random_range(0..s.len()));
            s.insert(rng.random_range(0..=s.len()), job);
        }
        s
    }

    fn taillard_ta051() -> Instance {
        let text = include_str!("../../../data/taillard/ta051.txt");
        let path = std::path::Path::new("data/taillard/ta051.txt");
        crate::pfsp::parse(text, path, None).unwrap()
    }

    #[test]
    fn every_step_equals_a_full_re_evaluation() {
        let mut rng = crate::run::stream_rng(7, 0);
        let instances = [
            generate(7, 3, 11),
            generate(20, 5, 873_654_221),
            generate(33, 37, 5),
            generate(100, 20, 1_923_497_586),
            taillard_ta051(),
        ];
        for inst in &instances {
            let n = inst.jobs;
            for pair in 0..4 {
                let from = random_sequence(n, &mut rng);
                // Unrelated sequences, and near ones (long common subsequences).
                let to = if pair % 2 == 0 {
                    random_sequence(n, &mut rng)
                } else {
                    moved(&from, 1 + n / 8, &mut rng)
                };
                // Every intermediate sequence's makespan, step by step.
                let mut path = InsertionPath::new(&from, &to);
                let mut heads = Heads::new(inst, &from);
                let steps = reference_path(&from, &to);
                assert_eq!(path.len(), steps.len() - 1, "{} pair {pair}", inst.name);
                for expected in &steps[1..] {
                    let first = path.step().unwrap();
                    assert_eq!(path.sequence(), &expected[..]);
                    let v = heads.update(inst, path.sequence(), first);
                    assert_eq!(v, inst.makespan(expected), "{} pair {pair}", inst.name);
                }
                assert_eq!(path.step(), None);
                for d in [0, 1, 2, 5, n / 3, n / 2] {
                    let got = relink(inst, &from, &to, d);
                    assert_eq!(got, reference(inst, &from, &to, d), "{} d = {d}", inst.name);
                    if let Some((p, v)) = got {
                        crate::permutation::check(&p, n).unwrap();
                        assert_eq!(inst.makespan(&p), v);
                        let need = d.max(1);
                        assert!(insertion_distance(&from, &p) >= need);
                        assert!(insertion_distance(&p, &to) >= need);
                        let total = insertion_distance(&from, &to);
                        assert_eq!(
                            insertion_distance(&from, &p) + insertion_distance(&p, &to),
                            total,
                            "the result lies on a shortest path"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_path_is_as_short_as_insertions_allow() {
        // One insertion apart, though every position differs.
        let from = [0, 1, 2, 3, 4, 5];
        let to = [1, 2, 3, 4, 5, 0];
        assert_eq!(insertion_distance(&from, &to), 1);
        assert_eq!(reference_path(&from, &to).len(), 2);
        // Reversal: only one job can stay.
        let rev = [5, 4, 3, 2, 1, 0];
        assert_eq!(insertion_distance(&from, &rev), 5);
        let mut rng = crate::run::stream_rng(3, 0);
        for n in [1usize, 2, 9, 40] {
            let a = random_sequence(n, &mut rng);
            let b = random_sequence(n, &mut rng);
            assert_eq!(insertion_distance(&a, &b), n - lcs_jobs(&a, &b).len());
            assert_eq!(insertion_distance(&a, &a), 0);
        }
    }

    #[test]
    fn short_paths_give_nothing() {
        let inst = generate(10, 4, 1);
        let p: Vec<usize> = (0..10).rev().collect();
        assert_eq!(relink(&inst, &p, &p, 1), None);
        assert_eq!(relink(&inst, &p, &p, 0), None);
        let mut q = p.clone();
        let job = q.remove(2);
        q.insert(7, job);
        assert_eq!(insertion_distance(&p, &q), 1);
        assert_eq!(relink(&inst, &p, &q, 1), None);
        let job = q.remove(0);
        q.insert(9, job);
        assert_eq!(insertion_distance(&p, &q), 2);
        let (mid, v) = relink(&inst, &p, &q, 1).unwrap();
        assert_eq!(insertion_distance(&p, &mid), 1);
        assert_eq!(insertion_distance(&mid, &q), 1);
        assert_eq!(inst.makespan(&mid), v);
        assert_eq!(relink(&inst, &p, &q, 2), None);
    }

    #[test]
    fn ties_go_to_the_earlier_step() {
        // All times equal: every sequence has the same makespan, so the first admissible step
        // wins.
        let inst = Instance::new("flat", 6, 2, vec![1; 12]).unwrap();
        let from: Vec<usize> = (0..6).collect();
        let to: Vec<usize> = (0..6).rev().collect();
        let (got, _) = relink(&inst, &from, &to, 2).unwrap();
        let path = reference_path(&from, &to);
        assert_eq!(got, path[2]);
    }

    #[test]
    fn the_elite_pool_keeps_distinct_sequences_best_first() {
        let mut pool = ElitePool::new(3);
        assert!(pool.is_empty() && pool.admits(i64::MAX));
        assert!(pool.offer(&[0, 1, 2], 10));
        assert!(!pool.offer(&[0, 1, 2], 10), "a member is not added twice");
        assert!(
            pool.offer(&[2, 1, 0], 10),
            "same makespan, another sequence"
        );
        assert!(pool.offer(&[1, 0, 2], 12));
        assert_eq!(pool.len(), 3);
        assert!(!pool.admits(13));
        assert!(!pool.offer(&[1, 2, 0], 13), "worse than a full pool");
        assert!(pool.offer(&[1, 2, 0], 9));
        let members: Vec<(Vec<usize>, i64)> = pool.iter().map(|(s, v)| (s.to_vec(), v)).collect();
        assert_eq!(
            members,
            vec![(vec![1, 2, 0], 9), (vec![0, 1, 2], 10), (vec![2, 1, 0], 10)]
        );
        assert_eq!(pool.get(0), Some((&[1, 2, 0][..], 9)));
        assert_eq!(pool.get(3), None);
        // Equal makespans order by sequence, so the order never depends on arrival.
        assert!(pool.offer(&[0, 2, 1], 10));
        assert_eq!(pool.get(2), Some((&[0, 2, 1][..], 10)));
        assert_eq!(pool.len(), 3);
        let mut none = ElitePool::new(0);
        assert!(!none.offer(&[0], 1));
        assert!(none.is_empty());
    }

    /// The host's cost of one path between unrelated sequences (the longest paths), which a
    /// restart pays per stalled walk: `cargo test -p mats-solvers --lib relink_cost --
    /// --ignored --nocapture`.
    #[test]
    #[ignore = "a timing, printed"]
    fn relink_cost_per_path() {
        let mut rng = crate::run::stream_rng(1, 0);
        for (n, m) in [(100usize, 20usize), (200, 20), (500, 20), (800, 60)] {
            let inst = generate(n, m, 1);
            let a = random_sequence(n, &mut rng);
            let b = random_sequence(n, &mut rng);
            let reps = 20;
            let started = std::time::Instant::now();
            let mut last = None;
            for _ in 0..reps {
                last = std::hint::black_box(relink(&inst, &a, &b, 4));
            }
            let ms = started.elapsed().as_secs_f64() * 1e3 / f64::from(reps);
            let (p, v) = last.unwrap();
            assert_eq!(inst.makespan(&p), v);
            eprintln!(
                "{n} x {m}: {} moves, {ms:.3} ms per path",
                insertion_distance(&a, &b)
            );
        }
    }
}
