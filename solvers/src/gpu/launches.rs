//! How long the next launch runs, for the GPU solvers that split one long search into launches
//! (QAP rots-block, PFSP ig-block and ig-warp): the deadline, the restarts and the stall counts
//! all act between launches, so where launches end shapes the search.
//!
//! Under a time limit a launch aims at about [`LAUNCH_TARGET`] of GPU time at the pace the last
//! launch showed, never past the deadline: the limit is honoured to within one short launch.
//! Without a time limit the length is fixed by the configuration and the instance's size
//! alone, never by a clock, so that a seed and an iteration budget give the same answer on a
//! fast GPU, a slow one or a shared one (ARCHITECTURE.md's determinism invariant). Before, both
//! followed the measured pace, and an iteration-budget run restarted its searches at
//! iterations that depended on the machine's speed.

use std::time::{Duration, Instant};

/// GPU time a launch aims at under a time limit: short enough that restarts and the deadline
/// check come often, long enough that the launch and the copies between launches stay a small
/// share of the run.
pub const LAUNCH_TARGET: Duration = Duration::from_millis(100);

/// The longest launch, in iterations, whatever the pace (a guard against a near-zero time).
const MAX_LAUNCH: u64 = 1 << 24;

/// Iterations for the next launch.
///
/// `last` is the previous launch: (`iterations`, `seconds` of GPU time). `cap` bounds every
/// launch (a configuration's `launch_iterations`, in the solver's iterations; `None` for no
/// bound). `fixed` is the length without a deadline where `cap` is `None`: the solver's
/// estimate of [`LAUNCH_TARGET`]'s worth of work on a current GPU, computed from the instance's
/// size only.
pub fn next_launch(
    last: (u64, f64),
    deadline: Option<Instant>,
    now: Instant,
    cap: Option<u64>,
    fixed: u64,
) -> u64 {
    let cap = cap.filter(|&c| c > 0);
    let Some(deadline) = deadline else {
        return cap.unwrap_or(fixed).clamp(1, MAX_LAUNCH);
    };
    let (iterations, seconds) = last;
    let target = deadline.saturating_duration_since(now).min(LAUNCH_TARGET);
    let per_iteration = seconds.max(1e-9) / iterations.max(1) as f64;
    let paced = ((target.as_secs_f64() / per_iteration) as u64).clamp(1, MAX_LAUNCH);
    cap.map_or(paced, |c| paced.min(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_deadline_the_clock_never_matters() {
        let now = Instant::now();
        for cap in [None, Some(0), Some(7), Some(1000)] {
            let lengths: Vec<u64> = [(1, 1e-7), (1, 0.5), (64, 3.0), (10_000, 1e-3), (3, 0.0)]
                .into_iter()
                .map(|last| next_launch(last, None, now, cap, 24))
                .collect();
            let expected = match cap {
                Some(c) if c > 0 => c,
                _ => 24,
            };
            assert!(
                lengths.iter().all(|&l| l == expected),
                "cap {cap:?}: {lengths:?}, expected {expected} for every pace"
            );
        }
        // A fixed length of 0 (a size estimate rounded down) still launches an iteration.
        assert_eq!(next_launch((1, 1.0), None, now, None, 0), 1);
    }

    #[test]
    fn under_a_deadline_the_pace_sets_the_length() {
        let now = Instant::now();
        let far = Some(now + Duration::from_secs(60));
        // 10 ms per iteration: 100 ms is 10 iterations; faster pace, longer launch.
        assert_eq!(next_launch((5, 0.05), far, now, None, 1), 10);
        assert_eq!(next_launch((5, 0.005), far, now, None, 1), 100);
        // The cap still bounds it.
        assert_eq!(next_launch((5, 0.005), far, now, Some(30), 1), 30);
        // Near the deadline the launch ends with it: 20 ms left is 2 iterations.
        let near = Some(now + Duration::from_millis(20));
        assert_eq!(next_launch((5, 0.05), near, now, None, 1), 2);
        // Past it, or a launch slower than what is left: one iteration, never zero.
        assert_eq!(next_launch((5, 0.05), Some(now), now, None, 1), 1);
        assert_eq!(next_launch((1, 10.0), far, now, None, 1), 1);
    }
}
