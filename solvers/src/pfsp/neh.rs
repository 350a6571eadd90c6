//! NEH (Nawaz, Enscore & Ham 1983) with Taillard's acceleration.
//!
//! Jobs are taken by decreasing total processing time (ties by job index, a stable sort) and
//! each is inserted at the position of the partial sequence that minimises its makespan,
//! the first such position on ties. Taillard's heads/tails evaluate all positions of one
//! insertion in O(k m), so the whole construction is O(n^2 m).

use super::eval::Insertion;
use super::instance::Instance;

/// The NEH sequence (0-based job order).
pub fn neh(inst: &Instance) -> Vec<usize> {
    neh_with_makespan(inst).0
}

/// The NEH sequence and its makespan as the accelerated insertion computed it (equal to
/// `inst.makespan(&sequence)`; the tests hold it to that).
pub fn neh_with_makespan(inst: &Instance) -> (Vec<usize>, i64) {
    let mut order: Vec<usize> = (0..inst.jobs).collect();
    // Stable: equal totals keep increasing job index.
    order.sort_by_key(|&j| std::cmp::Reverse(inst.job_total(j)));
    let mut insertion = Insertion::new();
    let mut sequence = Vec::with_capacity(inst.jobs);
    let mut makespan = 0;
    for job in order {
        let (position, value) = insertion.best(inst, &sequence, job);
        sequence.insert(position, job);
        makespan = value;
    }
    (sequence, makespan)
}
