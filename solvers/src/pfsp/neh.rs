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
    let (sequence, makespan) = construct(inst, || false);
    (sequence, makespan)
}

/// [`neh`], reading `stop` before each insertion: once it says stop, the jobs not yet
/// inserted follow in NEH's order (a valid sequence, not NEH's). The construction is
/// O(n^2 m): 10,000 jobs took 3.7 s past a 1 s limit.
pub fn neh_until(inst: &Instance, stop: impl Fn() -> bool) -> Vec<usize> {
    construct(inst, stop).0
}

/// The construction and the makespan its last insertion computed (that of the whole
/// sequence where nothing stopped it).
fn construct(inst: &Instance, stop: impl Fn() -> bool) -> (Vec<usize>, i64) {
    let mut order: Vec<usize> = (0..inst.jobs).collect();
    // Stable: equal totals keep increasing job index.
    order.sort_by_key(|&j| std::cmp::Reverse(inst.job_total(j)));
    let mut insertion = Insertion::new();
    let mut sequence = Vec::with_capacity(inst.jobs);
    let mut makespan = 0;
    let mut jobs = order.into_iter();
    for job in jobs.by_ref() {
        if stop() {
            sequence.push(job);
            break;
        }
        let (position, value) = insertion.best(inst, &sequence, job);
        sequence.insert(position, job);
        makespan = value;
    }
    sequence.extend(jobs);
    (sequence, makespan)
}
