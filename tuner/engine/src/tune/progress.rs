//! The progress line of a campaign: trials, the class being tuned, best speedup so far, ETA.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use results::TrialStatus;

use super::evaluator::Baseline;
use crate::runner::TrialResult;

pub struct Progress {
    bar: ProgressBar,
    failures: u64,
}

impl Progress {
    pub fn new(visible: bool, max_trials: Option<u64>) -> Progress {
        let bar = match max_trials {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::new_spinner(),
        };
        if !visible {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        let template = if max_trials.is_some() {
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} trials (eta {eta}) {prefix} {msg}"
        } else {
            "{spinner} [{elapsed_precise}] {pos} trials {prefix} {msg}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Progress { bar, failures: 0 }
    }

    pub fn set_label(&self, label: &str) {
        self.bar.set_prefix(label.to_string());
    }

    pub fn trial(&mut self, result: &TrialResult) {
        if result.status != TrialStatus::Ok {
            self.failures += 1;
        }
        self.bar.inc(1);
    }

    pub fn note(&self, class: &str, best: Option<f64>, baseline: Option<&Baseline>, trials: u64) {
        let best = match (best, baseline) {
            (Some(b), Some(base)) if b > 0.0 => {
                format!("best {:.3}x over baseline", base.time_s / b)
            }
            (Some(b), _) => format!("best {b:.4}"),
            _ => String::new(),
        };
        let failed = if self.failures > 0 {
            format!(", {} failed", self.failures)
        } else {
            String::new()
        };
        self.bar
            .set_message(format!("[{class}] {best} ({trials} new{failed})"));
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
