//! A kernel variant: one source with its `#define`s, compiler flags and target architecture.
//!
//! This is the unit the tuner compiles, caches and measures. The runtime owns the flags that
//! decide *what* is built (target arch, relocatable code, the resource report); the variant
//! carries only the flags that decide *how* (ptxas level, maxrregcount, fast math, ...).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::source::{self, KernelSource};

/// A compute capability as NVRTC spells it without the dot: 90 for sm_90.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Arch(pub u32);

impl Arch {
    /// Hopper (H100, H200): what CI compiles for when no GPU says otherwise.
    pub const SM90: Arch = Arch(90);

    pub fn from_capability(major: i32, minor: i32) -> Arch {
        Arch((major.max(0) * 10 + minor.max(0)) as u32)
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "sm_{}", self.0)
    }
}

/// What to compile.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Variant {
    /// Source id (see [`crate::source::all`]).
    pub source: String,
    /// `#define NAME VALUE` given to the compiler as `-D NAME=VALUE`.
    #[serde(default)]
    pub defines: BTreeMap<String, String>,
    /// NVRTC options, e.g. `--ptxas-options=-O2`, `-maxrregcount=32`, `--use_fast_math`.
    #[serde(default)]
    pub flags: Vec<String>,
    pub arch: Arch,
}

/// Options the runtime sets itself; a variant that sets them would build something else than
/// the tuner thinks it measures.
const RESERVED: &[&str] = &[
    "--gpu-architecture",
    "-arch",
    "--relocatable-device-code",
    "-rdc",
    "-dc",
    "--device-c",
];

impl Variant {
    pub fn new(source: &str, arch: Arch) -> Variant {
        Variant {
            source: source.to_string(),
            defines: BTreeMap::new(),
            flags: Vec::new(),
            arch,
        }
    }

    pub fn define(mut self, name: &str, value: impl ToString) -> Variant {
        self.defines.insert(name.to_string(), value.to_string());
        self
    }

    pub fn flag(mut self, flag: &str) -> Variant {
        self.flags.push(flag.to_string());
        self
    }

    /// The embedded source this variant compiles.
    pub fn kernel_source(&self) -> Result<&'static KernelSource, String> {
        source::find(&self.source)
    }

    /// Checks the variant and returns the full NVRTC option list.
    pub fn nvrtc_options(&self) -> Result<Vec<String>, String> {
        let source = self.kernel_source()?;
        for flag in &self.flags {
            let name = flag.split(['=', ' ']).next().unwrap_or(flag);
            if RESERVED.contains(&name) {
                return Err(format!(
                    "flag {flag:?} is set by the runtime (target arch and relocatable code \
                     follow from the device and the source); remove it from the variant"
                ));
            }
            // A macro from a flag comes after the runtime's own (`-DQAP_N=...`) and wins: a
            // kernel built for another size than its buffers faults or answers wrongly.
            // Defines are the space's `define` parameters, which the runtime checks.
            let macro_flag = ["-D", "-U", "--define-macro", "--undefine-macro"]
                .iter()
                .any(|p| flag.starts_with(p));
            if macro_flag {
                return Err(format!(
                    "flag {flag:?} defines or undefines a macro, which the runtime sets itself \
                     (sizes, thread counts); give a space parameter of kind \"define\" instead"
                ));
            }
            if flag == "-O0" || flag == "-O1" || flag == "-O2" || flag == "-O3" {
                return Err(format!(
                    "flag {flag:?} is not an NVRTC option; ptxas levels are written \
                     --ptxas-options={flag}"
                ));
            }
        }
        for name in self.defines.keys() {
            let valid = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            if !valid {
                return Err(format!("define name {name:?} is not a C identifier"));
            }
        }
        for (name, example) in source.required_defines {
            if !self.defines.contains_key(*name) {
                return Err(format!(
                    "{} needs the define {name} (e.g. {name}={example})",
                    source.id
                ));
            }
        }
        let mut options = vec![
            format!("--gpu-architecture={}", self.arch),
            "--std=c++17".to_string(),
            // The resource report (registers, spills, stack, shared memory) comes from here.
            "--ptxas-options=-v".to_string(),
        ];
        if source.relocatable {
            options.push("--relocatable-device-code=true".to_string());
        }
        options.extend(self.defines.iter().map(|(k, v)| format!("-D{k}={v}")));
        options.extend(self.flags.iter().cloned());
        Ok(options)
    }
}
