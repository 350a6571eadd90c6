//! CPU reference of the GPU `ig-warp` walk (`kernels/pfsp/ig-warp.cu`): the same iterated greedy
//! with the same counter-based draws, so that a seeded walk takes exactly the GPU walk's moves
//! (the GPU tests compare every walk's current and best sequences, makespans, draw counters and
//! destruction sizes after several launches).
//!
//! Differences from the CPU [`super::ig`] (Ruiz & Stützle):
//! - draws come from a SplitMix64 hash of (seed, walk, counter) ([`hash`]), which the kernel
//!   mirrors, instead of a ChaCha stream;
//! - acceptance of a worse result compares a 32-bit draw with `floor(exp(-delta / T) 2^32)` from
//!   a table computed once on the host ([`acceptance_table`]): no `exp` evaluated on the GPU, so
//!   CPU and GPU decide identically;
//! - adaptive destruction: d returns to `d_min` when an iteration beats the current makespan and
//!   otherwise grows by one up to `d_max` (`d_min == d_max` is the classic fixed d);
//! - optional tie moves in the local search (`ties`): a job is also moved to its first best
//!   position when that equals the current makespan at another position (a plateau move that does
//!   not by itself start another sweep), which lets the walk drift across Taillard's plateaus.
//!
//! Every insertion is evaluated for all positions at once with Taillard's acceleration
//! ([`super::eval::Insertion`], heads and tails in `i64`); tests check each chosen move's makespan
//! against a full re-evaluation of the sequence.

use std::time::Instant;

use super::eval::Insertion;
use super::instance::Instance;

/// The most jobs one destruction removes (the kernel keeps them in a fixed array).
pub const MAX_DESTRUCTION: usize = 64;

/// Settings of one walk.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WalkParams {
    /// Smallest (and first) destruction size.
    pub d_min: usize,
    /// Largest destruction size (`d_min` for a fixed d).
    pub d_max: usize,
    /// Temperature factor T (the temperature is `T * sum(p) / (n m 10)`, as in [`super::ig`]).
    pub temperature: f64,
    /// Plateau moves in the local search.
    pub ties: bool,
}

impl Default for WalkParams {
    fn default() -> Self {
        WalkParams {
            d_min: 2,
            d_max: 6,
            temperature: 0.4,
            ties: true,
        }
    }
}

impl WalkParams {
    /// `d_min` and `d_max` clamped to what an n-job instance allows (at most n - 1 removed).
    pub fn clamped(&self, n: usize) -> (usize, usize) {
        let top = n.saturating_sub(1).clamp(1, MAX_DESTRUCTION);
        let d_min = self.d_min.clamp(1, top);
        (d_min, self.d_max.clamp(d_min, top))
    }
}

/// SplitMix64 of a mix of seed, walk and counter; `igw_hash` in the kernel is the same function.
pub fn hash(seed: u64, stream: u64, counter: u64) -> u64 {
    let mut z = seed
        ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ counter.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The absolute temperature of a temperature factor on an instance.
pub fn temperature(inst: &Instance, factor: f64) -> f64 {
    let total: i64 = inst.times_machine_major().iter().sum();
    factor * total as f64 / (inst.jobs * inst.machines * 10) as f64
}

/// Longest acceptance table: beyond it the last entry stands for every larger delta.
pub const MAX_TABLE: usize = 1 << 16;

/// `table[delta] = floor(exp(-delta / T) 2^32)` for delta = 0.. until an entry is 0 (or
/// [`MAX_TABLE`] entries); a worse result by delta is accepted when a 32-bit draw is below
/// `table[min(delta, len - 1)]`. T = 0: `[0]`, nothing worse is accepted.
pub fn acceptance_table(temperature: f64) -> Vec<u32> {
    let mut table = Vec::new();
    if !(temperature.is_finite() && temperature > 0.0) {
        return vec![0];
    }
    for delta in 0..MAX_TABLE {
        let p = (-(delta as f64) / temperature).exp() * 4_294_967_296.0;
        let entry = if p >= 4_294_967_295.0 {
            u32::MAX
        } else {
            p as u32
        };
        table.push(entry);
        if entry == 0 {
            break;
        }
    }
    table
}

/// One walk's state, as the kernel keeps it between launches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walk {
    pub index: u64,
    pub cur: Vec<usize>,
    /// `None` until the start has been improved by local search.
    pub cur_value: Option<i64>,
    pub best: Vec<usize>,
    pub best_value: i64,
    pub counter: u64,
    pub d: usize,
    /// Insertion positions evaluated.
    pub evaluated: u64,
}

/// The moves a walk took, for tests: every accepted local-search or construction step's
/// makespan with the sequence it belongs to is re-scored there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub sequence: Vec<usize>,
    pub makespan: i64,
}

/// Runs walks of the reference; reusable buffers.
pub struct Walker<'a> {
    inst: &'a Instance,
    seed: u64,
    d_min: usize,
    d_max: usize,
    ties: bool,
    table: Vec<u32>,
    insertion: Insertion,
    values: Vec<i64>,
    /// With `Some`, every insertion's result (the sequence after it and its claimed makespan).
    pub trace: Option<Vec<Step>>,
    /// [`Walker::improve_until`]'s stop (never set during a walk's iterations, which the GPU
    /// mirrors exactly).
    until: Option<Instant>,
}

impl<'a> Walker<'a> {
    pub fn new(inst: &'a Instance, params: &WalkParams, seed: u64) -> Walker<'a> {
        let (d_min, d_max) = params.clamped(inst.jobs);
        Walker {
            inst,
            seed,
            d_min,
            d_max,
            ties: params.ties,
            table: acceptance_table(temperature(inst, params.temperature)),
            insertion: Insertion::new(),
            values: Vec::new(),
            trace: None,
            until: None,
        }
    }

    /// The acceptance table this walker uses (the GPU driver uploads the same).
    pub fn table(&self) -> &[u32] {
        &self.table
    }

    /// A walk from `start` (of makespan `value`), before its first local search.
    pub fn start(&self, index: u64, start: &[usize], value: i64) -> Walk {
        Walk {
            index,
            cur: start.to_vec(),
            cur_value: None,
            best: start.to_vec(),
            best_value: value,
            counter: 0,
            d: self.d_min,
            evaluated: 0,
        }
    }

    /// A walk from a start that has had its local search already (`value` its makespan).
    pub fn start_improved(&self, index: u64, start: &[usize], value: i64) -> Walk {
        Walk {
            cur_value: Some(value),
            ..self.start(index, start, value)
        }
    }

    /// The local search of a start on the host (draws of walk `u64::MAX`), which every GPU walk
    /// then shares: one search instead of one per walk, and for large instances (800 x 60) far
    /// quicker on a CPU core than on one warp.
    pub fn improve(&mut self, start: &[usize]) -> (Vec<usize>, i64) {
        self.improve_until(start, None)
    }

    /// As [`Walker::improve`], stopping between two insertions once `until` has passed (the
    /// sequence so far and its exact makespan): at 800 x 60 one full local search of NEH's
    /// sequence takes 4-8 s on one core, too much of a short time limit.
    pub fn improve_until(&mut self, start: &[usize], until: Option<Instant>) -> (Vec<usize>, i64) {
        let value = self.inst.makespan(start);
        let mut walk = self.start(u64::MAX, start, value);
        let mut seq = start.to_vec();
        self.until = until;
        let value = self.local_search(&mut walk, &mut seq, value);
        self.until = None;
        (seq, value)
    }

    fn draw(&self, walk: &mut Walk) -> u64 {
        let v = hash(self.seed, walk.index, walk.counter);
        walk.counter += 1;
        v
    }

    /// First best position for `job` in `seq` and the makespan there.
    fn best_insertion(&mut self, walk: &mut Walk, seq: &[usize], job: usize) -> (usize, i64) {
        self.insertion
            .evaluate_all(self.inst, seq, job, &mut self.values);
        walk.evaluated += self.values.len() as u64;
        let mut best = (0, i64::MAX);
        for (pos, &v) in self.values.iter().enumerate() {
            if v < best.1 {
                best = (pos, v);
            }
        }
        best
    }

    fn record(&mut self, seq: &[usize], makespan: i64) {
        if let Some(trace) = &mut self.trace {
            trace.push(Step {
                sequence: seq.to_vec(),
                makespan,
            });
        }
    }

    fn local_search(&mut self, walk: &mut Walk, seq: &mut Vec<usize>, mut value: i64) -> i64 {
        let n = seq.len();
        let mut order: Vec<usize> = Vec::with_capacity(n);
        let mut improved = true;
        while improved {
            improved = false;
            order.clear();
            order.extend(0..n);
            for i in (1..n).rev() {
                let j = (self.draw(walk) % (i as u64 + 1)) as usize;
                order.swap(i, j);
            }
            for &job in &order {
                if crate::run::past(self.until) {
                    return value;
                }
                let from = seq.iter().position(|&j| j == job).unwrap_or(0);
                seq.remove(from);
                let (to, v) = self.best_insertion(walk, seq, job);
                if v < value {
                    seq.insert(to, job);
                    value = v;
                    improved = true;
                    self.record(seq, v);
                } else if self.ties && v == value && to != from {
                    seq.insert(to, job);
                    self.record(seq, v);
                } else {
                    seq.insert(from, job);
                }
            }
        }
        value
    }

    /// `iterations` iterations of the walk (after its first local search if it has not had
    /// one), exactly as one or several launches of the kernel run them.
    pub fn run(&mut self, walk: &mut Walk, iterations: u64) {
        let n = self.inst.jobs;
        if walk.cur_value.is_none() {
            let mut seq = walk.cur.clone();
            let value = self.local_search(walk, &mut seq, walk.best_value);
            walk.cur = seq;
            walk.cur_value = Some(value);
            if value < walk.best_value {
                walk.best_value = value;
                walk.best.clone_from(&walk.cur);
            }
        }
        if n < 2 {
            return;
        }
        for _ in 0..iterations {
            let cur_value = walk.cur_value.unwrap_or(walk.best_value);
            let mut seq = walk.cur.clone();
            let mut removed = Vec::with_capacity(walk.d);
            for r in 0..walk.d {
                let pos = (self.draw(walk) % (n - r) as u64) as usize;
                removed.push(seq.remove(pos));
            }
            let mut value = 0;
            for &job in &removed {
                let (pos, v) = self.best_insertion(walk, &seq, job);
                seq.insert(pos, job);
                value = v;
                self.record(&seq, v);
            }
            value = self.local_search(walk, &mut seq, value);
            let mut accept = value <= cur_value;
            if !accept {
                let u = (self.draw(walk) >> 32) as u32;
                let delta = value - cur_value;
                let last = self.table.len() - 1;
                let index = usize::try_from(delta).map_or(last, |d| d.min(last));
                accept = u < self.table[index];
            }
            walk.d = if value < cur_value {
                self.d_min
            } else {
                (walk.d + 1).min(self.d_max)
            };
            if accept {
                walk.cur = seq;
                walk.cur_value = Some(value);
                if value < walk.best_value {
                    walk.best_value = value;
                    walk.best.clone_from(&walk.cur);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pfsp::{generate, neh};

    /// The start's local search stops at its deadline with an exact makespan: a deadline
    /// already past returns the start itself, none gives what `improve` gives, and the walk's
    /// own searches are never cut (the stop is cleared).
    #[test]
    fn the_start_search_stops_at_its_deadline() {
        let inst = generate(60, 10, 3);
        let start = neh(&inst);
        let mut walker = Walker::new(&inst, &WalkParams::default(), 1);
        let (seq, v) = walker.improve_until(&start, Some(Instant::now()));
        assert_eq!(
            (seq.as_slice(), v),
            (start.as_slice(), inst.makespan(&start))
        );
        let full = Walker::new(&inst, &WalkParams::default(), 1).improve(&start);
        assert_eq!(walker.improve_until(&start, None), full);
        assert!(full.1 <= inst.makespan(&start));
        assert_eq!(inst.makespan(&full.0), full.1);
        assert!(walker.until.is_none());
    }

    #[test]
    fn hash_is_splitmix_of_the_mix() {
        // Fixed values guard the kernel's mirror against an edit on one side only.
        assert_eq!(hash(0, 0, 0), 0xE220_A839_7B1D_CDAF);
        assert_ne!(hash(1, 0, 0), hash(0, 1, 0));
        assert_ne!(hash(0, 1, 0), hash(0, 0, 1));
    }

    #[test]
    fn acceptance_table_is_exp_and_ends_in_zero() {
        let t = acceptance_table(2.0);
        assert_eq!(t[0], u32::MAX);
        assert_eq!(*t.last().unwrap(), 0);
        for (d, &v) in t.iter().enumerate() {
            let p = (-(d as f64) / 2.0).exp() * 4_294_967_296.0;
            assert!(
                (v as f64 - p.min(4_294_967_295.0)).abs() <= 1.0,
                "{d}: {v} vs {p}"
            );
        }
        assert!(t.windows(2).all(|w| w[0] >= w[1]));
        assert_eq!(acceptance_table(0.0), vec![0]);
    }

    #[test]
    fn every_move_is_rescored_and_the_walk_is_seeded() {
        for (n, m, seed) in [(20, 5, 1u64), (30, 10, 2), (12, 40, 3), (50, 20, 4)] {
            let inst = generate(n, m, seed as i64);
            let start = neh(&inst);
            let start_value = inst.makespan(&start);
            for ties in [false, true] {
                let params = WalkParams {
                    d_min: 2,
                    d_max: 5,
                    temperature: 0.4,
                    ties,
                };
                let mut walker = Walker::new(&inst, &params, 7);
                walker.trace = Some(Vec::new());
                let mut walk = walker.start(3, &start, start_value);
                walker.run(&mut walk, 40);
                let trace = walker.trace.take().unwrap();
                assert!(!trace.is_empty());
                for step in &trace {
                    assert_eq!(inst.makespan(&step.sequence), step.makespan, "{n}x{m}");
                }
                crate::permutation::check(&walk.best, n).unwrap();
                assert_eq!(inst.makespan(&walk.best), walk.best_value);
                assert_eq!(Some(inst.makespan(&walk.cur)), walk.cur_value);
                assert!(walk.best_value <= start_value);
                assert!((2..=5).contains(&walk.d));
                // The same seed and walk give the same walk; in two halves too (launches).
                let mut again = Walker::new(&inst, &params, 7);
                let mut split = again.start(3, &start, start_value);
                again.run(&mut split, 15);
                again.run(&mut split, 25);
                assert_eq!(split, walk);
                let mut other = again.start(4, &start, start_value);
                again.run(&mut other, 40);
                assert_ne!(other.counter, 0);
            }
        }
    }

    #[test]
    fn adaptive_destruction_moves_between_its_bounds() {
        let inst = generate(40, 10, 9);
        let start = neh(&inst);
        let params = WalkParams {
            d_min: 2,
            d_max: 8,
            temperature: 0.0,
            ties: false,
        };
        let mut walker = Walker::new(&inst, &params, 1);
        let mut walk = walker.start(0, &start, inst.makespan(&start));
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..60 {
            walker.run(&mut walk, 1);
            seen.insert(walk.d);
        }
        assert!(seen.iter().all(|d| (2..=8).contains(d)));
        assert!(seen.len() >= 3, "d stayed in {seen:?}");
        // T = 0 accepts nothing worse: the current value never rises.
        let mut walk = walker.start(1, &start, inst.makespan(&start));
        walker.run(&mut walk, 0);
        let mut last = walk.cur_value.unwrap();
        for _ in 0..30 {
            walker.run(&mut walk, 1);
            let now = walk.cur_value.unwrap();
            assert!(now <= last);
            last = now;
        }
    }

    #[test]
    fn reaches_the_optimum_of_a_small_instance() {
        let inst = generate(7, 3, 11);
        let mut p: Vec<usize> = (0..7).collect();
        let mut optimum = i64::MAX;
        permute(&mut p, 0, &mut |q| optimum = optimum.min(inst.makespan(q)));
        let start = neh(&inst);
        let mut walker = Walker::new(&inst, &WalkParams::default(), 5);
        let best = (0..8)
            .map(|w| {
                let mut walk = walker.start(w, &start, inst.makespan(&start));
                walker.run(&mut walk, 50);
                walk.best_value
            })
            .min()
            .unwrap();
        assert_eq!(best, optimum);
    }

    fn permute(p: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize])) {
        if k == p.len() {
            f(p);
            return;
        }
        for i in k..p.len() {
            p.swap(k, i);
            permute(p, k + 1, f);
            p.swap(k, i);
        }
    }
}
