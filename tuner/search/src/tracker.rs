//! The bookkeeping every strategy shares: a memo in front of the evaluator (so asking twice
//! costs nothing), the order of first evaluations, the best point or the Pareto front, and the
//! decision to stop.

use std::collections::HashMap;

use anyhow::Result;
use results::Point;

use super::{Evaluator, Objective, Objectives, SearchSpace};

/// Requests in a row that bring no new point before a search is judged to be going round in
/// circles (a budget-less evaluator on a space the strategy has seen all of).
const STALL_REQUESTS: usize = 5000;

/// Why a search stopped before it finished on its own; strategies propagate it with `?`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    Exhausted,
    Stalled,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Exhausted => f.write_str("the evaluator's budget is spent"),
            Stop::Stalled => f.write_str("the search asks only for points it has seen"),
        }
    }
}

impl std::error::Error for Stop {}

pub(crate) struct Tracker<'e> {
    eval: &'e mut dyn Evaluator,
    pub objective: Objective,
    memo: HashMap<Point, Option<Objectives>>,
    /// Distinct points in the order they were first asked, with what came back.
    pub history: Vec<(Point, Option<Objectives>)>,
    /// Points the strategy asked for, repeats included.
    pub requests: usize,
    idle: usize,
    pub best: Option<(Point, Objectives, f64)>,
    /// Distinct evaluations at the end of each stage (staged search).
    pub stages: Vec<usize>,
}

impl<'e> Tracker<'e> {
    pub fn new(eval: &'e mut dyn Evaluator, objective: Objective) -> Tracker<'e> {
        Tracker {
            eval,
            objective,
            memo: HashMap::new(),
            history: Vec::new(),
            requests: 0,
            idle: 0,
            best: None,
            stages: Vec::new(),
        }
    }

    pub fn seen(&self, p: &Point) -> bool {
        self.memo.contains_key(p)
    }

    /// Points the evaluator measures at once (at least 1).
    pub fn parallel_points(&self) -> usize {
        self.eval.parallel_points().max(1)
    }

    /// The end of the next batch of a first-improvement scan of `candidates` from `from`: as
    /// many unseen points as the evaluator measures at once ([`Evaluator::parallel_points`]),
    /// with the seen ones between them (they cost nothing). With a width of one this is the
    /// one-at-a-time scan: the seen points up to and including the next unseen one. The batch
    /// also ends at a seen point whose known cost `improves` says the scan stops at: nothing
    /// after it would be looked at one at a time, so nothing after it is measured.
    pub fn scan_batch_end(
        &self,
        candidates: &[Point],
        from: usize,
        improves: &dyn Fn(f64) -> bool,
    ) -> usize {
        let width = self.parallel_points();
        let mut unseen = 0;
        let mut end = from;
        while end < candidates.len() && unseen < width {
            match self.memo.get(&candidates[end]) {
                None => unseen += 1,
                Some(known) => {
                    let cost = known
                        .and_then(|o| self.objective.scalar(&o))
                        .unwrap_or(f64::INFINITY);
                    if improves(cost) {
                        return end + 1;
                    }
                }
            }
            end += 1;
        }
        end
    }

    /// The objectives of `points` (None for failed ones), asking the evaluator once, in one
    /// batch, for those not seen before.
    pub fn objectives(&mut self, points: &[Point]) -> Result<Vec<Option<Objectives>>> {
        self.requests += points.len();
        let mut fresh: Vec<Point> = Vec::new();
        for p in points {
            if !self.memo.contains_key(p) && !fresh.contains(p) {
                fresh.push(p.clone());
            }
        }
        if fresh.is_empty() {
            self.idle += points.len();
            if self.idle > STALL_REQUESTS {
                return Err(Stop::Stalled.into());
            }
        } else {
            if self.eval.exhausted() {
                return Err(Stop::Exhausted.into());
            }
            self.idle = 0;
            let answers = self.eval.evaluate(&fresh)?;
            if answers.len() != fresh.len() {
                anyhow::bail!(
                    "the evaluator answered {} of {} points",
                    answers.len(),
                    fresh.len()
                );
            }
            for (p, o) in fresh.into_iter().zip(answers) {
                let o = o.filter(|o| self.objective.pair(o).is_some());
                if let Some(cost) = o.as_ref().and_then(|o| self.objective.scalar(o)) {
                    if self.best.as_ref().is_none_or(|(_, _, b)| cost < *b) {
                        self.best = Some((p.clone(), o.unwrap_or_default(), cost));
                    }
                }
                self.memo.insert(p.clone(), o);
                self.history.push((p, o));
            }
        }
        Ok(points
            .iter()
            .map(|p| self.memo.get(p).copied().flatten())
            .collect())
    }

    /// Scalar costs, +inf for failed points.
    pub fn costs(&mut self, points: &[Point]) -> Result<Vec<f64>> {
        let objective = self.objective;
        Ok(self
            .objectives(points)?
            .into_iter()
            .map(|o| {
                o.and_then(|o| objective.scalar(&o))
                    .unwrap_or(f64::INFINITY)
            })
            .collect())
    }

    /// The (non-dominated) front of everything evaluated so far, in the two metrics.
    pub fn front(&self) -> Vec<(Point, Objectives)> {
        super::pareto_front(&self.history, self.objective)
    }

    /// A point not evaluated yet, drawn at random; after many repeats, the first unseen point
    /// of the enumeration (the space is then mostly seen). None when every point was seen.
    pub fn fresh_point(
        &self,
        space: &dyn SearchSpace,
        rng: &mut dyn rand::RngCore,
    ) -> Option<Point> {
        for _ in 0..64 {
            let p = space.random_point(rng)?;
            if !self.seen(&p) {
                return Some(p);
            }
        }
        space.points().find(|p| !self.seen(p))
    }
}

/// Runs a search body, turning a [`Stop`] into a normal end.
pub(crate) fn until_stopped(result: Result<()>) -> Result<bool> {
    match result {
        Ok(()) => Ok(false),
        Err(e) if e.downcast_ref::<Stop>().is_some() => Ok(true),
        Err(e) => Err(e),
    }
}
