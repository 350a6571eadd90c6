//! A campaign's setup: which backend it measures on (`[gpu]` or `[cpu]`), and that table's
//! space, baseline and default point, resolved and checked against each other.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use results::Point;
use search::space::Space;

use super::config::{point_from_table, BackendChoice, CampaignFile, SetupConfig};

/// Where a campaign's trials are measured (`backend = "auto"` resolved on this machine).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    Gpu,
    Cpu,
}

impl BackendKind {
    /// The name trials, settings and messages use; also the campaign table of its setup.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Gpu => "gpu",
            BackendKind::Cpu => "cpu",
        }
    }
}

/// One backend's table, resolved: its space loaded with its overrides, and its baseline and
/// default as points of that space.
#[derive(Debug, Clone)]
pub struct Setup {
    /// `gpu` or `cpu`: the table it came from (keys in messages and in the fingerprint).
    pub table: &'static str,
    pub space_path: PathBuf,
    pub space: Space,
    /// The point every speedup is measured against.
    pub baseline: Point,
    /// What `mats solve` runs untuned, for the holdouts' comparison.
    pub default_point: Option<Point>,
    /// Iterations of one fixed-work production run (`None`: the algorithm's default).
    pub iterations: Option<u64>,
    /// The table's `overrides` as the campaign wrote them (JSON; `null` without any): the
    /// fingerprint keeps them, since they change what a point realises to.
    pub overrides_as_written: serde_json::Value,
}

/// Whether this machine has a usable NVIDIA GPU.
pub fn gpu_present() -> bool {
    kernels::gpu::driver_available() && kernels::gpu::device_count().map(|n| n > 0).unwrap_or(false)
}

/// Which backend a campaign runs with (`gpu_present`: on this machine), and its table.
pub fn choose(file: &CampaignFile, gpu_present: bool) -> Result<(BackendKind, &SetupConfig)> {
    let c = &file.config;
    let kind = match c.backend {
        BackendChoice::Auto if gpu_present && c.gpu.is_some() => BackendKind::Gpu,
        BackendChoice::Auto if c.cpu.is_some() => BackendKind::Cpu,
        BackendChoice::Auto => bail!(
            "campaign {} has only a [gpu] setup, and this machine has no usable NVIDIA GPU \
             (no CUDA driver or no device); add a [cpu] table to tune the CPU solvers",
            file.path.display()
        ),
        BackendChoice::Gpu if !gpu_present => bail!(
            "campaign {} asks for backend \"gpu\", but this machine has no usable NVIDIA GPU \
             (no CUDA driver or no device)",
            file.path.display()
        ),
        BackendChoice::Gpu => BackendKind::Gpu,
        BackendChoice::Cpu => BackendKind::Cpu,
    };
    let setup = match kind {
        BackendKind::Gpu => c.gpu.as_ref(),
        BackendKind::Cpu => c.cpu.as_ref(),
    }
    .context("the chosen backend has no setup table")?;
    Ok((kind, setup))
}

/// One backend's table (`[gpu]` or `[cpu]`): its space loads with its overrides, and its
/// baseline and default are points of that space; errors name the key.
pub fn resolve(file: &CampaignFile, table: &'static str, setup: &SetupConfig) -> Result<Setup> {
    let (space_path, space) = load_space(file, table, setup)?;
    // The baseline and the default must be points of the space; errors name their key.
    let space_point = |key: &str, point: &toml::Table| -> Result<Point> {
        let key = format!("{table}.{key}");
        let p = point_from_table(point).map_err(|e| file.error_at(&key, e))?;
        if !search::SearchSpace::is_valid(&space, &p) {
            let why = space
                .why_invalid(&p)
                .unwrap_or_else(|| "it is not a point of the space".into());
            return Err(file.error_at(
                &key,
                format!(
                    "{p} is not a valid point of {}: {why}",
                    space_path.display()
                ),
            ));
        }
        Ok(p)
    };
    // A CPU point must also be one the family's solver takes (a knob its algorithm does not
    // read, a thread count beyond the pool's): else every trial of it fails after --check.
    let solver_point = |key: &str, p: Point| -> Result<Point> {
        let family = space
            .family()
            .and_then(|f| f.parse::<solvers::family::Family>().ok());
        if let (true, Some(family)) = (table == "cpu", family) {
            let realised = space
                .realise(&p)
                .map(crate::runner::Realised::from)
                .map_err(|e| file.error_at(&format!("{table}.{key}"), e))?;
            crate::runner::cpu::params(family, &realised)
                .map_err(|e| file.error_at(&format!("{table}.{key}"), format!("{p}: {e}")))?;
        }
        Ok(p)
    };
    // Every algorithm a CPU space offers must be one of its family's: a value the solver does
    // not know fails every trial of it after a clean --check.
    if let (true, Some(family)) = (
        table == "cpu",
        space
            .family()
            .and_then(|f| f.parse::<solvers::family::Family>().ok()),
    ) {
        let offered = space
            .param_info()
            .into_iter()
            .find(|p| p.name == "algorithm");
        let key = match setup.overrides.is_some() {
            true => format!("{table}.overrides"),
            false => format!("{table}.space"),
        };
        for value in offered.iter().flat_map(|p| &p.domain) {
            let name = value.to_string();
            family.algorithm(&name).map_err(|e| {
                file.error_at(
                    &key,
                    format!("{}: parameter `algorithm`: {e}", space_path.display()),
                )
            })?;
        }
        // Every value of every parameter must be one the solver takes: `starts = 0` in a
        // domain passed --check and failed each trial that drew it.
        for param in space.param_info() {
            for value in &param.domain {
                crate::runner::cpu::check_value(family, &param.name, value).map_err(|e| {
                    file.error_at(
                        &key,
                        format!(
                            "{}: parameter `{}` offers {value}, which the solver refuses: {e}",
                            space_path.display(),
                            param.name
                        ),
                    )
                })?;
            }
        }
    }
    let baseline = solver_point("baseline", space_point("baseline", &setup.baseline)?)?;
    let default_point = setup
        .default
        .as_ref()
        .map(|t| solver_point("default", space_point("default", t)?))
        .transpose()?;
    Ok(Setup {
        table,
        overrides_as_written: overrides_as_written(&file.text, table),
        space_path,
        space,
        baseline,
        default_point,
        iterations: setup.iterations,
    })
}

/// A table's space file with its overrides (an error in them names the key).
fn load_space(file: &CampaignFile, table: &str, setup: &SetupConfig) -> Result<(PathBuf, Space)> {
    let space_path = file.resolve(&setup.space);
    let mut space = Space::load(&space_path)
        .map_err(|e| file.error_at(&format!("{table}.space"), format!("{e:#}")))?;
    if let Some(overrides) = &setup.overrides {
        space = space
            .with_overrides(overrides)
            .map_err(|e| file.error_at(&format!("{table}.overrides"), format!("{e:#}")))?;
    }
    Ok((space_path, space))
}

/// `[TABLE.overrides]` as written in the campaign text (constants, domains, constraints).
fn overrides_as_written(text: &str, table: &str) -> serde_json::Value {
    toml::from_str::<toml::Table>(text)
        .ok()
        .and_then(|t| t.get(table)?.get("overrides").cloned())
        .map(|o| serde_json::to_value(o).unwrap_or(serde_json::Value::Null))
        .unwrap_or(serde_json::Value::Null)
}

/// Fixed-work objectives compare the time of the same work: refused when the space mixes
/// algorithm variants, whose iterations are different work.
pub fn check_same_work(space: &Space) -> Result<(), String> {
    for p in space.param_info() {
        if p.kind == search::ParamKind::Variant && p.domain.len() > 1 {
            let values: Vec<String> = p.domain.iter().map(ToString::to_string).collect();
            return Err(format!(
                "time, power and energy compare a fixed amount of work, but parameter `{}` \
                 mixes variants ({}) whose iterations are different work; use objective \
                 \"gap@budget\" (with [run] budget_s) or \"time-to-target\", or fix `{}` to \
                 one value in the space's overrides",
                p.name,
                values.join(", "),
                p.name
            ));
        }
    }
    Ok(())
}

/// The space a stored campaign searched (its file and overrides), rebuilt from the campaign
/// TOML the store keeps, for commands that read a campaign after the fact (export, the
/// strategy benchmark).
pub fn stored_space(campaign: &results::CampaignRow) -> Result<Space> {
    let settings = results::CampaignSettings::from_json(&campaign.settings);
    let origin = settings
        .campaign_file
        .as_deref()
        .context("the campaign's settings do not record its file")?;
    let file = CampaignFile::parse(Path::new(origin), campaign.config_toml.clone())?;
    let (table, setup) = match settings.backend.as_deref() {
        Some("gpu") => ("gpu", file.config.gpu.as_ref()),
        _ => ("cpu", file.config.cpu.as_ref()),
    };
    let setup = setup.context("the campaign has no setup for its backend")?;
    Ok(load_space(&file, table, setup)?.1)
}
