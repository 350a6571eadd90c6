//! Power, energy, clocks and throttling through NVML.
//!
//! Energy comes from the board's energy counter (mJ since driver load, ticking about every
//! 100 ms on Hopper), read before and after a window of back-to-back runs. A sampler thread
//! reads the instantaneous power field (POWER_INSTANT, id 186) at about 50 Hz for mean and
//! peak, and ORs the throttle reasons it sees. Nothing here changes clocks, limits or modes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::enums::device::SampleValue;
use nvml_wrapper::struct_wrappers::device::FieldValueSample;
use nvml_wrapper::structs::device::FieldId;
use nvml_wrapper::{Device, Nvml};
use serde::{Deserialize, Serialize};

/// NVML's field id for instantaneous board power (mW).
const POWER_INSTANT: FieldId = FieldId(186);

/// Throttle reasons that mean the clocks were held down while we measured (idle and
/// application-clock settings are normal states, not disturbances).
fn disturbing() -> ThrottleReasons {
    ThrottleReasons::SW_POWER_CAP
        | ThrottleReasons::HW_SLOWDOWN
        | ThrottleReasons::SW_THERMAL_SLOWDOWN
        | ThrottleReasons::HW_THERMAL_SLOWDOWN
        | ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN
}

/// NVML opened for one device, matched to the CUDA device by UUID (the two may number
/// devices differently).
pub struct PowerMeter {
    nvml: Arc<Nvml>,
    uuid: String,
}

/// Clocks, temperature and throttle state at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuState {
    pub sm_clock_mhz: Option<u32>,
    pub memory_clock_mhz: Option<u32>,
    pub temperature_c: Option<u32>,
    pub throttle_reasons: Vec<String>,
    pub throttled: bool,
}

/// Power samples taken by the sampler thread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PowerSamples {
    pub count: usize,
    pub mean_w: Option<f64>,
    pub peak_w: Option<f64>,
    pub throttle_reasons: Vec<String>,
    pub throttled: bool,
}

/// NVML's name of an open CUDA device (its UUID, `GPU-...`).
pub fn uuid_of(gpu: &kernels::gpu::Gpu) -> Result<String, String> {
    gpu.context()
        .uuid()
        .map(|u| format_uuid(&u.bytes))
        .map_err(|e| format!("reading the GPU's UUID: {e:?}"))
}

impl PowerMeter {
    /// [`PowerMeter::open`] for an open CUDA device.
    pub fn of_gpu(gpu: &kernels::gpu::Gpu) -> Result<PowerMeter, String> {
        PowerMeter::open(&uuid_of(gpu)?)
    }

    /// Opens NVML; `None` (with the reason) when it is missing, which only costs the power
    /// figures, never the time measurements.
    pub fn open(cuda_uuid: &str) -> Result<PowerMeter, String> {
        let nvml = Nvml::init().map_err(|e| format!("NVML unavailable: {e}"))?;
        nvml.device_by_uuid(cuda_uuid)
            .map_err(|e| format!("NVML cannot find the device {cuda_uuid}: {e}"))?;
        Ok(PowerMeter {
            nvml: Arc::new(nvml),
            uuid: cuda_uuid.to_string(),
        })
    }

    /// The device, found again at each reading: None once NVML loses it (a GPU fallen off
    /// the bus after a fault), which costs the readings, not the run's answer.
    fn device(&self) -> Option<Device<'_>> {
        self.nvml.device_by_uuid(self.uuid.as_str()).ok()
    }

    /// Energy counter in mJ, when the board has one.
    pub fn energy_mj(&self) -> Option<u64> {
        self.device()?.total_energy_consumption().ok()
    }

    /// Instantaneous power in W, when the field is supported.
    pub fn instant_power_w(&self) -> Option<f64> {
        instant_power(&self.device()?)
    }

    pub fn state(&self) -> GpuState {
        let Some(device) = self.device() else {
            return GpuState::default();
        };
        let reasons = device.current_throttle_reasons().ok();
        GpuState {
            sm_clock_mhz: device.clock_info(Clock::SM).ok(),
            memory_clock_mhz: device.clock_info(Clock::Memory).ok(),
            temperature_c: device.temperature(TemperatureSensor::Gpu).ok(),
            throttle_reasons: reasons.map(names).unwrap_or_default(),
            throttled: reasons.is_some_and(|r| r.intersects(disturbing())),
        }
    }

    /// Starts a thread that polls the energy counter about every millisecond and records each
    /// tick (a change of the value) with its time. Polling from the launching thread would
    /// starve the GPU: an NVML call takes longer than a short kernel.
    pub fn watch_energy(&self) -> Option<EnergyWatch> {
        self.energy_mj()?;
        let stop = Arc::new(AtomicBool::new(false));
        let ticks = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (nvml, uuid, flag, out) = (
            self.nvml.clone(),
            self.uuid.clone(),
            stop.clone(),
            ticks.clone(),
        );
        let handle = std::thread::spawn(move || {
            let Ok(device) = nvml.device_by_uuid(uuid.as_str()) else {
                return;
            };
            let mut last = device.total_energy_consumption().ok();
            while !flag.load(Ordering::Relaxed) {
                let now = device.total_energy_consumption().ok();
                if now.is_some() && now != last {
                    let at = Instant::now();
                    if let (Some(value), Ok(mut ticks)) = (now, out.lock()) {
                        ticks.push((value, at));
                    }
                    last = now;
                }
                std::thread::sleep(Duration::from_micros(500));
            }
        });
        Some(EnergyWatch {
            stop: StopOnDrop(stop),
            ticks,
            handle,
        })
    }

    /// Starts sampling instantaneous power every `period` until [`Sampler::stop`].
    pub fn sample(&self, period: Duration) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let (nvml, uuid, flag) = (self.nvml.clone(), self.uuid.clone(), stop.clone());
        let handle = std::thread::spawn(move || {
            let mut watts = Vec::new();
            let mut reasons = ThrottleReasons::empty();
            let Ok(device) = nvml.device_by_uuid(uuid.as_str()) else {
                return (watts, reasons);
            };
            let mut next = Instant::now();
            while !flag.load(Ordering::Relaxed) {
                if let Some(w) = instant_power(&device) {
                    watts.push(w);
                }
                if let Ok(r) = device.current_throttle_reasons() {
                    reasons |= r;
                }
                next += period;
                if let Some(wait) = next.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
            (watts, reasons)
        });
        Sampler {
            stop: StopOnDrop(stop),
            handle,
        }
    }
}

/// A polling thread's stop flag, raised when its owner is dropped without `stop` (a
/// measurement that failed part way): else the thread polled NVML for the process's life.
struct StopOnDrop(Arc<AtomicBool>);

impl StopOnDrop {
    fn raise(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.raise();
    }
}

/// A running energy-counter watcher.
pub struct EnergyWatch {
    stop: StopOnDrop,
    ticks: Arc<std::sync::Mutex<Vec<(u64, Instant)>>>,
    handle: JoinHandle<()>,
}

impl EnergyWatch {
    /// The first tick, and the first tick at least `window` after it, once both happened:
    /// `((mJ, time), (mJ, time))`.
    pub fn window(&self, window: Duration) -> Option<((u64, Instant), (u64, Instant))> {
        let ticks = self.ticks.lock().ok()?;
        let first = *ticks.first()?;
        let last = ticks.iter().find(|(_, at)| *at - first.1 >= window)?;
        Some((first, *last))
    }

    /// The first and the last tick seen, once there are two.
    pub fn span(&self) -> Option<((u64, Instant), (u64, Instant))> {
        let ticks = self.ticks.lock().ok()?;
        match (ticks.first(), ticks.last()) {
            (Some(a), Some(b)) if b.1 > a.1 => Some((*a, *b)),
            _ => None,
        }
    }

    pub fn stop(self) {
        self.stop.raise();
        let _ = self.handle.join();
    }
}

/// A running power sampler.
pub struct Sampler {
    stop: StopOnDrop,
    handle: JoinHandle<(Vec<f64>, ThrottleReasons)>,
}

impl Sampler {
    pub fn stop(self) -> PowerSamples {
        self.stop.raise();
        let (watts, reasons) = self
            .handle
            .join()
            .unwrap_or_else(|_| (Vec::new(), ThrottleReasons::empty()));
        PowerSamples {
            count: watts.len(),
            mean_w: (!watts.is_empty()).then(|| watts.iter().sum::<f64>() / watts.len() as f64),
            peak_w: watts.iter().copied().reduce(f64::max),
            throttle_reasons: names(reasons),
            throttled: reasons.intersects(disturbing()),
        }
    }
}

fn instant_power(device: &Device<'_>) -> Option<f64> {
    let samples = device.field_values_for(&[POWER_INSTANT]).ok()?;
    match samples.into_iter().next()? {
        Ok(FieldValueSample { value: Ok(v), .. }) => {
            let mw = match v {
                SampleValue::U32(x) => x as f64,
                SampleValue::U64(x) => x as f64,
                SampleValue::I64(x) => x as f64,
                SampleValue::F64(x) => x,
            };
            (mw > 0.0).then_some(mw / 1000.0)
        }
        _ => None,
    }
}

fn names(reasons: ThrottleReasons) -> Vec<String> {
    reasons
        .iter_names()
        .map(|(name, _)| name.to_ascii_lowercase())
        .collect()
}

/// The driver's version string and the CUDA version it supports, from NVML.
pub fn driver_versions() -> Option<(String, i32)> {
    let nvml = Nvml::init().ok()?;
    Some((
        nvml.sys_driver_version().ok()?,
        nvml.sys_cuda_driver_version().ok()?,
    ))
}

/// NVML's spelling of a device UUID: `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
fn format_uuid(bytes: &[std::ffi::c_char; 16]) -> String {
    let hex: Vec<String> = bytes.iter().map(|&b| format!("{:02x}", b as u8)).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex[0..4].concat(),
        hex[4..6].concat(),
        hex[6..8].concat(),
        hex[8..10].concat(),
        hex[10..16].concat()
    )
}
