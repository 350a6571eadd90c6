//! [`GpuConfig`]: the closed set of the families' GPU parameter types (serde-tagged by family,
//! so a job travels to the measuring worker and back as one JSON object). Registering a
//! family is one line in the `families!` list at the bottom of this file; nothing in the tuner
//! names a family's GPU types.

use kernels::gpu::{DeviceInfo, Gpu};
use kernels::{KernelCache, KernelError, Variant};
use serde::{Deserialize, Serialize};

use super::workload::{CompileTarget, GpuWorkload, PointValues, PreparedRun, SolveFlag};
use crate::family::{Family, Instance};

macro_rules! families {
    ($($family:ident => $params:ty),* $(,)?) => {
        /// A GPU configuration of any family with GPU kernels.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "family", rename_all = "kebab-case")]
        pub enum GpuConfig {
            $($family($params)),*
        }

        /// The families that have GPU kernels.
        pub const GPU_FAMILIES: &[Family] = &[$(Family::$family),*];

        impl GpuConfig {
            /// The configuration a point asks for in `family`.
            pub fn from_point(family: Family, point: &dyn PointValues) -> Result<GpuConfig, String> {
                match family {
                    $(Family::$family => <$params>::from_point(point).map(GpuConfig::$family),)*
                    #[allow(unreachable_patterns)]
                    other => Err(no_gpu(other)),
                }
            }

            /// The `mats solve` flags `family`'s GPU solver takes.
            pub fn solve_flags(family: Family) -> Result<&'static [SolveFlag], String> {
                match family {
                    $(Family::$family => Ok(<$params as GpuWorkload>::SOLVE_FLAGS),)*
                    #[allow(unreachable_patterns)]
                    other => Err(no_gpu(other)),
                }
            }

            /// The variants `mats solve` may run in `family` without being told, by instance.
            pub fn instance_variants(family: Family) -> Result<&'static [&'static str], String> {
                match family {
                    $(Family::$family => Ok(<$params as GpuWorkload>::INSTANCE_VARIANTS),)*
                    #[allow(unreachable_patterns)]
                    other => Err(no_gpu(other)),
                }
            }

            /// The point `mats solve` starts from in `family`.
            pub fn solve_defaults(
                family: Family,
            ) -> Result<&'static [(&'static str, &'static str)], String> {
                match family {
                    $(Family::$family => Ok(<$params as GpuWorkload>::SOLVE_DEFAULTS),)*
                    #[allow(unreachable_patterns)]
                    other => Err(no_gpu(other)),
                }
            }

            pub fn family(&self) -> Family {
                match self { $(GpuConfig::$family(_) => Family::$family),* }
            }

            pub fn variant_name(&self) -> &'static str {
                match self { $(GpuConfig::$family(p) => p.variant_name()),* }
            }

            pub fn shape(&self) -> (u32, u32) {
                match self { $(GpuConfig::$family(p) => p.shape()),* }
            }

            pub fn flags(&self) -> &[String] {
                match self { $(GpuConfig::$family(p) => p.flags()),* }
            }

            pub fn check(&self, inst: &Instance, device: &DeviceInfo) -> Result<(), String> {
                match (self, inst) {
                    $((GpuConfig::$family(p), Instance::$family(i)) => p.check(i, device),)*
                    #[allow(unreachable_patterns)]
                    _ => Err(self.mismatch(inst)),
                }
            }

            /// The family's better default variant for `inst`, if the default one is not it
            /// ([`GpuWorkload::instance_variant`]).
            pub fn instance_variant(&self, inst: &Instance, device: &DeviceInfo) -> Option<&'static str> {
                match (self, inst) {
                    $((GpuConfig::$family(p), Instance::$family(i)) => p.instance_variant(i, device),)*
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }

            pub fn kernel_variant(
                &self,
                inst: &Instance,
                target: CompileTarget,
            ) -> Result<Variant, String> {
                match (self, inst) {
                    $((GpuConfig::$family(p), Instance::$family(i)) => {
                        Ok(p.kernel_variant(i, target))
                    })*
                    #[allow(unreachable_patterns)]
                    _ => Err(self.mismatch(inst)),
                }
            }

            pub fn prepare(
                &self,
                gpu: &Gpu,
                cache: &KernelCache,
                inst: &Instance,
            ) -> Result<Box<dyn PreparedRun>, KernelError> {
                match (self, inst) {
                    $((GpuConfig::$family(p), Instance::$family(i)) => p.prepare(gpu, cache, i),)*
                    #[allow(unreachable_patterns)]
                    _ => Err(KernelError::InvalidConfig(self.mismatch(inst))),
                }
            }
        }
    };
}

impl GpuConfig {
    fn mismatch(&self, inst: &Instance) -> String {
        format!(
            "a {} GPU configuration cannot run {} (a {} instance)",
            self.family(),
            inst.name(),
            inst.family()
        )
    }
}

fn no_gpu(family: Family) -> String {
    let with: Vec<&str> = GPU_FAMILIES.iter().map(|f| f.name()).collect();
    format!(
        "the {family} family has no GPU solver yet (GPU families: {}); run it on the CPU",
        with.join(", ")
    )
}

// The registry: one line per family with GPU kernels.
families! {
    Qap => crate::qap::gpu::GpuParams,
    Pfsp => crate::pfsp::gpu::GpuParams,
    Hwsw => crate::hwsw::gpu::GpuParams,
    Tsp => crate::tsp::gpu::GpuParams,
}
