//! The fuzzing loop: pick a corpus entry, mutate it, run the target under `catch_unwind`,
//! measure time and peak memory, keep inputs that reached an outcome not seen before, and
//! save every panic, slow input and memory outlier to disk.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::alloc;
use crate::mutate::mutate;
use crate::targets::Target;

/// How a run is bounded and what counts as a finding.
#[derive(Debug, Clone)]
pub struct Settings {
    pub seed: u64,
    /// Stop after this many inputs ...
    pub inputs: Option<u64>,
    /// ... or after this long, whichever comes first.
    pub duration: Option<Duration>,
    /// Longest input generated.
    pub max_len: usize,
    /// An input running longer than this is a timeout.
    pub timeout: Duration,
    /// Peak memory above `memory_factor x input length + memory_slack` is a finding.
    pub memory_factor: usize,
    pub memory_slack: usize,
    /// Where findings are written (`TARGET-KIND-N.bin`); none: not written.
    pub out: Option<PathBuf>,
    /// Write every input to `out/TARGET-last-input.bin` before running it, so that an abort
    /// (which no `catch_unwind` stops) leaves its input behind; costs a file write per input.
    pub keep_last: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            seed: 1,
            inputs: None,
            duration: Some(Duration::from_secs(10)),
            max_len: 64 << 10,
            timeout: Duration::from_secs(2),
            memory_factor: 64,
            memory_slack: 64 << 20,
            out: None,
            keep_last: false,
        }
    }
}

/// What a run found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub target: &'static str,
    pub inputs: u64,
    pub accepted: u64,
    pub rejected: u64,
    pub panics: Vec<String>,
    pub timeouts: u64,
    pub memory_outliers: u64,
    pub corpus: usize,
    pub outcomes: usize,
    pub slowest: Duration,
    pub largest_input: usize,
    /// The highest peak memory of one input, with that input's length.
    pub peak_bytes: usize,
    pub peak_input_len: usize,
    /// The highest peak / length over inputs of at least 1 KiB (smaller ones are dominated
    /// by fixed costs).
    pub peak_ratio: f64,
    pub elapsed: Duration,
}

impl Report {
    /// One line of the run's figures.
    pub fn line(&self) -> String {
        format!(
            "{:<9} inputs {:>9} ({:>5.0}/s)  accepted {:>7}  panics {}  timeouts {}  memory outliers {}  \
             corpus {:>4}  outcomes {:>4}  slowest {:>7.1} ms  max input {:>6} B  \
             peak {:>6.1} MiB (input {} B)  peak/input (>= 1 KiB) {:.1}x",
            self.target,
            self.inputs,
            self.inputs as f64 / self.elapsed.as_secs_f64().max(1e-9),
            self.accepted,
            self.panics.len(),
            self.timeouts,
            self.memory_outliers,
            self.corpus,
            self.outcomes,
            self.slowest.as_secs_f64() * 1e3,
            self.largest_input,
            self.peak_bytes as f64 / (1 << 20) as f64,
            self.peak_input_len,
            self.peak_ratio,
        )
    }

    pub fn clean(&self) -> bool {
        self.panics.is_empty() && self.timeouts == 0 && self.memory_outliers == 0
    }
}

/// Fuzzes one target.
pub fn run(target: Target, settings: &Settings) -> Report {
    let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
    let mut corpus = target.seeds();
    if corpus.is_empty() {
        corpus.push(Vec::new());
    }
    let seeds = corpus.len();
    let mut outcomes: HashSet<String> = HashSet::new();
    let mut report = Report {
        target: target.name(),
        ..Report::default()
    };
    if let Some(out) = &settings.out {
        let _ = std::fs::create_dir_all(out);
    }
    let counting = alloc::counting();
    let started = Instant::now();
    // The seeds run first, unmutated.
    let mut pending: Vec<Vec<u8>> = corpus.clone();
    loop {
        if settings.inputs.is_some_and(|n| report.inputs >= n)
            || settings.duration.is_some_and(|d| started.elapsed() >= d)
        {
            break;
        }
        let input = pending.pop().unwrap_or_else(|| {
            // Half the time from a seed: most mutants are invalid, and mutating only them
            // would drift away from the inputs the parsers accept.
            let pool = if rng.random_bool(0.5) {
                seeds
            } else {
                corpus.len()
            };
            let a = &corpus[rng.random_range(0..pool)];
            let b = &corpus[rng.random_range(0..corpus.len())];
            mutate(&mut rng, a, b, target.dictionary(), settings.max_len)
        });
        if let Some(out) = settings.out.as_ref().filter(|_| settings.keep_last) {
            // If the process dies (an abort no catch_unwind can stop), this is the input.
            let _ = std::fs::write(
                out.join(format!("{}-last-input.bin", target.name())),
                &input,
            );
        }
        alloc::reset_peak();
        let base = alloc::live();
        let t0 = Instant::now();
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| target.run(&input)));
        let took = t0.elapsed();
        let peak = alloc::peak().saturating_sub(base);
        report.inputs += 1;
        report.largest_input = report.largest_input.max(input.len());
        report.slowest = report.slowest.max(took);
        if counting {
            if peak > report.peak_bytes {
                report.peak_bytes = peak;
                report.peak_input_len = input.len();
            }
            if input.len() >= 1024 {
                report.peak_ratio = report.peak_ratio.max(peak as f64 / input.len() as f64);
            }
            if peak > settings.memory_factor * input.len() + settings.memory_slack {
                report.memory_outliers += 1;
                save(settings, target, "memory", report.memory_outliers, &input);
            }
        }
        if took > settings.timeout {
            report.timeouts += 1;
            save(settings, target, "timeout", report.timeouts, &input);
        }
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(payload) => {
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panic".into());
                report.panics.push(message.clone());
                save(
                    settings,
                    target,
                    "panic",
                    report.panics.len() as u64,
                    &input,
                );
                format!("panic:{message}")
            }
        };
        if outcome.starts_with("ok:") {
            report.accepted += 1;
        } else {
            report.rejected += 1;
        }
        // A cheap stand-in for coverage: an input that ends in a new way is worth mutating.
        let outcome: String = outcome.chars().take(80).collect();
        if outcomes.insert(outcome) && corpus.len() < 2000 {
            corpus.push(input);
        }
    }
    report.elapsed = started.elapsed();
    report.corpus = corpus.len();
    report.outcomes = outcomes.len();
    report
}

fn save(settings: &Settings, target: Target, kind: &str, n: u64, input: &[u8]) {
    if let Some(out) = &settings.out {
        let path: &Path = out;
        let _ = std::fs::write(
            path.join(format!("{}-{kind}-{n}.bin", target.name())),
            input,
        );
    }
}

/// Silences the default panic message (a fuzzer provokes many); findings are reported and
/// saved instead.
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|_| {}));
}
