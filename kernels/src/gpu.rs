//! Loading compiled variants on a GPU, reading function attributes and occupancy, and naming
//! launch configurations in errors.
//!
//! Every entry point checks that the driver library is present first: cudarc panics when it
//! is missing, and a machine without a GPU must see one clear error instead.

use std::ffi::{c_void, CString};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use cudarc::driver::sys::{self, CUdevice_attribute, CUevent_flags, CUjitInputType, CUjit_option};
use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaModule, CudaStream, LaunchConfig};
use cudarc::nvrtc::Ptx;
use serde::{Deserialize, Serialize};

use crate::error::KernelError;
use crate::nvrtc::Compiled;
use crate::variant::Arch;

/// Whether libcuda can be loaded.
pub fn driver_available() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        crate::disable_driver_compute_cache();
        // SAFETY: only tries to dlopen the library by its candidate names.
        unsafe { sys::is_culib_present() }
    })
}

fn require_driver() -> Result<(), KernelError> {
    if driver_available() {
        Ok(())
    } else {
        Err(KernelError::DriverMissing)
    }
}

/// Number of CUDA devices (0 when the driver finds none).
pub fn device_count() -> Result<usize, KernelError> {
    require_driver()?;
    cudarc::driver::result::init().map_err(KernelError::driver("cuInit"))?;
    let count = CudaContext::device_count().map_err(KernelError::driver("cuDeviceGetCount"))?;
    Ok(count.max(0) as usize)
}

/// For tests that need a GPU: `true` when GPU 0 can be used; otherwise prints that `test`
/// skipped and why, and returns `false`. With `MATS_REQUIRE_GPU=1` (the GPU machine's test
/// script sets it) a missing GPU fails the test instead, so a run there cannot pass by
/// skipping.
pub fn test_gpu_or_skip(test: &str) -> bool {
    let why = if !driver_available() {
        "no CUDA driver on this machine".to_string()
    } else {
        match device_count() {
            Ok(n) if n > 0 => return true,
            Ok(_) => "the CUDA driver sees no GPU".to_string(),
            Err(e) => format!("the CUDA driver fails: {e}"),
        }
    };
    if std::env::var("MATS_REQUIRE_GPU").is_ok_and(|v| v == "1") {
        panic!("{test}: MATS_REQUIRE_GPU=1 but {why}");
    }
    println!("{test}: skipped: {why}");
    false
}

/// The CUDA driver's version, `(major, minor)`.
pub fn driver_version() -> Result<(i32, i32), KernelError> {
    require_driver()?;
    let mut version = 0;
    // SAFETY: plain out-parameter.
    unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .map_err(KernelError::driver("cuDriverGetVersion"))?;
    Ok((version / 1000, (version % 1000) / 10))
}

/// What the tuner needs to know about a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    pub arch: Arch,
    pub sm_count: u32,
    pub total_memory_bytes: u64,
    pub max_threads_per_block: u32,
    pub max_shared_bytes_per_block: u32,
    pub max_shared_bytes_per_block_optin: u32,
    pub clock_khz: u32,
}

/// An open device: its context and the stream all measurements run on.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    pub info: DeviceInfo,
}

impl Gpu {
    pub fn open(ordinal: usize) -> Result<Gpu, KernelError> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(KernelError::InvalidConfig(format!(
                "GPU {ordinal} does not exist ({count} found)"
            )));
        }
        let ctx = CudaContext::new(ordinal)
            .map_err(KernelError::driver(format!("opening GPU {ordinal}")))?;
        let attribute = |a: CUdevice_attribute| -> Result<u32, KernelError> {
            ctx.attribute(a)
                .map(|v| v.max(0) as u32)
                .map_err(KernelError::driver(format!("reading {a:?}")))
        };
        let (major, minor) = ctx
            .compute_capability()
            .map_err(KernelError::driver("reading the compute capability"))?;
        let info = DeviceInfo {
            ordinal,
            name: ctx
                .name()
                .map_err(KernelError::driver("reading the device name"))?,
            arch: Arch::from_capability(major, minor),
            sm_count: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            total_memory_bytes: ctx
                .total_mem()
                .map_err(KernelError::driver("reading the memory size"))?
                as u64,
            max_threads_per_block: attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            )?,
            max_shared_bytes_per_block: attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            )?,
            max_shared_bytes_per_block_optin: attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
            clock_khz: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)?,
        };
        let stream = ctx.default_stream();
        Ok(Gpu { ctx, stream, info })
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Loads a compiled variant, device-linking it first when it is relocatable.
    pub fn load(&self, compiled: &Compiled) -> Result<Module, KernelError> {
        let source_id = compiled.variant.source.clone();
        if compiled.variant.arch != self.info.arch {
            return Err(KernelError::InvalidVariant(format!(
                "{source_id} was compiled for {} but GPU {} is {}",
                compiled.variant.arch, self.info.ordinal, self.info.arch
            )));
        }
        let image = if compiled.relocatable {
            self.link(compiled)?
        } else {
            compiled.cubin.clone()
        };
        let module = self
            .ctx
            .load_module(Ptx::from_binary(image))
            .map_err(KernelError::driver(format!("loading {source_id}")))?;
        Ok(Module { module, source_id })
    }

    /// Links relocatable device code with libcudadevrt (dynamic parallelism).
    fn link(&self, compiled: &Compiled) -> Result<Vec<u8>, KernelError> {
        let source_id = compiled.variant.source.clone();
        let devrt = find_cudadevrt()?;
        let link_error =
            |call: &str, e: cudarc::driver::DriverError, log: &[u8]| KernelError::Link {
                source_id: source_id.clone(),
                message: format!(
                    "{call}: {e:?}; {}",
                    String::from_utf8_lossy(log).trim_end_matches('\0').trim()
                ),
            };
        self.ctx
            .bind_to_thread()
            .map_err(KernelError::driver("binding the context"))?;
        let mut log = vec![0u8; 16 * 1024];
        let mut options = [
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values = [log.as_mut_ptr() as *mut c_void, log.len() as *mut c_void];
        // A cached or bundled entry's id comes from a file: a NUL there is a damaged entry.
        let name = CString::new(source_id.clone()).map_err(|_| {
            KernelError::InvalidVariant(format!("source id {source_id:?} holds a NUL byte"))
        })?;
        let devrt_c = CString::new(devrt.to_string_lossy().into_owned())
            .map_err(|_| KernelError::InvalidVariant(format!("bad path {}", devrt.display())))?;
        // SAFETY: the link state lives until cuLinkDestroy; the image is copied out before.
        unsafe {
            let mut state: sys::CUlinkState = std::ptr::null_mut();
            sys::cuLinkCreate_v2(2, options.as_mut_ptr(), values.as_mut_ptr(), &mut state)
                .result()
                .map_err(|e| link_error("cuLinkCreate", e, &log))?;
            let result = (|| {
                sys::cuLinkAddData_v2(
                    state,
                    CUjitInputType::CU_JIT_INPUT_CUBIN,
                    compiled.cubin.as_ptr() as *mut c_void,
                    compiled.cubin.len(),
                    name.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
                .result()
                .map_err(|e| link_error("cuLinkAddData", e, &log))?;
                sys::cuLinkAddFile_v2(
                    state,
                    CUjitInputType::CU_JIT_INPUT_LIBRARY,
                    devrt_c.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
                .result()
                .map_err(|e| link_error("cuLinkAddFile(libcudadevrt.a)", e, &log))?;
                let mut image: *mut c_void = std::ptr::null_mut();
                let mut size = 0usize;
                sys::cuLinkComplete(state, &mut image, &mut size)
                    .result()
                    .map_err(|e| link_error("cuLinkComplete", e, &log))?;
                Ok(std::slice::from_raw_parts(image as *const u8, size).to_vec())
            })();
            let _ = sys::cuLinkDestroy(state);
            result
        }
    }
}

/// Where libcudadevrt.a is: `$CUDA_HOME`, `$CUDA_PATH`, then the usual install paths.
pub fn find_cudadevrt() -> Result<PathBuf, KernelError> {
    let mut roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect();
    roots.push(PathBuf::from("/usr/local/cuda"));
    let mut searched = Vec::new();
    for root in roots {
        for sub in ["lib64", "lib", "targets/x86_64-linux/lib"] {
            let candidate = root.join(sub).join("libcudadevrt.a");
            if candidate.is_file() {
                return Ok(candidate);
            }
            searched.push(candidate);
        }
    }
    Err(KernelError::DevRuntimeMissing { searched })
}

/// A loaded module.
pub struct Module {
    module: Arc<CudaModule>,
    source_id: String,
}

impl Module {
    pub fn function(&self, name: &str) -> Result<Kernel, KernelError> {
        let what = format!("{}::{name}", self.source_id);
        let function = self
            .module
            .load_function(name)
            .map_err(KernelError::driver(format!("looking up {what}")))?;
        let read = |v: Result<i32, cudarc::driver::DriverError>, attr: &str| {
            v.map(|x| x.max(0) as u32)
                .map_err(KernelError::driver(format!("reading {attr} of {what}")))
        };
        let attributes = FunctionAttributes {
            registers: read(function.num_regs(), "registers")?,
            local_bytes_per_thread: read(function.local_size_bytes(), "local memory")?,
            static_shared_bytes: read(function.shared_size_bytes(), "shared memory")?,
            max_threads_per_block: read(function.max_threads_per_block(), "max threads")?,
        };
        Ok(Kernel {
            function,
            name: what,
            attributes,
        })
    }
}

/// What the driver reports about a loaded function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionAttributes {
    pub registers: u32,
    /// Local memory per thread: spills and stack.
    pub local_bytes_per_thread: u32,
    pub static_shared_bytes: u32,
    /// The largest block this function can launch with, given its registers.
    pub max_threads_per_block: u32,
}

/// Kernel time by CUDA events around enqueued work, and the launches it counted: what every
/// GPU driver reports as its kernel seconds. One pair of events serves all the timings of a run.
pub struct KernelClock {
    start: CudaEvent,
    end: CudaEvent,
    /// Seconds between the events, summed.
    pub seconds: f64,
    pub launches: u64,
    /// Set by the driver: wall seconds of its search loop, beside the kernel seconds.
    pub search_seconds: f64,
}

impl KernelClock {
    pub fn new(gpu: &Gpu) -> Result<KernelClock, KernelError> {
        let event = || {
            gpu.context()
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(KernelError::driver("creating an event"))
        };
        Ok(KernelClock {
            start: event()?,
            end: event()?,
            seconds: 0.0,
            launches: 0,
            search_seconds: 0.0,
        })
    }

    /// Marks the start of timed work on the GPU's stream.
    pub fn start(&self, gpu: &Gpu) -> Result<(), KernelError> {
        self.start
            .record(gpu.stream())
            .map_err(KernelError::driver("recording an event"))
    }

    /// Marks the end, waits for the work (`what` names it in an error) and adds its time and
    /// `launches`.
    pub fn stop(&mut self, gpu: &Gpu, what: &str, launches: u64) -> Result<(), KernelError> {
        self.end
            .record(gpu.stream())
            .map_err(KernelError::driver("recording an event"))?;
        self.end.synchronize().map_err(KernelError::driver(what))?;
        let ms = self
            .start
            .elapsed_ms(&self.end)
            .map_err(KernelError::driver("reading an event"))?;
        self.seconds += f64::from(ms) / 1e3;
        self.launches += launches;
        Ok(())
    }

    /// Times `enqueue`, which launches `launches` kernels.
    pub fn timed<F>(
        &mut self,
        gpu: &Gpu,
        what: &str,
        launches: u64,
        enqueue: F,
    ) -> Result<(), KernelError>
    where
        F: FnOnce() -> Result<(), KernelError>,
    {
        self.start(gpu)?;
        enqueue()?;
        self.stop(gpu, what, launches)
    }
}

/// A kernel ready to launch.
pub struct Kernel {
    function: CudaFunction,
    /// `source::entry`, for messages.
    pub name: String,
    pub attributes: FunctionAttributes,
}

impl Kernel {
    /// The entry point's name (as ptxas reports it in [`crate::Resources`]).
    pub fn entry(&self) -> &str {
        self.name.rsplit("::").next().unwrap_or(&self.name)
    }

    pub fn function(&self) -> &CudaFunction {
        &self.function
    }

    /// Lets launches use `bytes` of dynamic shared memory. Above 48 KiB the driver wants the
    /// opt-in first, and the occupancy query counts it, so this comes before both.
    pub fn allow_shared_bytes(&self, bytes: usize) -> Result<(), KernelError> {
        if bytes <= 48 * 1024 {
            return Ok(());
        }
        let value = i32::try_from(bytes).map_err(|_| {
            KernelError::InvalidConfig(format!("{}: {bytes} bytes of shared memory", self.name))
        })?;
        self.function
            .set_attribute(
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                value,
            )
            .map_err(KernelError::driver(format!(
                "allowing {bytes} bytes of shared memory for {}",
                self.name
            )))
    }

    /// Resident blocks per SM for a block size and dynamic shared memory.
    pub fn blocks_per_sm(
        &self,
        block_threads: u32,
        dynamic_shared_bytes: u32,
    ) -> Result<u32, KernelError> {
        self.function
            .occupancy_max_active_blocks_per_multiprocessor(
                block_threads,
                dynamic_shared_bytes as usize,
                None,
            )
            .map_err(KernelError::driver(format!("occupancy of {}", self.name)))
    }

    /// Checks a launch against the function's limits before the driver sees it, so the error
    /// says which limit was broken.
    pub fn check_launch(&self, launch: &Launch) -> Result<(), KernelError> {
        let threads = launch.block.0 * launch.block.1 * launch.block.2;
        if threads == 0 || launch.grid.0 == 0 || launch.grid.1 == 0 || launch.grid.2 == 0 {
            return Err(KernelError::InvalidConfig(format!(
                "{}: empty launch {launch}",
                self.name
            )));
        }
        if threads > self.attributes.max_threads_per_block {
            return Err(KernelError::InvalidConfig(format!(
                "{}: {threads} threads per block exceed this build's limit of {} \
                 ({} registers per thread)",
                self.name, self.attributes.max_threads_per_block, self.attributes.registers
            )));
        }
        Ok(())
    }

    /// Wraps a driver error of a launch with the kernel and its configuration.
    pub fn launch_error(
        &self,
        launch: &Launch,
    ) -> impl FnOnce(cudarc::driver::DriverError) -> KernelError {
        KernelError::driver(format!("launching {} with {launch}", self.name))
    }
}

/// A launch configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Launch {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_bytes: u32,
}

impl Launch {
    pub fn linear(blocks: u32, threads: u32) -> Launch {
        Launch {
            grid: (blocks, 1, 1),
            block: (threads, 1, 1),
            shared_bytes: 0,
        }
    }

    pub fn config(&self) -> LaunchConfig {
        LaunchConfig {
            grid_dim: self.grid,
            block_dim: self.block,
            shared_mem_bytes: self.shared_bytes,
        }
    }
}

impl std::fmt::Display for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "grid ({}, {}, {}) x block ({}, {}, {}), {} B dynamic shared",
            self.grid.0,
            self.grid.1,
            self.grid.2,
            self.block.0,
            self.block.1,
            self.block.2,
            self.shared_bytes
        )
    }
}
