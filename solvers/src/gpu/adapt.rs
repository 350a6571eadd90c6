//! `--adapt`: a race of run-time configurations ("arms") across the independent searches of
//! one GPU run (QAP rots-block's blocks, PFSP's iterated-greedy walks, HW/SW gpts-multi's
//! searches; "blocks" below). The blocks start spread evenly over the arms; after
//! every round of launches each arm is scored by how much its blocks' bests improved in the
//! round beyond where they started (a restart from another block's solution starts the block
//! at that solution's cost: [`Race::inherited`]), and part of the worst arm's blocks move to
//! the best arm. An arm is a restart rule with its stall and, where the kernel reads it per
//! block, a search knob (gpts-multi's tabu tenure, ig-block's destruction size, rots-block's
//! tenure range). The TSP focused colony races its ants instead of walks: every ant starts
//! each iteration from the colony's tour, so an arm (a number of new edges per construction)
//! is scored by what its ants took off that tour when one of them made the iteration's best
//! per unit of the time those ants spent ([`Race::after_launch_gains`]). An arm never
//! falls below a floor of blocks, so one that loses early can still win later in the run, when the searches
//! need other settings than at the start (the reason to adapt within a run rather than tune
//! once per class).

use std::time::{Duration, Instant};

/// How long a round lasts: at least this many launches and this much wall time. Launches
/// differ by family and instance (QAP rots-block: ~5 ms at n = 100; an iterated-greedy launch
/// aims at ~100 ms), so the round is set in time: a quarter second gives a 10 s run ~40 rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Round {
    pub launches: u32,
    pub time: Duration,
}

/// The rounds of `--adapt` runs.
pub const ROUND: Round = Round {
    launches: 2,
    time: Duration::from_millis(250),
};

/// The share of the worst arm's blocks moved after a round (a quarter: fast enough to follow
/// the run, slow enough that one lucky round does not empty an arm).
const MOVED_SHARE: usize = 4;

/// The arms of a race: `base` (the run's own configuration) first, then each variant that
/// differs from every arm before it.
pub fn arms<A: PartialEq>(base: A, variants: impl IntoIterator<Item = A>) -> Vec<A> {
    let mut arms = vec![base];
    for arm in variants {
        if !arms.contains(&arm) {
            arms.push(arm);
        }
    }
    arms
}

/// Twice and half (at least 1) a restart stall: the neighbours every family races.
pub fn stall_neighbours(stall: u32) -> [u32; 2] {
    [stall.saturating_mul(2), (stall / 2).max(1)]
}

/// The arms every family races around its run's restart configuration `base` (whose stall is
/// `stall`): the other restart rule, the family's `extra` arms, then twice and half the stall
/// (`with_stall` gives `base` with another stall); repeats are dropped as by [`arms`].
pub fn restart_arms<A: PartialEq + Copy>(
    base: A,
    other_rule: A,
    extra: impl IntoIterator<Item = A>,
    stall: u32,
    with_stall: impl Fn(u32) -> A,
) -> Vec<A> {
    let [longer, shorter] = stall_neighbours(stall);
    arms(
        base,
        std::iter::once(other_rule)
            .chain(extra)
            .chain([with_stall(longer), with_stall(shorter)]),
    )
}

/// Which arm each block runs, and the round's bookkeeping.
#[derive(Debug, Clone)]
pub struct Race {
    arm_of: Vec<usize>,
    arms: usize,
    /// Each block's best at the start of the round (`None` before the first launch).
    round_start: Option<Vec<i64>>,
    launches: u32,
    round: Round,
    round_started: Instant,
    min_blocks: usize,
    moved: usize,
    /// Each block's gains so far in the round ([`Race::after_launch_gains`]).
    round_gains: Vec<f64>,
    /// Each block's time spent so far in the round ([`Race::after_launch_gains`]).
    round_spent: Vec<f64>,
}

impl Race {
    /// `blocks` spread round-robin over `arms` (block i runs arm i mod arms), rounds of
    /// `round`; each arm keeps at least a quarter of its fair share of blocks.
    pub fn new(arms: usize, blocks: usize, round: Round) -> Race {
        let arms = arms.max(1);
        Race {
            arm_of: (0..blocks).map(|b| b % arms).collect(),
            arms,
            round_start: None,
            launches: 0,
            round: Round {
                launches: round.launches.max(1),
                ..round
            },
            round_started: Instant::now(),
            min_blocks: (blocks / (MOVED_SHARE * arms)).max(1),
            moved: 0,
            round_gains: Vec::new(),
            round_spent: Vec::new(),
        }
    }

    /// The race of `arms` arms over `blocks` blocks in [`ROUND`]s; none with a single arm.
    pub fn over(arms: usize, blocks: usize) -> Option<Race> {
        (arms > 1).then(|| Race::new(arms, blocks, ROUND))
    }

    /// The arm block `block` runs.
    pub fn arm(&self, block: usize) -> usize {
        self.arm_of.get(block).copied().unwrap_or(0)
    }

    /// The configuration block `block` runs: `arms[0]` without a race (`arms` is never
    /// empty: [`arms`] builds it).
    pub fn pick<A: Copy>(race: Option<&Race>, arms: &[A], block: usize) -> A {
        arms[race.map_or(0, |r| r.arm(block))]
    }

    /// Blocks per arm.
    pub fn shares(&self) -> Vec<usize> {
        let mut shares = vec![0; self.arms];
        for &a in &self.arm_of {
            shares[a] += 1;
        }
        shares
    }

    /// For the log and `--json`: "adapt: UNIT per arm at the end: K x (LABEL), ...;
    /// M moved", with one label per arm in arm order.
    pub fn summary(&self, unit: &str, labels: impl IntoIterator<Item = String>) -> String {
        let arms: Vec<String> = labels
            .into_iter()
            .zip(self.shares())
            .map(|(label, k)| format!("{k} x ({label})"))
            .collect();
        format!(
            "adapt: {unit} per arm at the end: {}; {} moved",
            arms.join(", "),
            self.moved
        )
    }

    /// Called after every launch with each block's best cost (minimised). At the end of a
    /// round, moves blocks from the worst-scoring arm to the best ([`Race::scores`]); returns
    /// how many moved.
    pub fn after_launch(&mut self, bests: &[i64]) -> usize {
        if self.round_start.is_none() {
            self.round_start = Some(bests.to_vec());
            self.round_started = Instant::now();
            return 0;
        }
        if !self.round_over() {
            return 0;
        }
        let Some(start) = self.round_start.as_ref().filter(|s| s.len() == bests.len()) else {
            return 0;
        };
        let scores = self.scores(start, bests);
        self.round_start = Some(bests.to_vec());
        // The worst arm's weakest blocks (the highest bests) move: they gain most from other
        // settings.
        self.reassign(&scores, |b| bests[b] as f64)
    }

    /// Called after every launch with what each block gained in it (a relative improvement,
    /// never negative) and the time it spent in it (any unit, the same for every block), for
    /// searches whose blocks are not walks with a best of their own: the focused colony's ants
    /// all start each iteration from the colony's tour, and an ant's gain is what its tour took
    /// off that tour's length where it became the iteration's best. At the end of a round an
    /// arm scores its blocks' gains over the round per unit of their time (arms whose blocks
    /// share a launch differ in what they cost, not in how long the round lasts), and the worst
    /// arm's blocks that gained least move to the best arm; returns how many moved.
    pub fn after_launch_gains(&mut self, gains: &[f64], spent: &[f64]) -> usize {
        if self.round_gains.len() != gains.len() {
            self.round_gains = vec![0.0; gains.len()];
            self.round_spent = vec![0.0; gains.len()];
            self.round_started = Instant::now();
            self.launches = 0;
        }
        for (sum, g) in self.round_gains.iter_mut().zip(gains) {
            *sum += g.max(0.0);
        }
        for (sum, t) in self.round_spent.iter_mut().zip(spent) {
            *sum += t.max(0.0);
        }
        if !self.round_over() {
            return 0;
        }
        let scores = self.arm_ratios(
            self.round_gains
                .iter()
                .copied()
                .zip(self.round_spent.iter().copied()),
        );
        let gained = std::mem::replace(&mut self.round_gains, vec![0.0; gains.len()]);
        self.round_spent.fill(0.0);
        self.reassign(&scores, |b| -gained[b])
    }

    /// Counts a launch; true (and a new round begun) when the round has had its launches and
    /// its time.
    fn round_over(&mut self) -> bool {
        self.launches += 1;
        if self.launches < self.round.launches || self.round_started.elapsed() < self.round.time {
            return false;
        }
        self.round_started = Instant::now();
        self.launches = 0;
        true
    }

    /// Moves a share of the worst-scoring arm's blocks to the best-scoring arm, the blocks with
    /// the highest `weakness` first; returns how many moved.
    fn reassign(&mut self, scores: &[f64], weakness: impl Fn(usize) -> f64) -> usize {
        let shares = self.shares();
        let by_score = |a: &usize, b: &usize| scores[*a].total_cmp(&scores[*b]).then(b.cmp(a));
        let Some(best) = (0..self.arms).max_by(by_score) else {
            return 0;
        };
        // The worst arm that can give blocks (ties: the higher index, so arm 0, the
        // configuration the run was given, is the last to lose them).
        let Some(worst) = (0..self.arms)
            .filter(|&a| a != best && shares[a] > self.min_blocks)
            .min_by(by_score)
        else {
            return 0;
        };
        if scores[worst] >= scores[best] {
            return 0;
        }
        let give = (shares[worst] / MOVED_SHARE)
            .max(1)
            .min(shares[worst] - self.min_blocks);
        let mut members: Vec<usize> = (0..self.arm_of.len())
            .filter(|&b| self.arm_of[b] == worst)
            .collect();
        members.sort_by(|&a, &b| weakness(b).total_cmp(&weakness(a)).then(a.cmp(&b)));
        for &b in members.iter().take(give) {
            self.arm_of[b] = best;
        }
        self.moved += give;
        give
    }

    /// Block `block` restarted from another block's solution whose cost is `cost`: the round
    /// then measures its improvement from there. Without this an arm whose blocks restart
    /// often from elites would score the elites' costs as its own search's gains (a copied
    /// best improves a mediocre block's best without improving the run's).
    pub fn inherited(&mut self, block: usize, cost: i64) {
        if let Some(start) = self.round_start.as_mut().and_then(|s| s.get_mut(block)) {
            *start = (*start).min(cost);
        }
    }

    /// Each arm's score over a round: the mean, over its blocks, of the relative improvement of
    /// the block's best (`(start - now) / start`; an arm without blocks scores 0).
    pub fn scores(&self, start: &[i64], now: &[i64]) -> Vec<f64> {
        self.arm_means(start.iter().zip(now).map(|(&s, &n)| {
            if s > n && s != i64::MAX && s > 0 {
                (s - n) as f64 / s as f64
            } else {
                0.0
            }
        }))
    }

    /// The mean per arm of one value per block (block b's value is the iterator's b-th); an
    /// arm without blocks scores 0.
    fn arm_means(&self, values: impl Iterator<Item = f64>) -> Vec<f64> {
        self.arm_ratios(values.map(|v| (v, 1.0)))
    }

    /// Per arm, the sum of its blocks' values over the sum of their weights (block b's pair is
    /// the iterator's b-th); an arm without weight scores 0.
    fn arm_ratios(&self, pairs: impl Iterator<Item = (f64, f64)>) -> Vec<f64> {
        let mut sum = vec![0.0; self.arms];
        let mut weight = vec![0.0; self.arms];
        for (b, (v, w)) in pairs.enumerate() {
            let a = self.arm(b);
            sum[a] += v;
            weight[a] += w;
        }
        sum.iter()
            .zip(&weight)
            .map(|(&s, &w)| if w > 0.0 { s / w } else { 0.0 })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds counted in launches only, so the tests do not depend on the clock.
    fn by_launches(launches: u32) -> Round {
        Round {
            launches,
            time: Duration::ZERO,
        }
    }

    #[test]
    fn blocks_start_spread_and_the_improving_arm_gains_blocks() {
        let mut race = Race::new(3, 12, by_launches(2));
        assert_eq!(race.shares(), [4, 4, 4]);
        assert_eq!(
            (0..12).map(|b| race.arm(b)).collect::<Vec<_>>()[..4],
            [0, 1, 2, 0]
        );
        let mut bests = vec![1000i64; 12];
        assert_eq!(
            race.after_launch(&bests),
            0,
            "the first launch starts the round"
        );
        // Arm 1's blocks improve, arm 2's do not, arm 0's a little.
        for (b, best) in bests.iter_mut().enumerate() {
            *best -= match race.arm(b) {
                1 => 50,
                0 => 5,
                _ => 0,
            };
        }
        assert_eq!(race.after_launch(&bests), 0, "mid-round");
        // Arm 2's weakest block moves (block 8 holds its worst best; ties would go to the
        // lower index).
        bests[8] += 7;
        assert_eq!(race.after_launch(&bests), 1, "a quarter of 4 blocks moves");
        assert_eq!(race.shares(), [4, 5, 3]);
        assert_eq!(race.arm(8), 1);
        assert!(race
            .summary("blocks", ["a", "b", "c"].map(String::from))
            .ends_with("; 1 moved"));
    }

    #[test]
    fn arms_keep_their_floor_and_ties_move_nothing() {
        let mut race = Race::new(2, 8, by_launches(1));
        // Floor: 8 / (4 x 2) = 1 block.
        let mut bests = vec![100i64; 8];
        race.after_launch(&bests);
        assert_eq!(
            race.after_launch(&bests),
            0,
            "no arm improved: nothing moves"
        );
        for round in 0..20 {
            for (b, best) in bests.iter_mut().enumerate() {
                if race.arm(b) == 0 {
                    *best -= 1;
                }
            }
            race.after_launch(&bests);
            assert!(race.shares()[1] >= 1, "round {round}: {:?}", race.shares());
        }
        assert_eq!(race.shares(), [7, 1]);
    }

    #[test]
    fn arms_keep_the_base_first_and_drop_repeats() {
        assert_eq!(arms(3, [4, 3, 6, 4, 1]), [3, 4, 6, 1]);
        assert_eq!(stall_neighbours(5), [10, 2]);
        assert_eq!(stall_neighbours(1), [2, 1]);
        assert_eq!(stall_neighbours(u32::MAX)[0], u32::MAX);
    }

    #[test]
    fn an_inherited_cost_is_not_scored_as_the_arms_gain() {
        let mut race = Race::new(2, 4, by_launches(1));
        race.inherited(0, 10);
        race.after_launch(&[100, 100, 100, 100]);
        // Block 0 (arm 0) restarts from a copy of a best of 60 and reaches 60; block 1 (arm 1)
        // improves by its own search to 90.
        race.inherited(0, 60);
        let bests = [60, 90, 100, 100];
        let start = race.round_start.clone().expect("the round started");
        let scores = race.scores(&start, &bests);
        assert_eq!(scores[0], 0.0, "{scores:?}");
        assert!(scores[1] > 0.0, "{scores:?}");
        assert_eq!(race.after_launch(&bests), 1, "arm 0 gives a block to arm 1");
        assert_eq!(race.shares(), [1, 3]);
    }

    #[test]
    fn gains_move_the_least_gaining_ants_of_the_worst_arm() {
        let mut race = Race::new(3, 12, by_launches(2));
        let mut gains = vec![0.0; 12];
        // Arm 1's ants gain most per ant, arm 0 a little, arm 2 nothing.
        for (b, g) in gains.iter_mut().enumerate() {
            *g = match race.arm(b) {
                1 => 0.01,
                0 => 0.001,
                _ => 0.0,
            };
        }
        // Every ant spends the same time: the arms score their mean gain per ant.
        let same = vec![1.0; 12];
        assert_eq!(race.after_launch_gains(&gains, &same), 0, "mid-round");
        // Arm 2's ants (2, 5, 8, 11): block 5 gained something in the second launch, so one of
        // the others moves, the lowest index among those that gained least.
        let mut second = gains.clone();
        second[5] = 0.0005;
        assert_eq!(race.after_launch_gains(&second, &same), 1);
        assert_eq!(race.shares(), [4, 5, 3]);
        assert_eq!(race.arm(2), 1, "ant 2 gained least and came first");
        assert_eq!(race.arm(5), 2, "ant 5 gained and stays");
        // A round where nobody gains moves nothing, and the round's sums start again.
        let none = vec![0.0; 12];
        assert_eq!(race.after_launch_gains(&none, &same), 0);
        assert_eq!(race.after_launch_gains(&none, &same), 0);
        assert_eq!(race.shares(), [4, 5, 3]);
    }

    #[test]
    fn gains_are_charged_for_the_time_their_ants_spent() {
        // Arm 0's ants gain twice what arm 1's do but take three times as long: per unit of
        // time arm 1 is ahead, and arm 0 gives ants to it.
        let mut race = Race::new(2, 8, by_launches(1));
        let gains: Vec<f64> = (0..8)
            .map(|b| if b % 2 == 0 { 0.02 } else { 0.01 })
            .collect();
        let spent: Vec<f64> = (0..8).map(|b| if b % 2 == 0 { 3.0 } else { 1.0 }).collect();
        assert_eq!(race.after_launch_gains(&gains, &spent), 1);
        assert_eq!(race.shares(), [3, 5]);
        // With equal times the same gains favour arm 0.
        let mut race = Race::new(2, 8, by_launches(1));
        assert_eq!(race.after_launch_gains(&gains, &[1.0; 8]), 1);
        assert_eq!(race.shares(), [5, 3]);
        // No time at all (a caller that could not measure it) scores nothing: nothing moves.
        let mut race = Race::new(2, 8, by_launches(1));
        assert_eq!(race.after_launch_gains(&gains, &[0.0; 8]), 0);
    }

    #[test]
    fn scores_are_mean_relative_improvements() {
        let race = Race::new(2, 4, by_launches(1));
        let s = race.scores(&[100, 200, 100, i64::MAX], &[90, 200, 100, 50]);
        // Arm 0: blocks 0 and 2 (0.1 and 0); arm 1: blocks 1 and 3 (0 and a first best).
        assert!((s[0] - 0.05).abs() < 1e-12, "{s:?}");
        assert_eq!(s[1], 0.0);
    }
}
