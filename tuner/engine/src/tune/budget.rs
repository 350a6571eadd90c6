//! When a campaign stops: trials, wall time, cost per class, or the user.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
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
    /// The trials the search measured (not the verification's): what `trials` limits.
    search_trials: u64,
    /// The limit that cut work short ([`Budget::mark_cut`]): 0 none, 1 trials, 2 wall time.
    /// A limit merely reached when nothing was left to do cut nothing.
    cut: AtomicU8,
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
            search_trials: 0,
            cut: AtomicU8::new(0),
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
        self.stopped_by_user() || self.limit_reached() != 0
    }

    /// The limit the search has reached: 0 none, 1 trials, 2 wall time.
    fn limit_reached(&self) -> u8 {
        if self.max_trials.is_some_and(|m| self.search_trials >= m) {
            1
        } else if self.wall.is_some_and(|w| self.started.elapsed() >= w) {
            2
        } else {
            0
        }
    }

    /// A trial was started: the verification's count in `new_trials` only.
    pub fn count_trial(&mut self) {
        self.new_trials += 1;
        if !self.verifying {
            self.search_trials += 1;
        }
    }

    /// Work was skipped because of the budget (a trial refused, a search or class not
    /// started): the summary then says the campaign was stopped by that limit.
    pub fn mark_cut(&self) {
        if !self.verifying {
            let limit = self.limit_reached();
            if limit != 0 {
                self.cut.store(limit, Ordering::SeqCst);
            }
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn max_trials(&self) -> Option<u64> {
        self.max_trials
    }

    /// Why the campaign stopped early, if it did: the user, or a limit that cut work short.
    pub fn reason(&self) -> Option<&'static str> {
        if self.stopped_by_user() {
            return Some(STOPPED_BY_USER);
        }
        match self.cut.load(Ordering::SeqCst) {
            1 => Some("trial budget spent"),
            2 => Some("wall-time budget spent"),
            _ => None,
        }
    }
}
