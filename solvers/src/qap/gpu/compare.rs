//! GPU rots-block against the CPU Ro-TS at equal wall time (`mats bench qap --compare`): per
//! instance and seed, the gap to the best-known value of each, both answers re-scored on the
//! CPU; the caller prints mean ± sd.

use std::time::Duration;

use kernels::gpu::Gpu;
use kernels::{KernelCache, KernelError};

use super::{prepare, GpuParams};
use crate::qap::{robust_tabu, Instance, RotsParams};
use crate::run::{Budget, RunOptions, Trace};

/// One instance's figures: gaps in percent, one per seed, in seed order.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EqualTime {
    pub instance: String,
    pub n: usize,
    pub best_known: i64,
    pub seconds: f64,
    pub seeds: Vec<u64>,
    /// rots-block with `params` (default: the `mats solve --backend gpu` configuration).
    pub gpu_gaps: Vec<f64>,
    /// Taillard's Ro-TS (tenure 0.9-1.1 n, aspiration 2 n^2), one start per CPU thread, all
    /// threads, the same wall time.
    pub cpu_gaps: Vec<f64>,
    /// The GPU's own search on the CPU (iterated Ro-TS with rots-block's defaults,
    /// [`RotsParams::gpu_defaults`]), one trajectory per thread, all threads, the same wall
    /// time: the same algorithm on both sides.
    pub cpu_iterated_gaps: Vec<f64>,
    /// Time to the same quality, per seed: when each CPU search found its final best
    /// (seconds from its start), and when rots-block first reached that cost (`None`: not
    /// within the wall time). From the runs' traces ([`crate::run::Trace`]).
    pub cpu_found_s: Vec<f64>,
    pub gpu_to_cpu_s: Vec<Option<f64>>,
    pub cpu_iterated_found_s: Vec<f64>,
    pub gpu_to_cpu_iterated_s: Vec<Option<f64>>,
    pub cpu_threads: usize,
    /// The rots-block kernel's layout and resident blocks per SM.
    pub layout: String,
    pub blocks: u32,
    pub blocks_per_sm: Option<u32>,
}

/// Mean and sample standard deviation (0 for fewer than two values).
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    if values.len() < 2 {
        return (mean, 0.0);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64;
    (mean, var.sqrt())
}

fn gap(cost: i64, best: i64) -> f64 {
    crate::bks::gap_percent(cost, best).unwrap_or(0.0)
}

/// Runs the three for `seconds` of wall time per seed (GPU first, then Taillard's Ro-TS on the
/// CPU, then the iterated one, never two at once).
#[allow(clippy::too_many_arguments)]
pub fn equal_time(
    gpu: &Gpu,
    cache: &KernelCache,
    inst: &Instance,
    best_known: i64,
    params: &GpuParams,
    seconds: f64,
    seeds: &[u64],
    cpu_threads: usize,
) -> Result<EqualTime, KernelError> {
    let limit = Duration::from_secs_f64(seconds);
    let prepared = prepare(gpu, cache, inst, params)?;
    let layout = prepared
        .rots_kernel()
        .map(|k| k.layout().name().to_string())
        .unwrap_or_else(|| params.algorithm.name().to_string());
    let mut out = EqualTime {
        instance: inst.name.clone(),
        n: inst.n(),
        best_known,
        seconds,
        seeds: seeds.to_vec(),
        gpu_gaps: Vec::new(),
        cpu_gaps: Vec::new(),
        cpu_iterated_gaps: Vec::new(),
        cpu_found_s: Vec::new(),
        gpu_to_cpu_s: Vec::new(),
        cpu_iterated_found_s: Vec::new(),
        gpu_to_cpu_iterated_s: Vec::new(),
        cpu_threads,
        layout,
        blocks: prepared.launch().grid.0,
        blocks_per_sm: prepared.blocks_per_sm(),
    };
    let traced = || Budget {
        trace: Some(Trace::new()),
        ..Budget::time_limit(limit)
    };
    for &seed in seeds {
        let options = RunOptions {
            seed,
            threads: 1,
            budget: traced(),
        };
        let run = prepared.run(gpu, params, &options)?;
        let gpu_trace = options.budget.trace.as_ref().map(Trace::points);
        crate::permutation::check(&run.outcome.solution, inst.n()).map_err(|e| {
            KernelError::InvalidConfig(format!("{}: the GPU's answer: {e}", inst.name))
        })?;
        let cost = inst.cost(&run.outcome.solution);
        if cost != run.outcome.objective {
            return Err(KernelError::InvalidConfig(format!(
                "{}: the GPU reported {} for a solution that costs {cost}",
                inst.name, run.outcome.objective
            )));
        }
        out.gpu_gaps.push(gap(cost, best_known));
        // The CPU's answer, and when it was found and when the GPU first matched it.
        let on_all_cores = |params: RotsParams| {
            let options = RunOptions {
                seed,
                threads: cpu_threads,
                budget: traced(),
            };
            let cpu = robust_tabu(
                inst,
                &RotsParams {
                    starts: cpu_threads,
                    ..params
                },
                &options,
            );
            let cost = inst.cost(&cpu.solution);
            let found = options
                .budget
                .trace
                .as_ref()
                .and_then(|t| t.points().last().map(|p| p.0.as_secs_f64()))
                .unwrap_or(seconds);
            let matched = gpu_trace
                .as_deref()
                .and_then(|t| first_at_or_below(t, cost));
            (gap(cost, best_known), found, matched)
        };
        let (g, found, matched) = on_all_cores(RotsParams::default());
        out.cpu_gaps.push(g);
        out.cpu_found_s.push(found);
        out.gpu_to_cpu_s.push(matched);
        let (g, found, matched) = on_all_cores(RotsParams::gpu_defaults(inst.n()));
        out.cpu_iterated_gaps.push(g);
        out.cpu_iterated_found_s.push(found);
        out.gpu_to_cpu_iterated_s.push(matched);
    }
    Ok(out)
}

/// Seconds to the first point of a trace at or below `cost`.
pub fn first_at_or_below(trace: &[(Duration, i64)], cost: i64) -> Option<f64> {
    trace
        .iter()
        .find(|&&(_, v)| v <= cost)
        .map(|(at, _)| at.as_secs_f64())
}

/// The ratio of the CPU's time to its answer over the GPU's time to the same cost, per seed
/// where the GPU got there; their geometric mean (a ratio's average), and how many seeds had
/// one.
pub fn speedup(cpu_found_s: &[f64], gpu_matched_s: &[Option<f64>]) -> (Option<f64>, usize) {
    let ratios: Vec<f64> = cpu_found_s
        .iter()
        .zip(gpu_matched_s)
        .filter_map(|(&c, g)| g.filter(|&g| g > 0.0 && c > 0.0).map(|g| c / g))
        .collect();
    let mean = (!ratios.is_empty())
        .then(|| (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp());
    (mean, ratios.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_to_the_same_cost() {
        let ms = Duration::from_millis;
        let trace = [(ms(10), 100), (ms(40), 90), (ms(900), 80)];
        assert_eq!(first_at_or_below(&trace, 95), Some(0.04));
        assert_eq!(first_at_or_below(&trace, 80), Some(0.9));
        assert_eq!(first_at_or_below(&trace, 79), None);
        // Ratios 8 and 2: geometric mean 4; the seed the GPU never matched is left out.
        let (mean, seeds) = speedup(&[8.0, 4.0, 3.0], &[Some(1.0), Some(2.0), None]);
        assert!((mean.unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(seeds, 2);
        assert_eq!(speedup(&[1.0], &[None]), (None, 0));
    }

    #[test]
    fn mean_and_sample_sd() {
        let (m, s) = mean_sd(&[1.0, 2.0, 3.0, 4.0]);
        assert!((m - 2.5).abs() < 1e-12);
        assert!((s - (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(mean_sd(&[7.0]), (7.0, 0.0));
        assert!(mean_sd(&[]).0.is_nan());
    }
}
