//! CUDA sources of the mats solver variants and their run-time compilation with NVRTC.
//!
//! Layers, from the bottom: [`source`] (the embedded `.cu` files), [`variant`] (source +
//! defines + flags + arch), [`nvrtc`] (compile to CUBIN, resource report), [`cache`] (compile
//! once across runs). Loading and launching on a GPU live in [`gpu`].

pub mod cache;
pub mod error;
pub mod gpu;
pub mod nvrtc;
pub mod resources;
pub mod source;
pub mod variant;

pub use cache::{CacheStatus, KernelCache};
pub use error::KernelError;
pub use nvrtc::Compiled;
pub use resources::Resources;
pub use source::KernelSource;
pub use variant::{Arch, Variant};
