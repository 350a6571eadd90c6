//! Measuring a kernel variant on a GPU: time with CUDA events, energy and power with NVML.
//!
//! Protocol (DESIGN.md): warm up; time single runs with events, repeated, keeping median and
//! spread; then run back to back for a window of at least `energy_window_s` and read the
//! energy counter before and after (power = energy / time), while a thread samples
//! instantaneous power; clocks, temperature and throttle reasons are read before and after and
//! a throttled measurement is flagged. Measurements run in a worker process ([`worker`],
//! driven by [`client`]) so that a kernel that faults cannot take the campaign down.

pub mod client;
pub mod device_lock;
pub mod observer;
pub mod power;
pub mod protocol;
pub mod user_dirs;
pub mod worker;
pub mod workload;

use std::time::{Duration, Instant};

use cudarc::driver::sys::CUevent_flags;
use kernels::gpu::Gpu;
use kernels::KernelError;
use serde::{Deserialize, Serialize};

use observer::EnergySpan;
use power::{GpuState, PowerMeter, PowerSamples};
use workload::Workload;

/// How to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MeasureSettings {
    /// Untimed runs first (clocks ramp up, caches fill, lazy loading happens).
    pub warmup_runs: u32,
    /// ... continued back to back for at least this long, so power and temperature settle
    /// before the energy window (a cold GPU reads several percent lower for a second).
    pub warmup_s: f64,
    /// Runs timed one by one with CUDA events.
    pub timed_runs: u32,
    /// Minimum length of the back-to-back window for energy; 0 skips energy.
    pub energy_window_s: f64,
    /// Instantaneous power samples per second during the window.
    pub power_sample_hz: f64,
    /// What is read around each span besides its CUDA events ([`observer`]).
    #[serde(skip_serializing_if = "is_default_observers")]
    pub observers: Vec<observer::ObserverKind>,
}

// Stores written before observers could be chosen hold no such key; leaving the default
// unwritten keeps their `--resume` fingerprint unchanged.
fn is_default_observers(kinds: &[observer::ObserverKind]) -> bool {
    kinds == observer::DEFAULT_OBSERVERS
}

impl Default for MeasureSettings {
    fn default() -> Self {
        MeasureSettings {
            warmup_runs: 3,
            warmup_s: 0.5,
            timed_runs: 10,
            energy_window_s: 1.0,
            power_sample_hz: 50.0,
            observers: observer::DEFAULT_OBSERVERS.to_vec(),
        }
    }
}

impl MeasureSettings {
    pub fn check(&self) -> Result<(), String> {
        if self.timed_runs == 0 {
            return Err("measurement `timed_runs` must be at least 1".into());
        }
        // Bounded above too: 1e308 s used to panic in a duration conversion.
        if !(self.warmup_s.is_finite()
            && self.warmup_s >= 0.0
            && self.warmup_s <= solvers::limits::MAX_SECONDS)
        {
            return Err(solvers::limits::out_of_range(
                "warmup_s",
                solvers::limits::number(self.warmup_s),
                &format!("0 to {:e} seconds", solvers::limits::MAX_SECONDS),
            ));
        }
        // Bounded above too: 1e308 s used to panic in a duration conversion.
        if !(self.energy_window_s.is_finite()
            && self.energy_window_s >= 0.0
            && self.energy_window_s <= solvers::limits::MAX_SECONDS)
        {
            return Err(solvers::limits::out_of_range(
                "energy_window_s",
                solvers::limits::number(self.energy_window_s),
                &format!("0 to {:e} seconds", solvers::limits::MAX_SECONDS),
            ));
        }
        if !(self.power_sample_hz.is_finite()
            && self.power_sample_hz > 0.0
            && self.power_sample_hz <= 1000.0)
        {
            return Err(format!(
                "measurement `power_sample_hz` must be in (0, 1000], found {}",
                self.power_sample_hz
            ));
        }
        Ok(())
    }
}

/// Run times of the event-timed runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub runs_ms: Vec<f64>,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    /// max / min.
    pub spread: f64,
}

impl Timing {
    pub fn from_runs(runs_ms: Vec<f64>) -> Timing {
        let mut sorted = runs_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        let median_ms = if sorted.len() % 2 == 0 {
            (sorted[sorted.len() / 2 - 1] + median) / 2.0
        } else {
            median
        };
        let (min_ms, max_ms) = (sorted[0], sorted[sorted.len() - 1]);
        Timing {
            runs_ms,
            median_ms,
            min_ms,
            max_ms,
            spread: if min_ms > 0.0 {
                max_ms / min_ms
            } else {
                f64::INFINITY
            },
        }
    }
}

/// Where an energy figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EnergySource {
    /// The board's energy counter, read before and after the window.
    Counter,
    /// Mean of instantaneous power samples times the window (no energy counter).
    PowerSamples,
}

/// The back-to-back window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergyWindow {
    pub runs: u32,
    pub wall_s: f64,
    /// Sum of the runs' event times: the part of the window the GPU spent in the kernel.
    pub kernel_s: f64,
    /// kernel_s / wall_s; below 1 by the launch gaps.
    pub kernel_share: f64,
    pub energy_j: Option<f64>,
    pub average_power_w: Option<f64>,
    /// Average power x median run time.
    pub energy_per_run_j: Option<f64>,
    pub energy_source: Option<EnergySource>,
    pub samples: PowerSamples,
}

/// One measurement of a workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub timing: Timing,
    pub energy: Option<EnergyWindow>,
    pub before: Option<GpuState>,
    pub after: Option<GpuState>,
    /// True when a disturbing throttle reason was seen before, during or after.
    pub throttled: bool,
    /// Why power figures are missing, when they are.
    pub power_note: Option<String>,
}

/// Measures a prepared workload on `gpu` (runs inside the worker process).
pub fn measure(
    gpu: &Gpu,
    workload: &mut dyn Workload,
    meter: Option<&PowerMeter>,
    settings: &MeasureSettings,
) -> Result<Measurement, KernelError> {
    let stream = gpu.stream().clone();
    let name = workload_name(workload);
    let sync = |what: &str| {
        stream
            .synchronize()
            .map_err(KernelError::driver(format!("{what} of {name}")))
    };
    let warmup_until = Instant::now() + Duration::from_secs_f64(settings.warmup_s);
    let mut warmed = 0u32;
    while warmed < settings.warmup_runs || Instant::now() < warmup_until {
        workload.run(gpu)?;
        warmed += 1;
        // Keep the launch queue short so the clock measures GPU work, not queued launches.
        if warmed % 8 == 0 {
            sync("warm-up")?;
        }
    }
    sync("warm-up")?;

    let ctx = gpu.context();
    let event = || {
        ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(KernelError::driver("creating an event"))
    };
    let (start, end) = (event()?, event()?);
    let timed = |workload: &mut dyn Workload| -> Result<f64, KernelError> {
        start
            .record(&stream)
            .map_err(KernelError::driver("recording an event"))?;
        workload.run(gpu)?;
        end.record(&stream)
            .map_err(KernelError::driver("recording an event"))?;
        end.synchronize()
            .map_err(KernelError::driver(format!("running {name}")))?;
        start
            .elapsed_ms(&end)
            .map(f64::from)
            .map_err(KernelError::driver("reading an event"))
    };
    let mut runs_ms = Vec::with_capacity(settings.timed_runs as usize);
    for _ in 0..settings.timed_runs {
        runs_ms.push(timed(workload)?);
    }
    let timing = Timing::from_runs(runs_ms);

    let sample_period = Duration::from_secs_f64(1.0 / settings.power_sample_hz);
    let mut observers = observer::observers(
        &settings.observers,
        meter,
        EnergySpan::Window,
        sample_period,
    );
    observer::begin(&mut observers);
    let energy = if settings.energy_window_s > 0.0 {
        let window = Duration::from_secs_f64(settings.energy_window_s);
        // The energy counter only moves every ~100 ms, so a window read at arbitrary moments is
        // off by up to a tick at each end (10% of a 1 s window). The observers therefore poll
        // while the runs go on, and the window runs until each has a complete reading (the
        // energy observer: from one tick to the first tick after `window` has passed).
        let started = Instant::now();
        // Pairs of events around every run measure the kernel's share of the window without
        // synchronising between runs, so the window stays back to back.
        let mut pairs = Vec::new();
        // Without ticks (no counter, or it stalls) the window ends on time, with 2 s of grace.
        let give_up = window + Duration::from_secs(2);
        loop {
            let (s, e) = (event()?, event()?);
            s.record(&stream)
                .map_err(KernelError::driver("recording an event"))?;
            workload.run(gpu)?;
            e.record(&stream)
                .map_err(KernelError::driver("recording an event"))?;
            pairs.push((s, e));
            // Keep the queue short so the wall clock tracks the GPU, not the launch queue.
            if pairs.len() % 8 == 0 {
                pairs[pairs.len() - 8]
                    .1
                    .synchronize()
                    .map_err(KernelError::driver("energy window"))?;
            }
            let elapsed = started.elapsed();
            if elapsed >= window
                && (observer::complete(&mut observers, window) || elapsed >= give_up)
            {
                break;
            }
        }
        sync("energy window")?;
        let wall_s = started.elapsed().as_secs_f64();
        let observed = observer::finish(&mut observers, wall_s);
        let mut kernel_s = 0.0;
        for (s, e) in &pairs {
            kernel_s += f64::from(
                s.elapsed_ms(e)
                    .map_err(KernelError::driver("reading an event"))?,
            ) / 1000.0;
        }
        let average_power_w = observed.power.map(|(w, _)| w);
        Some((
            EnergyWindow {
                runs: pairs.len() as u32,
                wall_s,
                kernel_s,
                kernel_share: kernel_s / wall_s,
                energy_j: average_power_w.map(|w| w * wall_s),
                average_power_w,
                energy_per_run_j: average_power_w.map(|w| w * timing.median_ms / 1000.0),
                energy_source: observed.power.map(|(_, source)| source),
                samples: observed.samples.clone(),
            },
            observed,
        ))
    } else {
        None
    };
    let (energy, observed) = match energy {
        Some((window, observed)) => (Some(window), observed),
        None => (None, observer::finish(&mut observers, 0.0)),
    };
    Ok(Measurement {
        timing,
        energy,
        throttled: observed.throttled(),
        before: observed.before,
        after: observed.after,
        power_note: None,
    })
}

/// One production run with a wall-clock budget (or a target), measured as itself: a budget
/// of a second or more spans several ticks of the energy counter, so its energy is the
/// power between the first and last tick inside the run times the run's wall time.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BudgetRun {
    pub wall_s: f64,
    pub energy_j: Option<f64>,
    pub power_w: Option<f64>,
    pub energy_source: Option<EnergySource>,
    pub before: Option<GpuState>,
    pub after: Option<GpuState>,
    /// Throttle reasons other than idle were active before, during or after the run.
    pub throttled: bool,
    pub throttle_reasons: Vec<String>,
}

/// Runs `run` once (it synchronises before it returns) and measures its energy.
pub fn budget_run<T>(
    meter: Option<&PowerMeter>,
    kinds: &[observer::ObserverKind],
    run: impl FnOnce() -> Result<T, KernelError>,
) -> Result<(T, BudgetRun), KernelError> {
    let mut observers = observer::observers(
        kinds,
        meter,
        EnergySpan::WholeRun,
        Duration::from_millis(20),
    );
    observer::begin(&mut observers);
    let started = Instant::now();
    let out = run();
    let wall_s = started.elapsed().as_secs_f64();
    let observed = observer::finish(&mut observers, wall_s);
    let out = out?;
    let mut throttle_reasons: Vec<String> = Vec::new();
    for s in [&observed.before, &observed.after].into_iter().flatten() {
        throttle_reasons.extend(s.throttle_reasons.iter().cloned());
    }
    throttle_reasons.extend(observed.samples.throttle_reasons.iter().cloned());
    throttle_reasons.sort();
    throttle_reasons.dedup();
    let power_w = observed.power.map(|(w, _)| w);
    Ok((
        out,
        BudgetRun {
            wall_s,
            energy_j: power_w.map(|w| w * wall_s),
            power_w,
            energy_source: observed.power.map(|(_, source)| source),
            throttled: observed.throttled(),
            before: observed.before,
            after: observed.after,
            throttle_reasons,
        },
    ))
}

fn workload_name(workload: &dyn Workload) -> String {
    format!("{} ({})", workload.kernel().name, workload.launch())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_median_and_spread() {
        let t = Timing::from_runs(vec![2.0, 1.0, 4.0]);
        assert_eq!(
            (t.median_ms, t.min_ms, t.max_ms, t.spread),
            (2.0, 1.0, 4.0, 4.0)
        );
        let t = Timing::from_runs(vec![1.0, 3.0, 2.0, 4.0]);
        assert_eq!(t.median_ms, 2.5);
    }

    #[test]
    fn settings_are_checked() {
        assert!(MeasureSettings::default().check().is_ok());
        let bad = MeasureSettings {
            timed_runs: 0,
            ..Default::default()
        };
        assert!(bad.check().unwrap_err().contains("timed_runs"));
        let bad = MeasureSettings {
            power_sample_hz: 0.0,
            ..Default::default()
        };
        assert!(bad.check().unwrap_err().contains("power_sample_hz"));
    }
}
