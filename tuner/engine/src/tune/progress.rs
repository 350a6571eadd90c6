//! The progress line of a campaign: trials, the class being tuned, best speedup so far, ETA.
//! On a terminal a bar redrawn in place; elsewhere (a daemon's log, a Slurm job's output,
//! `nohup`) a plain line every [`LINE_EVERY`], so that a long campaign is never silent.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use results::TrialStatus;

use super::evaluator::Baseline;
use crate::campaign::Metric;
use crate::runner::TrialResult;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// Nothing (`--quiet`, tests).
    Hidden,
    /// A bar redrawn in place (stderr is a terminal).
    Bar,
    /// A plain line now and then (stderr is a file or a pipe).
    Lines,
}

/// How often a plain progress line is written.
pub const LINE_EVERY: Duration = Duration::from_secs(10);

pub struct Progress {
    bar: ProgressBar,
    failures: u64,
    mode: ProgressMode,
    started: Instant,
    last_line: Option<Instant>,
}

impl Progress {
    pub fn new(mode: ProgressMode, max_trials: Option<u64>) -> Progress {
        let bar = match max_trials {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::new_spinner(),
        };
        if mode != ProgressMode::Bar {
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
        if mode == ProgressMode::Bar {
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        Progress {
            bar,
            failures: 0,
            mode,
            started: Instant::now(),
            last_line: None,
        }
    }

    /// In [`ProgressMode::Lines`], the bar's state as one line, at most every [`LINE_EVERY`].
    fn maybe_line(&mut self) {
        if self.mode != ProgressMode::Lines
            || self.last_line.is_some_and(|t| t.elapsed() < LINE_EVERY)
        {
            return;
        }
        self.last_line = Some(Instant::now());
        let elapsed = self.started.elapsed().as_secs();
        let trials = match self.bar.length() {
            Some(len) => format!("{}/{len} trials", self.bar.position()),
            None => format!("{} trials", self.bar.position()),
        };
        eprintln!(
            "[{:02}:{:02}:{:02}] {trials} {} {}",
            elapsed / 3600,
            elapsed / 60 % 60,
            elapsed % 60,
            self.bar.prefix(),
            self.bar.message()
        );
    }

    pub fn set_label(&self, label: &str) {
        self.bar.set_prefix(label.to_string());
    }

    pub fn trial(&mut self, result: &TrialResult) {
        if result.status != TrialStatus::Ok {
            self.failures += 1;
        }
        self.bar.inc(1);
        self.maybe_line();
    }

    /// `best` is the search's best value in its metric: a speedup where that is time, the
    /// value itself (a gap, joules, watts) otherwise.
    pub fn note(
        &self,
        class: &str,
        best: Option<(Metric, f64)>,
        baseline: Option<&Baseline>,
        trials: u64,
    ) {
        let best = match (best, baseline) {
            (Some((Metric::Time, b)), Some(base)) if b > 0.0 => {
                format!("best {:.3}x over baseline", base.time_s / b)
            }
            (Some((Metric::Gap, b)), _) => format!("best gap {b:.3}%"),
            (Some((Metric::Energy, b)), _) => format!("best {b:.3} J"),
            (Some((Metric::Power, b)), _) => format!("best {b:.1} W"),
            (Some((_, b)), _) => format!("best {b:.4}"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_speaks_in_the_searchs_metric() {
        let p = Progress::new(ProgressMode::Hidden, None);
        p.note("qap:x", Some((Metric::Gap, 0.5)), None, 3);
        assert_eq!(p.bar.message(), "[qap:x] best gap 0.500% (3 new)");
        p.note("qap:x", Some((Metric::Energy, 2.25)), None, 4);
        assert!(
            p.bar.message().contains("best 2.250 J"),
            "{}",
            p.bar.message()
        );
    }
}
