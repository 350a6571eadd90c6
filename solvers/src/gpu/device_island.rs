//! One island on one GPU: a family's prepared configuration behind [`Island`]. Each epoch is a
//! production run under the epoch's deadline which, where the variant can
//! (`PreparedRun::start_from`), continues the searches of the last epoch with its first ones
//! started from the exchanged elites; other variants run each epoch afresh from a seed of
//! their own.

use std::time::Instant;

use kernels::gpu::Gpu;
use kernels::KernelCache;

use super::islands::{DeviceFacts, Elite, EpochReport, Island};
use super::registry::GpuConfig;
use super::workload::GpuRun;
use super::workload::PreparedRun;
use crate::family::Instance;
use crate::run::{Budget, RunOptions};

pub struct DeviceIsland {
    gpu: Gpu,
    prepared: Box<dyn PreparedRun>,
    seed: u64,
    island: usize,
    facts: Option<DeviceFacts>,
    /// Whether the variant continues its searches across epochs and takes seeds.
    continues: bool,
    /// The whole solve's time limit, of which the first epoch's start construction takes its
    /// share (`Budget::start_basis`).
    start_basis: Option<std::time::Duration>,
}

impl DeviceIsland {
    /// Opens GPU `ordinal`, checks `config` against it and prepares the run (compile through
    /// `cache`, load, upload); errors name the GPU.
    pub fn open(
        ordinal: usize,
        config: &GpuConfig,
        cache: &KernelCache,
        inst: &Instance,
        seed: u64,
        island: usize,
    ) -> Result<DeviceIsland, String> {
        let on = |e: String| format!("GPU {ordinal}: {e}");
        let gpu = Gpu::open(ordinal).map_err(|e| on(e.to_string()))?;
        config.check(inst, &gpu.info).map_err(on)?;
        let mut prepared = config
            .prepare(&gpu, cache, inst)
            .map_err(|e| on(e.to_string()))?;
        let continues = prepared.start_from(&[]);
        Ok(DeviceIsland {
            gpu,
            prepared,
            seed,
            island,
            facts: None,
            continues,
            start_basis: None,
        })
    }

    /// The island's first epoch builds its start as a run of `limit` would (the solve's time
    /// limit; the epoch's own deadline still ends it).
    pub fn with_start_basis(mut self, limit: std::time::Duration) -> DeviceIsland {
        self.start_basis = Some(limit);
        self
    }

    fn facts_of(&self, run: &GpuRun) -> DeviceFacts {
        DeviceFacts {
            device: format!("{} ({})", self.gpu.info.name, self.gpu.info.arch),
            blocks: run.launch.grid.0,
            threads_per_block: run.launch.block.0,
            registers: run.attributes.registers,
            local_bytes_per_thread: run.attributes.local_bytes_per_thread,
            cache: format!("{:?}", run.cache).to_lowercase(),
            layout: run.layout.clone(),
            blocks_per_sm: run.blocks_per_sm,
        }
    }
}

impl Island for DeviceIsland {
    fn run_epoch(
        &mut self,
        seeds: &[Elite],
        epoch: u32,
        deadline: Instant,
    ) -> Result<EpochReport, String> {
        let seeded = self.continues && !seeds.is_empty();
        if seeded {
            let starts: Vec<Vec<usize>> = seeds.iter().map(|e| e.solution.clone()).collect();
            self.prepared.start_from(&starts);
        }
        let options = RunOptions {
            seed: epoch_seed(self.seed, self.island, epoch),
            threads: 1,
            budget: Budget {
                iterations: None,
                time_limit: Some(deadline.saturating_duration_since(Instant::now())),
                target: None,
                trace: None,
                start_basis: self.start_basis.filter(|_| epoch == 0),
            },
        };
        let run = self
            .prepared
            .run(&self.gpu, &options)
            .map_err(|e| format!("GPU run of island {} (epoch {epoch}): {e}", self.island))?;
        if self.facts.is_none() {
            self.facts = Some(self.facts_of(&run));
        }
        Ok(EpochReport {
            best: Some((run.outcome.solution, run.outcome.objective)),
            iterations: run.outcome.iterations,
            evaluations: run.outcome.evaluations,
            launches: u64::from(run.launches),
            kernel_seconds: run.kernel_seconds,
            seeded,
        })
    }

    fn facts(&self) -> Option<DeviceFacts> {
        self.facts.clone()
    }
}

/// The seed of an island's epoch: the user's seed for island 0's first epoch (so one island
/// with one epoch is today's single-GPU run), and a distinct stream for every other pair, so
/// the searches an island does not seed from elites draw new starts each epoch.
pub fn epoch_seed(seed: u64, island: usize, epoch: u32) -> u64 {
    if island == 0 && epoch == 0 {
        return seed;
    }
    // SplitMix64's finaliser over (island, epoch): distinct inputs give distinct outputs.
    let mut z = ((island as u64) << 32 | u64::from(epoch)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    seed ^ (z ^ (z >> 31))
}

#[cfg(test)]
mod tests {
    use super::epoch_seed;

    #[test]
    fn epoch_seeds_keep_the_users_seed_first_and_differ_otherwise() {
        assert_eq!(epoch_seed(42, 0, 0), 42);
        let mut seen = std::collections::HashSet::new();
        for island in 0..8 {
            for epoch in 0..64 {
                assert!(
                    seen.insert(epoch_seed(42, island, epoch)),
                    "({island}, {epoch})"
                );
            }
        }
    }
}
