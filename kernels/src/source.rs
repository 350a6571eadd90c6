//! The CUDA sources embedded in the binary, one file per algorithm variant.
//!
//! Each source names its entry points (`extern "C"` kernels, so their names survive without
//! mangling) and whether it needs relocatable device code (dynamic parallelism).

/// One embedded `.cu` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelSource {
    /// Stable identifier, `family/variant` (e.g. `probe/busy`, `qap/2opt`).
    pub id: &'static str,
    /// Path inside the repository, for messages.
    pub path: &'static str,
    /// The CUDA C++ text.
    pub text: &'static str,
    /// The `extern "C"` kernels it defines.
    pub entries: &'static [&'static str],
    /// Needs `-rdc=true` and a device link with libcudadevrt (dynamic parallelism).
    pub relocatable: bool,
    /// Only for tests of the runtime (faults on purpose); never offered to the tuner.
    pub test_only: bool,
}

macro_rules! source {
    ($id:literal, $file:literal, [$($entry:literal),*], relocatable = $rdc:literal, test_only = $test:literal) => {
        KernelSource {
            id: $id,
            path: concat!("kernels/", $file),
            text: include_str!(concat!("../", $file)),
            entries: &[$($entry),*],
            relocatable: $rdc,
            test_only: $test,
        }
    };
}

static SOURCES: &[KernelSource] = &[
    source!(
        "probe/busy",
        "probe/busy.cu",
        ["busy"],
        relocatable = false,
        test_only = false
    ),
    source!(
        "probe/dynamic",
        "probe/dynamic.cu",
        ["spawn_children", "fill_chunk"],
        relocatable = true,
        test_only = false
    ),
    source!(
        "probe/fault",
        "probe/fault.cu",
        ["write_out_of_bounds"],
        relocatable = false,
        test_only = true
    ),
];

/// Every embedded source.
pub fn all() -> &'static [KernelSource] {
    SOURCES
}

/// A source by id, with the list of known ids in the error.
pub fn find(id: &str) -> Result<&'static KernelSource, String> {
    SOURCES.iter().find(|s| s.id == id).ok_or_else(|| {
        let known: Vec<_> = SOURCES.iter().map(|s| s.id).collect();
        format!("unknown kernel source {id:?}; known: {}", known.join(", "))
    })
}
