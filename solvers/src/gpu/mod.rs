//! The family-neutral GPU workload: what the tuner (runner, compile pool, worker, export) and
//! `mats solve` speak to, whatever the problem family. [`workload`] holds the traits each
//! family implements in its own `gpu` module; [`registry`] lists the families;
//! [`solve_flags`] turns `mats solve`'s flags into a family's point.

pub mod adapt;
pub mod device_island;
pub mod islands;
pub mod launches;
pub mod registry;
pub mod solve_flags;
pub mod stalls;
pub mod workload;

pub use registry::{GpuConfig, GPU_FAMILIES};
pub use workload::*;

/// The value of `all` whose name is `name`: how a variant, layout or update rule is read from
/// a flag, a space or a bundle; the error lists every known name.
pub fn by_name<T: Copy>(
    all: &[T],
    name: &str,
    what: &str,
    name_of: fn(T) -> &'static str,
) -> Result<T, String> {
    all.iter()
        .copied()
        .find(|v| name_of(*v) == name)
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|v| name_of(*v)).collect();
            format!("unknown {what} {name:?}; known: {}", names.join(", "))
        })
}

#[cfg(test)]
mod tests {
    /// Every variant, layout and update rule reads back from its name, and an unknown name's
    /// error lists them all.
    #[test]
    fn every_named_choice_reads_back_from_its_name() {
        use crate::{hwsw, pfsp, qap, tsp};
        macro_rules! round_trip {
            ($t:ty, $what:expr) => {
                for v in <$t>::ALL {
                    assert_eq!(<$t>::from_name(v.name()), Ok(v));
                }
                let e = <$t>::from_name("nope").unwrap_err();
                let names: Vec<&str> = <$t>::ALL.iter().map(|v| v.name()).collect();
                assert_eq!(
                    e,
                    format!("unknown {} \"nope\"; known: {}", $what, names.join(", "))
                );
            };
        }
        round_trip!(qap::gpu::GpuAlgorithm, "qap GPU algorithm");
        round_trip!(qap::gpu::RotsLayout, "rots-block layout");
        round_trip!(pfsp::gpu::GpuAlgorithm, "pfsp GPU algorithm");
        round_trip!(hwsw::gpu::GpuAlgorithm, "hwsw GPU algorithm");
        round_trip!(tsp::gpu::Construction, "tsp construction variant");
        round_trip!(tsp::gpu::PheromoneUpdate, "pheromone update");
        round_trip!(tsp::gpu::TspGpuAlgorithm, "tsp GPU algorithm");
    }
}
