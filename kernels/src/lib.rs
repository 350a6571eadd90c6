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

pub use cache::{compiles_running, CacheStatus, KernelCache};
pub use error::KernelError;
pub use nvrtc::Compiled;
pub use resources::Resources;
pub use source::KernelSource;
pub use variant::{Arch, Variant};

/// Turns off the CUDA driver's compute cache for this process (unless the user set
/// `CUDA_CACHE_DISABLE` themselves).
///
/// Where a driver is installed, NVRTC hands PTX to that cache, and a compile served from it
/// comes back without ptxas' resource report (registers, spills), which every trial records
/// (seen on the H100 machines). [`KernelCache`] keeps compiled variants instead. Runs before
/// the first load of libcuda or libnvrtc (both presence checks call it); a binary should also
/// call it first thing in `main`, before it starts threads.
pub fn disable_driver_compute_cache() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("CUDA_CACHE_DISABLE").is_none() {
            std::env::set_var("CUDA_CACHE_DISABLE", "1");
        }
    });
}
