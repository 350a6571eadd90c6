//! Random search without replacement.

use std::collections::HashSet;

use anyhow::Result;
use rand::seq::SliceRandom;

use super::tracker::Tracker;
use super::SearchSpace;

/// Draws in a row that hit seen points before the rest of the space is listed and shuffled
/// (by then most of it has been seen, so the list is short).
const MISSES: usize = 64;

pub(crate) fn run(
    space: &dyn SearchSpace,
    tracker: &mut Tracker<'_>,
    batch: usize,
    rng: &mut dyn rand::RngCore,
) -> Result<()> {
    loop {
        let mut chunk = Vec::with_capacity(batch);
        let mut taken = HashSet::new();
        let mut misses = 0;
        while chunk.len() < batch && misses < MISSES {
            let Some(p) = space.random_point(rng) else {
                return Ok(());
            };
            if tracker.seen(&p) || !taken.insert(p.clone()) {
                misses += 1;
                continue;
            }
            misses = 0;
            chunk.push(p);
        }
        if misses >= MISSES {
            return rest(space, tracker, batch, chunk, rng);
        }
        tracker.objectives(&chunk)?;
    }
}

fn rest(
    space: &dyn SearchSpace,
    tracker: &mut Tracker<'_>,
    batch: usize,
    chunk: Vec<results::Point>,
    rng: &mut dyn rand::RngCore,
) -> Result<()> {
    let mut left: Vec<_> = space
        .points()
        .filter(|p| !tracker.seen(p) && !chunk.contains(p))
        .collect();
    left.shuffle(rng);
    left.splice(0..0, chunk);
    for c in left.chunks(batch) {
        tracker.objectives(c)?;
    }
    Ok(())
}
