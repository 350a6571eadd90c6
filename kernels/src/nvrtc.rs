//! Compiling a variant with NVRTC straight to CUBIN for the target architecture.
//!
//! Going to CUBIN (not PTX) means ptxas runs here, so ptxas flags take effect and the resource
//! report is available before anything is loaded; NVRTC needs no GPU for it, which is how CI
//! compile-checks every kernel.

use std::ffi::{c_char, c_int, CString};
use std::sync::OnceLock;
use std::time::Instant;

use cudarc::nvrtc::{result, sys};
use serde::{Deserialize, Serialize};

use crate::error::KernelError;
use crate::resources::{parse_report, Resources};
use crate::variant::Variant;

/// Whether libnvrtc can be loaded. cudarc panics on a missing library, so every NVRTC use
/// goes through this check first.
pub fn available() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        crate::disable_driver_compute_cache();
        // SAFETY: only tries to dlopen the library by its candidate names.
        unsafe { sys::is_culib_present() }
    })
}

/// NVRTC's version, `(major, minor)`.
pub fn version() -> Result<(i32, i32), KernelError> {
    if !available() {
        return Err(KernelError::NvrtcMissing);
    }
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: plain out-parameters.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| KernelError::Nvrtc {
            call: "nvrtcVersion",
            source_id: String::new(),
            message: format!("{e:?}"),
        })?;
    Ok((major, minor))
}

/// A compiled variant: the CUBIN and what NVRTC and ptxas said about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compiled {
    pub variant: Variant,
    /// The options NVRTC was given.
    pub options: Vec<String>,
    /// The CUBIN; relocatable (needs a device link) when the source is.
    #[serde(skip)]
    pub cubin: Vec<u8>,
    /// The program log, ptxas' resource report included.
    pub log: String,
    pub resources: Vec<Resources>,
    pub relocatable: bool,
    /// How long NVRTC took (of the original compile, for a cache hit).
    pub compile_seconds: f64,
}

impl Compiled {
    /// The resources of one entry point.
    pub fn resources_of(&self, function: &str) -> Option<&Resources> {
        self.resources.iter().find(|r| r.function == function)
    }
}

/// Compiles each variant (no cache), on every core at once, answered in the order given.
/// Each NVRTC compile is one single-threaded program and distinct programs compile
/// concurrently, so a list of variants one after the other leaves all but one core idle.
pub fn compile_all(variants: &[Variant]) -> Vec<Result<Compiled, KernelError>> {
    use rayon::prelude::*;
    variants.par_iter().map(compile).collect()
}

/// Compiles a variant (no cache; see [`crate::cache`]).
///
/// Where a CUDA driver is installed, NVRTC hands PTX to the driver's compute cache
/// (`~/.nv/ComputeCache`), and a hit there comes back without ptxas' resource report (seen on
/// the H100 machines); [`crate::disable_driver_compute_cache`] turns that cache off before
/// NVRTC is first loaded.
pub fn compile(variant: &Variant) -> Result<Compiled, KernelError> {
    if !available() {
        return Err(KernelError::NvrtcMissing);
    }
    let source = variant
        .kernel_source()
        .map_err(KernelError::InvalidVariant)?;
    let options = variant
        .nvrtc_options()
        .map_err(KernelError::InvalidVariant)?;
    let nvrtc_error = |call: &'static str| {
        let source_id = source.id.to_string();
        move |e: result::NvrtcError| KernelError::Nvrtc {
            call,
            source_id,
            message: format!("{e:?}"),
        }
    };
    let text = CString::new(source.text)
        .map_err(|_| KernelError::InvalidVariant(format!("{} contains a NUL byte", source.path)))?;
    let name = CString::new(source.path).expect("embedded paths have no NUL");
    let started = Instant::now();
    // Headers are handed to NVRTC by name, so an include never reads a file from whatever
    // folder the process runs in.
    let header_names: Vec<CString> = source
        .headers
        .iter()
        .map(|(n, _)| CString::new(*n).expect("header names have no NUL"))
        .collect();
    let header_texts: Vec<CString> = source
        .headers
        .iter()
        .map(|(_, t)| CString::new(*t).expect("embedded headers have no NUL"))
        .collect();
    let name_ptrs: Vec<*const c_char> = header_names.iter().map(|c| c.as_ptr()).collect();
    let text_ptrs: Vec<*const c_char> = header_texts.iter().map(|c| c.as_ptr()).collect();
    let mut program: sys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: every pointer outlives the call; NVRTC copies the texts.
    unsafe {
        sys::nvrtcCreateProgram(
            &mut program,
            text.as_ptr(),
            name.as_ptr(),
            text_ptrs.len() as c_int,
            text_ptrs.as_ptr(),
            name_ptrs.as_ptr(),
        )
    }
    .result()
    .map_err(nvrtc_error("nvrtcCreateProgram"))?;
    // SAFETY: `program` is a live program until destroy_program below.
    let compiled = unsafe { result::compile_program(program, &options) };
    let compile_seconds = started.elapsed().as_secs_f64();
    let log = unsafe { result::get_program_log(program) }
        .map(|chars| c_chars_to_string(&chars))
        .unwrap_or_default();
    let cubin = match compiled {
        Ok(()) => unsafe { cubin_of(program) }.map_err(nvrtc_error("nvrtcGetCUBIN")),
        Err(_) => Err(KernelError::Compile {
            source_id: source.id.to_string(),
            options: options.clone(),
            log: log.clone(),
        }),
    };
    // SAFETY: the program is not used after this.
    let _ = unsafe { result::destroy_program(program) };
    Ok(Compiled {
        variant: variant.clone(),
        cubin: cubin?,
        resources: parse_report(&log),
        log,
        options,
        relocatable: source.relocatable,
        compile_seconds,
    })
}

unsafe fn cubin_of(program: sys::nvrtcProgram) -> Result<Vec<u8>, result::NvrtcError> {
    let mut size = 0usize;
    sys::nvrtcGetCUBINSize(program, &mut size).result()?;
    let mut cubin = vec![0u8; size];
    sys::nvrtcGetCUBIN(program, cubin.as_mut_ptr() as *mut c_char).result()?;
    Ok(cubin)
}

fn c_chars_to_string(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
