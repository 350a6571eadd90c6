//! What a rots-block run keeps between an island's epochs.

/// An island's blocks between epochs (`PreparedRun::start_from`): the seeds the next run's
/// first blocks start from, and every block's state as the last run left it, from which the
/// other blocks continue (their tabu lists start afresh; their bests are kept).
#[derive(Debug, Default)]
pub struct IslandBlocks {
    pub starts: Vec<Vec<usize>>,
    /// Every block's permutation (p x n), best permutation (p x n) and best cost (p).
    pub(super) saved: Option<(Vec<i32>, Vec<i32>, Vec<i64>)>,
}
