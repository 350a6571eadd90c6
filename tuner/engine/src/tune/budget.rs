//! When a campaign stops: trials, wall time, cost per class, or the user.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::campaign::config::BudgetConfig;

/// The summary's `stopped` when the user interrupted the campaign (SIGINT, SIGTERM): the
/// campaign is unfinished, unlike one whose trial or wall-time budget was spent.
pub const STOPPED_BY_USER: &str = "stopped by the user";

/// Whether a campaign's summary says the user stopped it before its end.
pub fn stopped_by_user(summary: &results::TuneSummary) -> bool {
    summary.stopped.as_deref() == Some(STOPPED_BY_USER)
}

/// Campaign-wide limits and the stop flag Ctrl-C sets.
#[derive(Debug)]
pub struct Budget {
    started: Instant,
    wall: Option<Duration>,
    max_trials: Option<u64>,
    /// Evaluations per run (class) allowed by `cost_percent`.
    pub per_run_evaluations: Option<u64>,
    pub new_trials: u64,
    pub stop: Arc<AtomicBool>,
    /// Set for the final re-measure and the holdouts: they verify the search's answer and are
    /// not part of its budget (only Ctrl-C stops them).
    pub verifying: bool,
}

impl Budget {
    pub fn new(config: &BudgetConfig, stop: Arc<AtomicBool>) -> Budget {
        Budget {
            verifying: false,
            started: Instant::now(),
            wall: config.wall_s.map(Duration::from_secs_f64),
            max_trials: config.trials,
            per_run_evaluations: config
                .cost_percent
                .map(|p| ((p / 100.0 * config.production_runs as f64).floor() as u64).max(1)),
            new_trials: 0,
            stop,
        }
    }

    pub fn stopped_by_user(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// No new trial may start.
    pub fn exhausted(&self) -> bool {
        if self.verifying {
            return self.stopped_by_user();
        }
        self.stopped_by_user()
            || self.max_trials.is_some_and(|m| self.new_trials >= m)
            || self.wall.is_some_and(|w| self.started.elapsed() >= w)
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn max_trials(&self) -> Option<u64> {
        self.max_trials
    }

    /// Why the campaign stopped early, if it did.
    pub fn reason(&self) -> Option<&'static str> {
        if self.stopped_by_user() {
            Some(STOPPED_BY_USER)
        } else if self.max_trials.is_some_and(|m| self.new_trials >= m) {
            Some("trial budget spent")
        } else if self.wall.is_some_and(|w| self.started.elapsed() >= w) {
            Some("wall-time budget spent")
        } else {
            None
        }
    }
}
