//! The paper's staged search (its non-orthogonality experiment): one group of parameters is
//! searched with the others fixed at the start point, then the other group from the best
//! point of the first stage; or both groups at once. Compiler parameters are the `flag` and
//! `define` kinds, launch parameters the `launch` and `runtime` kinds; `variant` and `class`
//! stay as the start point has them.

use anyhow::Result;
use results::Point;

use super::hill_climbing::climb;
use super::options::{StageOrder, StageSearch};
use super::tracker::Tracker;
use super::{ParamKind, SearchSpace};

#[allow(clippy::too_many_arguments)] // one per option of the strategy
pub(crate) fn run(
    space: &dyn SearchSpace,
    tracker: &mut Tracker<'_>,
    start: Option<Point>,
    order: StageOrder,
    search: StageSearch,
    restarts: usize,
    first_improvement: bool,
    rng: &mut dyn rand::RngCore,
) -> Result<()> {
    let Some(base) = start.or_else(|| space.points().next()) else {
        return Ok(());
    };
    let group = |kinds: &[ParamKind]| -> Vec<String> {
        space
            .parameters()
            .into_iter()
            .filter(|(_, k)| kinds.contains(k))
            .map(|(n, _)| n)
            .collect()
    };
    let compiler = group(&[ParamKind::Flag, ParamKind::Define]);
    let launch = group(&[ParamKind::Launch, ParamKind::Runtime]);
    let stages: Vec<Vec<String>> = match order {
        StageOrder::OptThenThread => vec![compiler, launch],
        StageOrder::ThreadThenOpt => vec![launch, compiler],
        StageOrder::Combined => vec![compiler.into_iter().chain(launch).collect()],
    };
    let mut from = base;
    for params in stages {
        if !params.is_empty() {
            stage(
                space,
                tracker,
                &from,
                &params,
                search,
                restarts,
                first_improvement,
                rng,
            )?;
        }
        tracker.stages.push(tracker.history.len());
        if let Some((p, _, _)) = &tracker.best {
            from = p.clone();
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn stage(
    space: &dyn SearchSpace,
    tracker: &mut Tracker<'_>,
    base: &Point,
    params: &[String],
    search: StageSearch,
    restarts: usize,
    first_improvement: bool,
    rng: &mut dyn rand::RngCore,
) -> Result<()> {
    match search {
        StageSearch::Exhaustive => {
            let mut points = space.points().filter(|p| same_outside(p, base, params));
            loop {
                let chunk: Vec<Point> = points.by_ref().take(16).collect();
                if chunk.is_empty() {
                    return Ok(());
                }
                tracker.objectives(&chunk)?;
            }
        }
        StageSearch::HillClimbing => {
            tracker.objectives(std::slice::from_ref(base))?;
            climb(
                space,
                tracker,
                base.clone(),
                params,
                first_improvement,
                None,
                rng,
            )?;
            for _ in 0..restarts {
                match random_in_group(space, tracker, base, params, rng) {
                    Some(p) => {
                        climb(space, tracker, p, params, first_improvement, None, rng)?;
                    }
                    None => break,
                }
            }
            Ok(())
        }
    }
}

/// Whether `p` equals `base` in every parameter outside `params` (present or absent alike).
fn same_outside(p: &Point, base: &Point, params: &[String]) -> bool {
    let outside = |q: &Point| -> Vec<(String, results::Value)> {
        q.0.iter()
            .filter(|(k, _)| !params.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    outside(p) == outside(base)
}

/// An unseen valid point that differs from `base` only in `params`, by rejection.
fn random_in_group(
    space: &dyn SearchSpace,
    tracker: &Tracker<'_>,
    base: &Point,
    params: &[String],
    rng: &mut dyn rand::RngCore,
) -> Option<Point> {
    for _ in 0..1000 {
        let r = space.random_point(rng)?;
        let mut p = base.clone();
        for name in params {
            if let (Some(v), true) = (r.get(name), base.get(name).is_some()) {
                p.set(name.clone(), v.clone());
            }
        }
        if space.is_valid(&p) && !tracker.seen(&p) {
            return Some(p);
        }
    }
    None
}
