//! CSV and JSON dumps of a store, for analysis outside mats (pandas, R, a spreadsheet).
//! The formats are documented in `docs/results.md`; change both together.

use std::collections::BTreeSet;
use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::record::{CampaignRow, EvaluationRow, ExportRow, InstanceRow, RunRow, TrialRow};
use crate::store::Store;

/// `format` field of a JSON dump: tells a mats dump from any other JSON file.
pub const DUMP_FORMAT: &str = "mats-results";

/// Version of the JSON dump layout; bumped when a field changes meaning or disappears (new
/// fields may appear without a bump).
pub const DUMP_VERSION: u32 = 1;

/// Error of the CSV and JSON writers (I/O, or a value the format cannot hold).
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Writing CSV failed (usually I/O underneath).
    #[error("writing CSV: {0}")]
    Csv(#[from] csv::Error),
    /// Writing JSON failed (I/O underneath, or a map key that is not a string).
    #[error("writing JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Flushing the writer failed.
    #[error("writing: {0}")]
    Io(#[from] std::io::Error),
}

/// Everything the store knows about one campaign, as one serializable value: the JSON export.
/// Lists are in the store's order (by id; evaluations by run and `seq`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoreDump {
    /// Always `DUMP_FORMAT`.
    pub format: String,
    /// `DUMP_VERSION` of the writer.
    pub version: u32,
    /// The campaign: name, configuration, settings.
    pub campaign: CampaignRow,
    /// Its instances with their ids.
    pub instances: Vec<InstanceRow>,
    /// Its search runs.
    pub runs: Vec<RunRow>,
    /// Every trial, every status and attempt, with point and instance.
    pub trials: Vec<TrialRow>,
    /// Every evaluation of every run.
    pub evaluations: Vec<EvaluationRow>,
    /// The exported point per class and preference.
    pub exports: Vec<ExportRow>,
}

impl StoreDump {
    /// Reads everything about `campaign` from `store`.
    ///
    /// The reads are separate statements, so a dump taken while a tuner writes may show a
    /// trial whose evaluation is not there yet; each row is still whole.
    pub fn load(store: &Store, campaign: &CampaignRow) -> Result<StoreDump> {
        Ok(StoreDump {
            format: DUMP_FORMAT.to_string(),
            version: DUMP_VERSION,
            campaign: campaign.clone(),
            instances: store.instances(campaign.id)?,
            runs: store.runs(campaign.id)?,
            trials: store.trials(campaign.id)?,
            evaluations: store.evaluations(campaign.id)?,
            exports: store.exports(campaign.id)?,
        })
    }
}

/// Columns of the CSV before the parameters.
const HEAD: [&str; 11] = [
    "trial",
    "point_id",
    "instance",
    "class",
    "seed",
    "device",
    "status",
    "attempt",
    "started_at",
    "ended_at",
    "point",
];

/// Measurement columns of the CSV, after the parameters, in `Measurement`'s field order.
pub const MEASUREMENT_COLUMNS: [&str; 22] = [
    "time_s",
    "time_spread",
    "power_w",
    "energy_j",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "temperature_c",
    "throttle",
    "registers",
    "spills",
    "shared_bytes",
    "compile_s",
    "cache_hit",
    "objective",
    "gap_percent",
    "run_s",
    "kernel_s",
    "measure_s",
    "target_s",
    "iterations",
    "moves",
    "launches",
];

/// Writes one CSV row per trial: identification columns, then one `p.<name>` column per
/// parameter (the union over all points, by name; empty where a point lacks it), then the
/// measurement columns (empty when not measured), then `log` last because it is long and
/// multi-line. Floats are written in Rust's shortest round-trip form.
pub fn write_csv<W: Write>(trials: &[TrialRow], writer: W) -> Result<(), ExportError> {
    let params: BTreeSet<&str> = trials
        .iter()
        .flat_map(|t| t.point.0.keys().map(String::as_str))
        .collect();
    let mut out = csv::Writer::from_writer(writer);
    let header = HEAD
        .iter()
        .map(|h| h.to_string())
        .chain(params.iter().map(|p| format!("p.{p}")))
        .chain(MEASUREMENT_COLUMNS.iter().map(|h| h.to_string()))
        .chain(std::iter::once("log".to_string()));
    out.write_record(header)?;
    for t in trials {
        let m = &t.measurement;
        let mut row: Vec<String> = vec![
            t.id.to_string(),
            t.point_id.to_string(),
            t.instance.clone(),
            t.class.clone(),
            t.seed.to_string(),
            t.device.clone(),
            t.status.as_str().to_string(),
            t.attempt.to_string(),
            t.started_at.clone(),
            opt(&t.ended_at),
            t.point.key(),
        ];
        row.extend(
            params
                .iter()
                .map(|p| t.point.get(p).map(|v| v.to_string()).unwrap_or_default()),
        );
        row.extend([
            opt(&m.time_s),
            opt(&m.time_spread),
            opt(&m.power_w),
            opt(&m.energy_j),
            opt(&m.sm_clock_mhz),
            opt(&m.mem_clock_mhz),
            opt(&m.temperature_c),
            opt(&m.throttle),
            opt(&m.registers),
            opt(&m.spills),
            opt(&m.shared_bytes),
            opt(&m.compile_s),
            opt(&m.cache_hit),
            opt(&m.objective),
            opt(&m.gap_percent),
            opt(&m.run_s),
            opt(&m.kernel_s),
            opt(&m.measure_s),
            opt(&m.target_s),
            opt(&m.iterations),
            opt(&m.moves),
            opt(&m.launches),
            t.log.clone(),
        ]);
        out.write_record(&row)?;
    }
    out.flush()?;
    Ok(())
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(T::to_string).unwrap_or_default()
}

/// Writes `dump` as pretty-printed JSON (format in `docs/results.md`), with a final newline.
pub fn write_json<W: Write>(dump: &StoreDump, mut writer: W) -> Result<(), ExportError> {
    serde_json::to_writer_pretty(&mut writer, dump)?;
    writer.write_all(b"\n")?;
    writer.flush()?;
    Ok(())
}

/// Writes just the trials as a JSON array of `TrialRow`, for callers that filtered them.
pub fn write_trials_json<W: Write>(trials: &[TrialRow], mut writer: W) -> Result<(), ExportError> {
    serde_json::to_writer_pretty(&mut writer, trials)?;
    writer.write_all(b"\n")?;
    writer.flush()?;
    Ok(())
}
