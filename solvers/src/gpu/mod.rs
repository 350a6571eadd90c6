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
