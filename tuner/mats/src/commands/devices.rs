//! `mats devices`: what GPUs this machine has and what mats can measure on them.

use anyhow::Result;
use kernels::gpu::{self, DeviceInfo, Gpu};
use serde::Serialize;

use crate::cli::DevicesArgs;
use measure::power::{self, PowerMeter};

#[derive(Serialize)]
struct Report {
    driver_available: bool,
    driver_version: Option<String>,
    cuda_version: Option<String>,
    nvrtc_version: Option<String>,
    devices: Vec<Device>,
    note: Option<String>,
}

#[derive(Serialize)]
struct Device {
    #[serde(flatten)]
    info: DeviceInfo,
    uuid: String,
    energy_counter: bool,
    instant_power: bool,
    nvml_note: Option<String>,
}

pub fn run(args: &DevicesArgs) -> Result<()> {
    let nvrtc_version = kernels::nvrtc::version()
        .ok()
        .map(|(a, b)| format!("{a}.{b}"));
    if !gpu::driver_available() {
        let note = "no CUDA driver found (libcuda.so): no GPU commands here; solving and the \
                    instance tools still work";
        if args.json {
            let report = Report {
                driver_available: false,
                driver_version: None,
                cuda_version: None,
                nvrtc_version,
                devices: Vec::new(),
                note: Some(note.into()),
            };
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            println!("{note}");
        }
        return Ok(());
    }
    let count = gpu::device_count()?;
    let cuda_version = gpu::driver_version().ok().map(|(a, b)| format!("{a}.{b}"));
    let driver_version = power::driver_versions().map(|(d, _)| d);
    let mut devices = Vec::new();
    for ordinal in 0..count {
        let gpu = Gpu::open(ordinal)?;
        let uuid = power::uuid_of(&gpu).unwrap_or_default();
        let (energy_counter, instant_power, nvml_note) = match PowerMeter::open(&uuid) {
            Ok(meter) => (
                meter.energy_mj().is_some(),
                meter.instant_power_w().is_some(),
                None,
            ),
            Err(note) => (false, false, Some(note)),
        };
        devices.push(Device {
            info: gpu.info.clone(),
            uuid,
            energy_counter,
            instant_power,
            nvml_note,
        });
    }
    let report = Report {
        driver_available: true,
        driver_version,
        cuda_version,
        nvrtc_version,
        note: (count == 0).then(|| "the CUDA driver is present but sees no GPU".to_string()),
        devices,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "driver {} (CUDA {}), NVRTC {}",
        report.driver_version.as_deref().unwrap_or("?"),
        report.cuda_version.as_deref().unwrap_or("?"),
        report.nvrtc_version.as_deref().unwrap_or("not available")
    );
    if let Some(note) = &report.note {
        println!("{note}");
    }
    for d in &report.devices {
        let i = &d.info;
        println!(
            "GPU {}: {} ({}), {} SMs, {:.1} GiB, max {} threads/block, {} KiB shared/block ({} KiB opt-in)",
            i.ordinal,
            i.name,
            i.arch,
            i.sm_count,
            i.total_memory_bytes as f64 / (1u64 << 30) as f64,
            i.max_threads_per_block,
            i.max_shared_bytes_per_block / 1024,
            i.max_shared_bytes_per_block_optin / 1024
        );
        println!(
            "       energy counter: {}, instant power: {}{}",
            yes_no(d.energy_counter),
            yes_no(d.instant_power),
            d.nvml_note
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        );
    }
    Ok(())
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}
