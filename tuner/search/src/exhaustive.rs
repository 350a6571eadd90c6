//! Every valid point, in the space's order, in batches.

use anyhow::Result;

use super::tracker::Tracker;
use super::SearchSpace;

pub(crate) fn run(space: &dyn SearchSpace, tracker: &mut Tracker<'_>, batch: usize) -> Result<()> {
    let mut points = space.points();
    loop {
        let chunk: Vec<_> = points.by_ref().take(batch).collect();
        if chunk.is_empty() {
            return Ok(());
        }
        tracker.objectives(&chunk)?;
    }
}
