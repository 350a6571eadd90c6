//! The host side of ig-block's and ig-warp's restarts between launches, apart from the device
//! buffers so that tests run it without a GPU: which walks restart, and the sequence and
//! makespan each continues from ([`Restart`], written to the walk's current sequence and
//! value as the kernels read them by [`apply`]; the walk keeps its own best unless a relinked
//! sequence beats it).
//!
//! A walk whose best has not improved for `stall` launches restarts; the best walk never does.
//! Without relinking it continues from the best sequence of one of the four best walks (drawn
//! at random). With relinking (`relink`), the walks' bests feed an elite pool of `elite`
//! distinct sequences kept across launches, and a stalled walk continues from the best
//! sequence on the insertion path from its own best toward a random member of the pool
//! ([`crate::pfsp::relink`]), at least `min_distance` moves from both, with that sequence's
//! makespan computed on the host; where the path is too short it continues from the member
//! itself. Relinking costs at most n^2 m per stalled walk on the host (3 ms at 500 x 20, 19 ms
//! at 800 x 60 between unrelated sequences: `relink::tests::relink_cost_per_path`) while the
//! GPU waits, so the walks of one launch are relinked in parallel.

use rand::Rng;
use rayon::prelude::*;

use crate::gpu::adapt::{self, Race};
use crate::gpu::stalls::Stalls;
use crate::pfsp::relink::{relink, ElitePool};
use crate::pfsp::Instance;
use crate::run::SolverRng;

/// How many of the best walks a restart without relinking copies from.
const ELITE_WALKS: usize = 4;

/// One walk's new current sequence (job ids as the kernels store them) and its makespan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restart {
    pub walk: usize,
    pub sequence: Vec<i32>,
    pub value: i64,
    /// Found on a path (not a copy of a sequence some walk or the pool already holds).
    pub relinked: bool,
}

/// The walks' state as the kernels keep it, copied to the host: current and best sequences
/// (walks x n job ids) and their makespans.
pub struct WalkRows<'a> {
    pub cur: &'a mut [i32],
    pub cur_values: &'a mut [i64],
    pub best: &'a mut [i32],
    pub best_values: &'a mut [i64],
}

/// Writes a plan into the walks' rows: each restarted walk's current sequence and its exact
/// makespan (>= 0, so the kernels take it as the value instead of improving the sequence
/// first). Where a relinked sequence beats the walk's own best it becomes the best too (a
/// copied one never does, as before relinking existed: another walk holds it): the
/// kernels compare only their iterations' results with the best, so the walk would otherwise
/// lose it. Returns whether any best changed (then the bests must be written back too).
pub fn apply(plan: &[Restart], n: usize, rows: WalkRows) -> bool {
    let mut best_changed = false;
    for r in plan.iter().filter(|r| r.sequence.len() == n) {
        let range = r.walk * n..(r.walk + 1) * n;
        let (Some(cur), Some(cur_value)) = (
            rows.cur.get_mut(range.clone()),
            rows.cur_values.get_mut(r.walk),
        ) else {
            continue;
        };
        cur.copy_from_slice(&r.sequence);
        *cur_value = r.value;
        if let (Some(best), Some(best_value)) =
            (rows.best.get_mut(range), rows.best_values.get_mut(r.walk))
        {
            if r.relinked && r.value < *best_value {
                best.copy_from_slice(&r.sequence);
                *best_value = r.value;
                best_changed = true;
            }
        }
    }
    best_changed
}

/// Restarts with path relinking: the pool of guides and how far from both ends a restart
/// lies.
#[derive(Debug, Clone)]
pub struct Relinking {
    pub pool: ElitePool,
    pub min_distance: usize,
}

/// What a launch's bests ask for: the walks to restart, and the walks whose best may enter
/// the elite pool (their sequences must be read).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pending {
    pub stale: Vec<usize>,
    pub offers: Vec<usize>,
    /// The best walks, best first (ties to the lower index).
    pub elite: Vec<usize>,
}

impl Pending {
    /// Nothing to read or write this time.
    pub fn is_idle(&self) -> bool {
        self.stale.is_empty() && self.offers.is_empty()
    }
}

/// One run-time configuration of a walk: the launches it may go without improving (0: never
/// restarts), whether it relinks, and its destruction size (0: the run's; ig-block reads one
/// per walk, ig-warp adapts its own). The run's parameters give one; `--adapt` races several
/// ([`crate::gpu::adapt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartArm {
    pub stall: u32,
    pub relink: bool,
    pub destruction: usize,
}

impl RestartArm {
    /// The run's arm, and with `adapt` its neighbours: the other restart rule, where the
    /// kernel takes a destruction size per walk (`destruction`: ig-block's d) d / 2, d - 1 and
    /// d + 2 (the best d depends on the instance's size and on the budget), then twice and
    /// half the stall (a run that never restarts races stalls around 20).
    pub fn arms(
        stall: u32,
        relink: bool,
        destruction: Option<usize>,
        adapt: bool,
    ) -> Vec<RestartArm> {
        let d = destruction.unwrap_or(0);
        let base = RestartArm {
            stall,
            relink,
            destruction: d,
        };
        if !adapt {
            return vec![base];
        }
        let stall = if stall == 0 { 20 } else { stall };
        let base = RestartArm { stall, ..base };
        let sizes = match destruction {
            Some(d) if d > 0 => vec![(d / 2).max(1), (d - 1).max(1), d + 2],
            _ => Vec::new(),
        };
        adapt::restart_arms(
            base,
            RestartArm {
                relink: !relink,
                ..base
            },
            sizes.into_iter().map(|destruction| RestartArm {
                destruction,
                ..base
            }),
            stall,
            |stall| RestartArm { stall, ..base },
        )
    }
}

/// The restart state of one run: per walk the launches since its best improved.
#[derive(Debug, Clone)]
pub struct Restarts {
    /// Walk i runs `arms[race.arm(i)]` (arm 0 without a race).
    arms: Vec<RestartArm>,
    race: Option<Race>,
    stalls: Stalls,
    rng: SolverRng,
    /// The pool, where any arm relinks.
    relinking: Option<Relinking>,
}

impl Restarts {
    /// Walks start with these bests; `relinking` is `None` for the copying restarts (one arm:
    /// the tests' shorthand for [`Restarts::with_arms`]).
    #[cfg(test)]
    pub fn new(
        stall: u32,
        start_values: Vec<i64>,
        rng: SolverRng,
        relinking: Option<Relinking>,
    ) -> Restarts {
        let arm = RestartArm {
            stall,
            relink: relinking.is_some(),
            destruction: 0,
        };
        Restarts::with_arms(vec![arm], start_values, rng, relinking)
    }

    /// As [`Restarts::new`], racing `arms` across the walks where there are several; relinking
    /// arms need `relinking`'s pool (without it they copy).
    pub fn with_arms(
        arms: Vec<RestartArm>,
        start_values: Vec<i64>,
        rng: SolverRng,
        relinking: Option<Relinking>,
    ) -> Restarts {
        Restarts {
            race: Race::over(arms.len(), start_values.len()),
            arms,
            stalls: Stalls::new(start_values),
            rng,
            relinking,
        }
    }

    fn arm(&self, walk: usize) -> RestartArm {
        Race::pick(self.race.as_ref(), &self.arms, walk)
    }

    /// Whether any walk ever restarts.
    pub fn restarts_at_all(&self) -> bool {
        self.arms.iter().any(|a| a.stall > 0)
    }

    /// Each walk's destruction size (ig-block's kernel argument): its arm's, or `run` where
    /// the arm keeps the run's (0), at most `largest` (n - 1: an arm's d + 2 may exceed it).
    pub fn destructions(&self, walks: usize, run: usize, largest: usize) -> Vec<i32> {
        (0..walks)
            .map(|w| match self.arm(w).destruction {
                0 => run,
                d => d,
            })
            .map(|d| d.min(largest).max(1) as i32)
            .collect()
    }

    /// With `--adapt`: the arms and how many walks ran each at the end.
    pub fn summary(&self) -> Option<String> {
        let labels = self.arms.iter().map(|a| {
            let rule = if a.relink { "relink" } else { "copy" };
            match a.destruction {
                0 => format!("{rule} after {} launches", a.stall),
                d => format!("{rule} after {} launches, d {d}", a.stall),
            }
        });
        Some(self.race.as_ref()?.summary("walks", labels))
    }

    /// The elite pool (with relinking).
    #[cfg(test)]
    pub fn pool(&self) -> Option<&ElitePool> {
        self.relinking.as_ref().map(|r| &r.pool)
    }

    /// Counts a launch from the walks' best makespans (one per walk, as the kernel left them).
    pub fn tally(&mut self, values: &[i64]) -> Pending {
        if let Some(race) = &mut self.race {
            race.after_launch(values);
        }
        let mut improved = self.stalls.count(values);
        let mut ranked: Vec<usize> = (0..values.len()).collect();
        ranked.sort_by_key(|&i| (values[i], i));
        ranked.truncate(ELITE_WALKS);
        let Some(&best) = ranked.first() else {
            return Pending::default();
        };
        let stale = (0..values.len())
            .filter(|&i| i != best && self.stalls.due(i, self.arm(i).stall))
            .collect();
        let offers = match &self.relinking {
            None => Vec::new(),
            // An empty pool takes the best walk even if it did not improve (its start).
            Some(r) if r.pool.is_empty() && !improved.contains(&best) => {
                improved.push(best);
                improved
            }
            Some(r) => improved
                .into_iter()
                .filter(|&i| r.pool.admits(values[i]))
                .collect(),
        };
        Pending {
            stale,
            offers,
            elite: ranked,
        }
    }

    /// The new state of every stale walk of `pending`, given the walks' bests (`values`) and
    /// their best sequences (`bests`: walks x n job ids). A sequence that is not a permutation
    /// (a fault's garbage) never enters the pool nor starts a path.
    pub fn plan(
        &mut self,
        inst: &Instance,
        values: &[i64],
        bests: &[i32],
        pending: &Pending,
    ) -> Vec<Restart> {
        let n = inst.jobs;
        let row = |w: usize| -> Option<Vec<usize>> {
            let jobs: Vec<usize> = bests
                .get(w * n..(w + 1) * n)?
                .iter()
                .map(|&j| usize::try_from(j).unwrap_or(usize::MAX))
                .collect();
            crate::permutation::check(&jobs, n).ok().map(|_| jobs)
        };
        if let Some(r) = &mut self.relinking {
            for &w in &pending.offers {
                if let Some(seq) = row(w) {
                    r.pool.offer(&seq, values[w]);
                }
            }
        }
        // Draws first, in walk order, so that the plan does not depend on the threads.
        let mut sources = Vec::with_capacity(pending.stale.len());
        for &i in &pending.stale {
            self.stalls.restarted(i);
            let own = self
                .relinking
                .as_ref()
                .filter(|_| self.arm(i).relink)
                .and_then(|_| row(i));
            if let Some(source) = self.relink_source(i, own) {
                sources.push(source);
            } else if !pending.elite.is_empty() {
                let from = pending.elite[self.rng.random_range(0..pending.elite.len())];
                sources.push(Source::Copy { walk: i, from });
            }
        }
        // Each restart with the best cost it drew on (the copied walk's best, or the better of
        // the relinking guide and the point found on the path): the race scores what a walk
        // finds beyond that, not the quality it inherits.
        let planned: Vec<(Restart, i64)> = sources
            .into_par_iter()
            .filter_map(|source| match source {
                Source::Copy { walk, from } => {
                    let value = *values.get(from)?;
                    let restart = Restart {
                        walk,
                        sequence: bests.get(from * n..(from + 1) * n)?.to_vec(),
                        value,
                        relinked: false,
                    };
                    Some((restart, value))
                }
                Source::Relink {
                    walk,
                    own,
                    guide,
                    guide_value,
                    min_distance,
                } => {
                    let (seq, value, relinked) = match relink(inst, &own, &guide, min_distance) {
                        Some((seq, value)) => (seq, value, true),
                        None => (guide, guide_value, false),
                    };
                    let restart = Restart {
                        walk,
                        sequence: seq.iter().map(|&j| j as i32).collect(),
                        value,
                        relinked,
                    };
                    Some((restart, value.min(guide_value)))
                }
            })
            .collect();
        if let Some(race) = &mut self.race {
            for (restart, drawn_on) in &planned {
                race.inherited(restart.walk, *drawn_on);
            }
        }
        planned.into_iter().map(|(restart, _)| restart).collect()
    }

    /// With relinking, a walk's path: from its own best (`own`, where it is a permutation)
    /// toward a pool member drawn among those that differ from it.
    fn relink_source(&mut self, walk: usize, own: Option<Vec<usize>>) -> Option<Source> {
        let r = self.relinking.as_ref()?;
        let own = own?;
        let others: Vec<(&[usize], i64)> = r.pool.iter().filter(|(s, _)| *s != own).collect();
        if others.is_empty() {
            return None;
        }
        let (guide, guide_value) = others[self.rng.random_range(0..others.len())];
        Some(Source::Relink {
            walk,
            guide: guide.to_vec(),
            guide_value,
            own,
            min_distance: r.min_distance,
        })
    }
}

/// Where a stale walk continues from.
enum Source {
    /// The best sequence of another walk.
    Copy { walk: usize, from: usize },
    /// The path from the walk's own best toward an elite sequence.
    Relink {
        walk: usize,
        own: Vec<usize>,
        guide: Vec<usize>,
        guide_value: i64,
        min_distance: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pfsp::relink::insertion_distance;
    use crate::run::stream_rng;
    use rand::seq::SliceRandom;

    /// Walks with random bests on an instance: their rows and exact makespans.
    fn walks(inst: &Instance, count: usize, seed: u64) -> (Vec<i32>, Vec<i64>) {
        let mut rng = stream_rng(seed, 1);
        let mut rows = Vec::new();
        let mut values = Vec::new();
        for _ in 0..count {
            let mut s: Vec<usize> = (0..inst.jobs).collect();
            s.shuffle(&mut rng);
            values.push(inst.makespan(&s));
            rows.extend(s.iter().map(|&j| j as i32));
        }
        (rows, values)
    }

    fn jobs(row: &[i32]) -> Vec<usize> {
        row.iter().map(|&j| j as usize).collect()
    }

    /// Launches without improvement until the walks stall, then one plan.
    fn stalled_plan(
        restarts: &mut Restarts,
        inst: &Instance,
        rows: &[i32],
        values: &[i64],
        stall: u32,
    ) -> (Pending, Vec<Restart>) {
        for _ in 1..stall {
            assert!(restarts.tally(values).stale.is_empty());
        }
        let pending = restarts.tally(values);
        let plan = restarts.plan(inst, values, rows, &pending);
        (pending, plan)
    }

    #[test]
    fn adapt_races_the_configured_restarts_and_three_neighbours() {
        assert_eq!(RestartArm::arms(20, true, None, false).len(), 1);
        let arms = RestartArm::arms(20, true, None, true);
        assert_eq!(
            arms,
            [(20, true), (20, false), (40, true), (10, true)].map(|(stall, relink)| RestartArm {
                stall,
                relink,
                destruction: 0
            })
        );
        assert!(RestartArm::arms(0, false, None, true)
            .iter()
            .all(|a| a.stall > 0));
        // ig-block also races destruction sizes around its d.
        let arms = RestartArm::arms(20, true, Some(4), true);
        let d: Vec<usize> = arms.iter().map(|a| a.destruction).collect();
        assert_eq!(d, [4, 4, 2, 3, 6, 4, 4]);
        assert_eq!(RestartArm::arms(20, true, Some(4), false)[0].destruction, 4);
        // d = 1: d / 2 and d - 1 are d itself.
        assert_eq!(RestartArm::arms(20, true, Some(1), true).len(), 5);
    }

    /// Walks follow their own arm: with a copying arm of stall 1 and a relinking arm of stall 2
    /// (walks alternate), after one launch without improvement only the copying arm's walks
    /// restart, and after the second the relinking arm's walks do, by relinking.
    #[test]
    fn each_walk_restarts_by_its_arm() {
        let inst = crate::pfsp::generate(20, 5, 7);
        let (rows, values) = walks(&inst, 8, 3);
        let arms = vec![
            RestartArm {
                stall: 1,
                relink: false,
                destruction: 0,
            },
            RestartArm {
                stall: 2,
                relink: true,
                destruction: 5,
            },
        ];
        let relinking = Relinking {
            pool: ElitePool::new(4),
            min_distance: 2,
        };
        let mut r = Restarts::with_arms(arms, values.clone(), stream_rng(4, 0), Some(relinking));
        let best = (0..8).min_by_key(|&i| (values[i], i)).unwrap();
        let first = r.tally(&values);
        let copy: Vec<usize> = (0..8).filter(|&i| i % 2 == 0 && i != best).collect();
        assert_eq!(first.stale, copy);
        let plan = r.plan(&inst, &values, &rows, &first);
        assert!(plan.iter().all(|p| !p.relinked && p.walk % 2 == 0));
        let second = r.tally(&values);
        let relinking: Vec<usize> = (0..8).filter(|&i| i % 2 == 1 && i != best).collect();
        assert!(
            relinking.iter().all(|w| second.stale.contains(w)),
            "{second:?}"
        );
        let plan = r.plan(&inst, &values, &rows, &second);
        let odd: Vec<&Restart> = plan.iter().filter(|p| p.walk % 2 == 1).collect();
        assert_eq!(odd.len(), relinking.len());
        assert!(
            odd.iter().all(|p| p.relinked),
            "random walks lie far apart: paths exist"
        );
        let summary = r.summary().unwrap();
        assert!(summary.contains("4 x (copy after 1 launches)"), "{summary}");
        assert!(
            summary.contains("4 x (relink after 2 launches, d 5)"),
            "{summary}"
        );
        assert_eq!(r.destructions(4, 3, 19), [3, 5, 3, 5]);
        assert_eq!(r.destructions(4, 3, 4), [3, 4, 3, 4], "at most n - 1");
    }

    #[test]
    fn copying_restarts_take_one_of_the_four_best_walks() {
        let inst = crate::pfsp::generate(20, 5, 873_654_221);
        let n = inst.jobs;
        let (rows, values) = walks(&inst, 10, 1);
        let mut restarts = Restarts::new(3, values.clone(), stream_rng(9, 0), None);
        let (pending, plan) = stalled_plan(&mut restarts, &inst, &rows, &values, 3);
        let mut ranked: Vec<usize> = (0..10).collect();
        ranked.sort_by_key(|&i| (values[i], i));
        assert_eq!(pending.elite, ranked[..4]);
        assert!(pending.offers.is_empty() && restarts.pool().is_none());
        // Every walk but the best restarts, from one of the four best.
        let walks: Vec<usize> = plan.iter().map(|r| r.walk).collect();
        let expected: Vec<usize> = (0..10).filter(|&i| i != ranked[0]).collect();
        assert_eq!(walks, expected);
        for r in &plan {
            assert!(!r.relinked);
            let from = (0..10)
                .find(|&w| rows[w * n..(w + 1) * n] == r.sequence[..])
                .unwrap();
            assert!(ranked[..4].contains(&from));
            assert_eq!(r.value, values[from]);
        }
        // The counters were reset: the next launch restarts nobody.
        assert!(restarts.tally(&values).stale.is_empty());
    }

    #[test]
    fn relinking_restarts_write_permutations_between_the_walk_and_the_pool() {
        let inst = crate::pfsp::generate(30, 6, 5);
        let n = inst.jobs;
        let (rows, values) = walks(&inst, 12, 2);
        let min_distance = 4;
        let relinking = Relinking {
            pool: ElitePool::new(5),
            min_distance,
        };
        // The first launch improved walks 0..6 (their bests were worse before).
        let mut before = values.clone();
        for v in before.iter_mut().take(6) {
            *v += 100;
        }
        let mut restarts = Restarts::new(2, before, stream_rng(9, 0), Some(relinking));
        let pending = restarts.tally(&values);
        let mut expected: Vec<usize> = (0..6).collect();
        if pending.elite[0] >= 6 {
            expected.push(pending.elite[0]);
        }
        assert_eq!(pending.offers, expected);
        assert!(pending.stale.is_empty());
        assert!(restarts.plan(&inst, &values, &rows, &pending).is_empty());
        let pool = restarts.pool().unwrap();
        assert_eq!(pool.len(), 5, "bounded");
        let mut offered: Vec<i64> = expected.iter().map(|&w| values[w]).collect();
        offered.sort();
        let kept: Vec<i64> = pool.iter().map(|(_, v)| v).collect();
        assert_eq!(kept, offered[..5], "the best of the offers, best first");
        let members: Vec<Vec<usize>> = pool.iter().map(|(s, _)| s.to_vec()).collect();

        // Two launches without improvement: every walk but the best has stalled.
        restarts.tally(&values);
        let pending = restarts.tally(&values);
        let plan = restarts.plan(&inst, &values, &rows, &pending);
        let best = pending.elite[0];
        assert_eq!(plan.len(), 11);
        assert!(
            plan.iter().any(|r| r.relinked),
            "random bests are far apart"
        );
        for r in &plan {
            assert_ne!(r.walk, best);
            let seq = jobs(&r.sequence);
            crate::permutation::check(&seq, n).unwrap();
            assert_eq!(inst.makespan(&seq), r.value, "walk {}", r.walk);
            let own = jobs(&rows[r.walk * n..(r.walk + 1) * n]);
            // On a shortest path from the own best to a member, far enough from both; or the
            // member itself where the path is too short.
            let on_a_path = members.iter().any(|m| {
                let total = insertion_distance(&own, m);
                let (a, b) = (insertion_distance(&own, &seq), insertion_distance(&seq, m));
                a + b == total && a >= min_distance && b >= min_distance
            });
            if r.relinked {
                assert!(on_a_path, "walk {}", r.walk);
            } else {
                assert!(members.contains(&seq), "walk {}", r.walk);
            }
            assert_ne!(seq, own);
        }
    }

    #[test]
    fn garbage_never_enters_the_pool_nor_starts_a_path() {
        let inst = crate::pfsp::generate(12, 3, 7);
        let n = inst.jobs;
        let (mut rows, values) = walks(&inst, 4, 3);
        // Walk 1's best is not a permutation (a repeated job).
        rows[n] = rows[n + 1];
        let relinking = Relinking {
            pool: ElitePool::new(8),
            min_distance: 1,
        };
        let worse: Vec<i64> = values.iter().map(|v| v + 1).collect();
        let mut restarts = Restarts::new(1, worse, stream_rng(4, 0), Some(relinking));
        let pending = restarts.tally(&values);
        assert_eq!(pending.offers.len(), 4);
        restarts.plan(&inst, &values, &rows, &pending);
        let pool = restarts.pool().unwrap();
        assert_eq!(pool.len(), 3);
        assert!(pool
            .iter()
            .all(|(s, _)| crate::permutation::check(s, n).is_ok()));
        let pending = restarts.tally(&values);
        let plan = restarts.plan(&inst, &values, &rows, &pending);
        // Walk 1 (if it restarts) copies a best walk's row rather than relinking garbage.
        for r in plan.iter().filter(|r| r.walk == 1) {
            let from = (0..4)
                .find(|&w| rows[w * n..(w + 1) * n] == r.sequence[..])
                .unwrap();
            assert!(pending.elite.contains(&from));
        }
    }

    #[test]
    fn an_empty_pool_takes_the_best_walk() {
        let inst = crate::pfsp::generate(10, 3, 2);
        let (rows, values) = walks(&inst, 3, 5);
        let relinking = Relinking {
            pool: ElitePool::new(8),
            min_distance: 1,
        };
        // Nothing improved on its start.
        let mut restarts = Restarts::new(5, values.clone(), stream_rng(4, 0), Some(relinking));
        let pending = restarts.tally(&values);
        assert_eq!(pending.offers, vec![pending.elite[0]]);
        restarts.plan(&inst, &values, &rows, &pending);
        assert_eq!(restarts.pool().unwrap().len(), 1);
        // A later launch offers only improvements.
        assert!(restarts.tally(&values).offers.is_empty());
    }

    #[test]
    fn applying_a_plan_writes_current_rows_and_only_relinked_bests() {
        let n = 3;
        let mut cur = vec![0, 1, 2, 0, 1, 2, 0, 1, 2];
        let mut cur_values = vec![-1, 50, 60];
        let mut best = vec![2, 1, 0, 2, 1, 0, 2, 1, 0];
        let mut best_values = vec![40, 45, 30];
        let plan = [
            // A copy better than the walk's best: the best stays the walk's own.
            Restart {
                walk: 0,
                sequence: vec![1, 0, 2],
                value: 35,
                relinked: false,
            },
            // A relinked sequence better than the walk's best: it becomes the best.
            Restart {
                walk: 1,
                sequence: vec![1, 2, 0],
                value: 44,
                relinked: true,
            },
            // Relinked but not better.
            Restart {
                walk: 2,
                sequence: vec![0, 2, 1],
                value: 31,
                relinked: true,
            },
            // A walk that does not exist is skipped.
            Restart {
                walk: 7,
                sequence: vec![0, 1, 2],
                value: 1,
                relinked: true,
            },
        ];
        let rows = WalkRows {
            cur: &mut cur,
            cur_values: &mut cur_values,
            best: &mut best,
            best_values: &mut best_values,
        };
        assert!(apply(&plan, n, rows));
        assert_eq!(cur, vec![1, 0, 2, 1, 2, 0, 0, 2, 1]);
        assert_eq!(cur_values, vec![35, 44, 31]);
        assert_eq!(best, vec![2, 1, 0, 1, 2, 0, 2, 1, 0]);
        assert_eq!(best_values, vec![40, 44, 30]);
        let rows = WalkRows {
            cur: &mut cur,
            cur_values: &mut cur_values,
            best: &mut best,
            best_values: &mut best_values,
        };
        assert!(!apply(&plan[..1], n, rows), "no best changed");
    }
}
