//! Observers, in Kernel Tuner's sense: what is read around a measured span besides its CUDA
//! events. The protocol ([`crate::measure`] and [`crate::budget_run`]) calls every observer at
//! the same points (before the span's first run, between runs once the span's minimum length
//! has passed, after its last run) and never knows what an observer reads. A campaign chooses
//! them (`[measurement] observers`); adding one is a kind here and an implementation.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::power::{EnergyWatch, GpuState, PowerMeter, PowerSamples, Sampler};
use crate::EnergySource;

/// The observers a campaign can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ObserverKind {
    /// NVML's energy counter (power = energy between counter ticks over their time), with
    /// instantaneous power samples as the fallback and for the peak.
    NvmlEnergy,
    /// NVML's clocks, temperature and throttle reasons before and after the span.
    NvmlState,
}

/// What every observer reads unless a campaign says otherwise.
pub const DEFAULT_OBSERVERS: [ObserverKind; 2] =
    [ObserverKind::NvmlState, ObserverKind::NvmlEnergy];

/// What the observers saw over one span; each fills its own part.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Average power over the span and where it came from.
    pub power: Option<(f64, EnergySource)>,
    pub samples: PowerSamples,
    pub before: Option<GpuState>,
    pub after: Option<GpuState>,
}

impl Observed {
    /// Whether a throttle reason that disturbs timings was seen at any point.
    pub fn throttled(&self) -> bool {
        self.before.as_ref().is_some_and(|s| s.throttled)
            || self.after.as_ref().is_some_and(|s| s.throttled)
            || self.samples.throttled
    }
}

/// One observer of a measured span.
pub trait Observer {
    /// Right before the span's first run.
    fn before_start(&mut self);
    /// Polled between runs once the span has lasted `min`: whether this observer's reading of
    /// the span is complete (the energy counter only ticks every ~100 ms).
    fn complete(&mut self, _min: Duration) -> bool {
        true
    }
    /// Right after the span's last run finished (`wall_s` long); adds what it saw.
    fn after_finish(&mut self, wall_s: f64, observed: &mut Observed);
}

/// How the energy observer delimits its reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnergySpan {
    /// A back-to-back window: from the first counter tick to the first tick at least the
    /// window's length later (the span runs until that tick has happened).
    Window,
    /// One run as long as it lasts: the first to the last tick inside it, else the counter's
    /// difference over the run (coarse), else the samples.
    WholeRun,
}

/// [`ObserverKind::NvmlEnergy`].
pub struct NvmlEnergy<'a> {
    meter: &'a PowerMeter,
    span: EnergySpan,
    sample_period: Duration,
    counter_before: Option<u64>,
    watch: Option<EnergyWatch>,
    sampler: Option<Sampler>,
    ticks: Option<((u64, Instant), (u64, Instant))>,
}

impl<'a> NvmlEnergy<'a> {
    pub fn new(meter: &'a PowerMeter, span: EnergySpan, sample_period: Duration) -> Self {
        NvmlEnergy {
            meter,
            span,
            sample_period,
            counter_before: None,
            watch: None,
            sampler: None,
            ticks: None,
        }
    }
}

impl Observer for NvmlEnergy<'_> {
    fn before_start(&mut self) {
        if self.span == EnergySpan::WholeRun {
            self.counter_before = self.meter.energy_mj();
        }
        self.watch = self.meter.watch_energy();
        self.sampler = Some(self.meter.sample(self.sample_period));
    }

    fn complete(&mut self, min: Duration) -> bool {
        match (&self.watch, self.span) {
            (Some(w), EnergySpan::Window) => {
                self.ticks = w.window(min);
                self.ticks.is_some()
            }
            // No counter: the window ends on time, on the samples alone.
            _ => true,
        }
    }

    fn after_finish(&mut self, wall_s: f64, observed: &mut Observed) {
        let ticks = match (self.span, &self.watch) {
            (EnergySpan::Window, _) => self.ticks,
            (EnergySpan::WholeRun, Some(w)) => w.span(),
            (EnergySpan::WholeRun, None) => None,
        };
        let watched = self.watch.is_some();
        if let Some(w) = self.watch.take() {
            w.stop();
        }
        observed.samples = self.sampler.take().map(Sampler::stop).unwrap_or_default();
        let counter = match (self.span, self.counter_before, self.meter.energy_mj()) {
            (EnergySpan::WholeRun, Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        };
        observed.power = span_power(ticks, watched, counter, wall_s, observed.samples.mean_w);
    }
}

/// A span's mean power from what [`NvmlEnergy`] saw: the energy between the counter's first
/// and last tick inside the span where there were two; else, for a whole run, the counter's
/// difference over the run (`counter_mj`) where that is long enough for the counter's steps
/// (~100 ms) not to matter; else the power samples' mean. A run shorter than one step (a
/// `solve` whose compile ate its time limit: 12 ms) would otherwise be charged a whole step's
/// energy: 1075 W on an H100, measured.
fn span_power(
    ticks: Option<((u64, Instant), (u64, Instant))>,
    watched: bool,
    counter_mj: Option<u64>,
    wall_s: f64,
    samples_mean_w: Option<f64>,
) -> Option<(f64, EnergySource)> {
    if let Some(((e0, t0), (e1, t1))) = ticks {
        return Some((
            e1.saturating_sub(e0) as f64 / 1000.0 / (t1 - t0).as_secs_f64(),
            EnergySource::Counter,
        ));
    }
    // Under a watch, fewer than two ticks means the run was shorter than a step.
    let counter_holds = !watched && wall_s >= MIN_COUNTER_SPAN_S;
    match counter_mj {
        Some(mj) if counter_holds && mj > 0 => {
            Some((mj as f64 / 1000.0 / wall_s, EnergySource::Counter))
        }
        _ => samples_mean_w.map(|w| (w, EnergySource::PowerSamples)),
    }
}

/// The shortest run whose energy-counter difference gives its mean power: ten of the
/// counter's ~100 ms steps.
const MIN_COUNTER_SPAN_S: f64 = 1.0;

/// [`ObserverKind::NvmlState`].
pub struct NvmlState<'a> {
    meter: &'a PowerMeter,
    before: Option<GpuState>,
}

impl<'a> NvmlState<'a> {
    pub fn new(meter: &'a PowerMeter) -> Self {
        NvmlState {
            meter,
            before: None,
        }
    }
}

impl Observer for NvmlState<'_> {
    fn before_start(&mut self) {
        self.before = Some(self.meter.state());
    }

    fn after_finish(&mut self, _wall_s: f64, observed: &mut Observed) {
        observed.before = self.before.take();
        observed.after = Some(self.meter.state());
    }
}

/// The observers `kinds` asks for, reading `meter` (none without NVML).
pub fn observers<'a>(
    kinds: &[ObserverKind],
    meter: Option<&'a PowerMeter>,
    span: EnergySpan,
    sample_period: Duration,
) -> Vec<Box<dyn Observer + 'a>> {
    let Some(meter) = meter else {
        return Vec::new();
    };
    kinds
        .iter()
        .map(|kind| -> Box<dyn Observer + 'a> {
            match kind {
                ObserverKind::NvmlEnergy => Box::new(NvmlEnergy::new(meter, span, sample_period)),
                ObserverKind::NvmlState => Box::new(NvmlState::new(meter)),
            }
        })
        .collect()
}

/// Runs the observers around a span: `before_start` in order, `after_finish` in reverse
/// order (the last to start is the first to stop, so state is read outside the energy
/// reading, as before observers existed).
pub fn begin(observers: &mut [Box<dyn Observer + '_>]) {
    for o in observers.iter_mut() {
        o.before_start();
    }
}

/// Whether every observer's reading is complete once the span has lasted `min`.
pub fn complete(observers: &mut [Box<dyn Observer + '_>], min: Duration) -> bool {
    observers.iter_mut().all(|o| o.complete(min))
}

/// Ends the span for every observer and collects what they saw.
pub fn finish(observers: &mut [Box<dyn Observer + '_>], wall_s: f64) -> Observed {
    let mut observed = Observed::default();
    for o in observers.iter_mut().rev() {
        o.after_finish(wall_s, &mut observed);
    }
    observed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An observer that records the calls it gets, to check the protocol's order.
    struct Log<'a>(&'a std::cell::RefCell<Vec<String>>, &'static str, bool);

    impl Observer for Log<'_> {
        fn before_start(&mut self) {
            self.0.borrow_mut().push(format!("{} begin", self.1));
        }
        fn complete(&mut self, _min: Duration) -> bool {
            self.2
        }
        fn after_finish(&mut self, _wall_s: f64, observed: &mut Observed) {
            self.0.borrow_mut().push(format!("{} end", self.1));
            if self.1 == "energy" {
                observed.power = Some((100.0, EnergySource::PowerSamples));
            }
        }
    }

    #[test]
    fn a_run_shorter_than_a_counter_step_takes_the_samples_power() {
        let t0 = Instant::now();
        let t1 = t0 + Duration::from_millis(500);
        // Two ticks in the span: the energy between them over their time.
        let ticks = Some(((1_000, t0), (126_000, t1)));
        assert_eq!(
            span_power(ticks, true, Some(13_000), 0.5, Some(240.0)),
            Some((250.0, EnergySource::Counter))
        );
        // 12 ms under a watch that saw no two ticks: one step (13 J) is not 1075 W.
        assert_eq!(
            span_power(None, true, Some(13_000), 0.012, Some(230.0)),
            Some((230.0, EnergySource::PowerSamples))
        );
        assert_eq!(span_power(None, true, Some(13_000), 0.012, None), None);
        // No watch: the counter's difference over a long run, not over a short one.
        assert_eq!(
            span_power(None, false, Some(500_000), 2.0, Some(240.0)),
            Some((250.0, EnergySource::Counter))
        );
        assert_eq!(
            span_power(None, false, Some(13_000), 0.012, Some(230.0)),
            Some((230.0, EnergySource::PowerSamples))
        );
    }

    #[test]
    fn observers_start_in_order_stop_in_reverse_and_all_must_be_complete() {
        let log = std::cell::RefCell::new(Vec::new());
        let mut obs: Vec<Box<dyn Observer>> = vec![
            Box::new(Log(&log, "state", true)),
            Box::new(Log(&log, "energy", false)),
        ];
        begin(&mut obs);
        assert!(!complete(&mut obs, Duration::from_secs(1)));
        let seen = finish(&mut obs, 1.0);
        assert_eq!(
            *log.borrow(),
            ["state begin", "energy begin", "energy end", "state end"]
        );
        assert_eq!(seen.power, Some((100.0, EnergySource::PowerSamples)));
        assert!(
            complete(&mut [], Duration::ZERO),
            "no observer, nothing to wait for"
        );
    }

    #[test]
    fn kinds_are_spelled_as_campaigns_write_them() {
        let kinds: Vec<ObserverKind> =
            serde_json::from_str(r#"["nvml-energy", "nvml-state"]"#).unwrap();
        assert_eq!(kinds, [ObserverKind::NvmlEnergy, ObserverKind::NvmlState]);
        assert!(serde_json::from_str::<ObserverKind>(r#""cpu-rapl""#).is_err());
        assert!(observers(&DEFAULT_OBSERVERS, None, EnergySpan::Window, Duration::ZERO).is_empty());
    }
}
