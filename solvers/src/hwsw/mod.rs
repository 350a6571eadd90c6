//! Hardware/software partitioning (Arató et al.'s problem P) with the tabu search of Hou et
//! al. (GPTS's CPU reference, STS).
//!
//! - [`instance`], the model, exact costs and the plain-text format;
//! - [`generator`], the random task-graph generator of the paper;
//! - [`delta`], incremental 2-flip evaluation;
//! - [`mod@tabu`], the tabu search STS;
//! - [`features`], features and the CCR x R x size class;
//! - [`reference`], reference values of generated graphs (a long 1-flip and swap tabu search);
//! - [`gpu`], the host side of the GPU variants (GPTS and gpts-multi, `kernels/hwsw/`).

pub mod delta;
pub mod features;
pub mod generator;
pub mod gpu;
pub mod instance;
pub mod reference;
pub mod tabu;

pub use features::{CcrLevel, Class, Features, SizeBand};
pub use generator::{generate, GeneratorSpec, RLevel};
pub use instance::{looks_like_hwsw, parse, read, Costs, Instance};
pub use tabu::{sts, sts_traced, StsParams, DEFAULT_STS_ITERATIONS};
