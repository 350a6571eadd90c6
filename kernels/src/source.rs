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
    /// Headers the source includes, as (include name, text), handed to NVRTC by name.
    pub headers: &'static [(&'static str, &'static str)],
    /// Defines the source cannot compile without, each with an example value that compile
    /// checks use (e.g. `QAP_N`, the instance size the kernel is specialised to).
    pub required_defines: &'static [(&'static str, &'static str)],
}

impl KernelSource {
    /// A variant of this source with every required define set to its example value.
    pub fn example_variant(&self, arch: crate::Arch) -> crate::Variant {
        self.required_defines
            .iter()
            .fold(crate::Variant::new(self.id, arch), |v, (name, value)| {
                v.define(name, value)
            })
    }
}

/// The header shared by the QAP kernels.
const QAP_HEADERS: &[(&str, &str)] = &[("common.cuh", include_str!("../qap/common.cuh"))];
/// The QAP kernels are specialised to the instance size.
const QAP_DEFINES: &[(&str, &str)] = &[("QAP_N", "50")];
/// The header shared by the flowshop kernels.
const PFSP_HEADERS: &[(&str, &str)] = &[("common.cuh", include_str!("../pfsp/common.cuh"))];
/// The iterated-greedy kernels also share their best insertion (`ig-common.cuh`).
const PFSP_IG_HEADERS: &[(&str, &str)] = &[
    ("common.cuh", include_str!("../pfsp/common.cuh")),
    ("ig-common.cuh", include_str!("../pfsp/ig-common.cuh")),
];
/// The flowshop kernels are specialised to jobs x machines (Taillard's 100 x 20 as the example)
/// and to the width of completion times.
const PFSP_DEFINES: &[(&str, &str)] = &[("PFSP_N", "100"), ("PFSP_M", "20"), ("PFSP_WIDE", "0")];
/// `ig-block` is also specialised to its block size.
const PFSP_IG_DEFINES: &[(&str, &str)] = &[
    ("PFSP_N", "100"),
    ("PFSP_M", "20"),
    ("PFSP_WIDE", "0"),
    ("IG_THREADS", "64"),
];

/// `ig-warp` is also specialised to its walks per block and where their tables live.
const PFSP_IGW_DEFINES: &[(&str, &str)] = &[
    ("PFSP_N", "100"),
    ("PFSP_M", "20"),
    ("PFSP_WIDE", "0"),
    ("IGW_WARPS", "4"),
    ("IGW_SHARED_TABLES", "1"),
];

/// The header shared by the HW/SW partitioning kernels.
const HWSW_HEADERS: &[(&str, &str)] = &[("common.cuh", include_str!("../hwsw/common.cuh"))];
/// The HW/SW kernels take n at run time; block size, items per thread and the zero-copy
/// switch are defines (their defaults in common.cuh apply without them).
const HWSW_DEFINES: &[(&str, &str)] = &[
    ("HWSW_THREADS", "256"),
    ("HWSW_ITEMS", "4"),
    ("HWSW_ZERO_COPY", "1"),
];

/// gpts-multi: block size and sampled 2-flips per thread.
const HWSW_MULTI_DEFINES: &[(&str, &str)] = &[("HWSW_THREADS", "256"), ("MULTI_SAMPLES", "4")];

/// The headers shared by the TSP kernels: distances and layouts (`common.cuh`), the colony's
/// random stream, choice information and roulette (`colony.cuh`), evaporation (`evaporate.cuh`).
const TSP_HEADERS: &[(&str, &str)] = &[
    ("common.cuh", include_str!("../tsp/common.cuh")),
    ("colony.cuh", include_str!("../tsp/colony.cuh")),
    ("evaporate.cuh", include_str!("../tsp/evaporate.cuh")),
];
/// The TSP kernels take n at run time; the distance function and the candidate-list length
/// are defines.
const TSP_DEFINES: &[(&str, &str)] = &[("TSP_DIST", "0"), ("TSP_K", "32")];
/// The focused colony: distance kind, list length, local-search width, ants per block, Or-opt.
const TSP_FOCUSED_DEFINES: &[(&str, &str)] = &[
    ("TSP_DIST", "0"),
    ("TSP_K", "16"),
    ("LS_NEIGHBOURS", "10"),
    ("FOCUSED_WARPS", "4"),
    ("FOCUSED_OR_OPT", "1"),
];
/// The local search: distance kind, candidates tried per city and tours per block.
const TSP_LS_DEFINES: &[(&str, &str)] = &[
    ("TSP_DIST", "0"),
    ("LS_NEIGHBOURS", "10"),
    ("LS_WARPS", "4"),
];

macro_rules! source {
    ($id:literal, $file:literal, [$($entry:literal),*], relocatable = $rdc:literal, test_only = $test:literal) => {
        source!($id, $file, [$($entry),*], relocatable = $rdc, test_only = $test, headers = &[], defines = &[])
    };
    ($id:literal, $file:literal, [$($entry:literal),*], relocatable = $rdc:literal, test_only = $test:literal, headers = $headers:expr, defines = $defines:expr) => {
        KernelSource {
            id: $id,
            path: concat!("kernels/", $file),
            text: include_str!(concat!("../", $file)),
            entries: &[$($entry),*],
            relocatable: $rdc,
            test_only: $test,
            headers: $headers,
            required_defines: $defines,
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
    source!(
        "qap/2opt",
        "qap/2opt.cu",
        ["qap_2opt"],
        relocatable = false,
        test_only = false,
        headers = QAP_HEADERS,
        defines = QAP_DEFINES
    ),
    source!(
        "qap/2opt-shared",
        "qap/2opt-shared.cu",
        ["qap_2opt_shared"],
        relocatable = false,
        test_only = false,
        headers = QAP_HEADERS,
        defines = QAP_DEFINES
    ),
    source!(
        "qap/2opt-dyn",
        "qap/2opt-dyn.cu",
        ["qap_2opt_dyn_step", "qap_2opt_dyn_child"],
        relocatable = true,
        test_only = false,
        headers = QAP_HEADERS,
        defines = QAP_DEFINES
    ),
    source!(
        "qap/tabu",
        "qap/tabu.cu",
        ["qap_tabu"],
        relocatable = false,
        test_only = false,
        headers = QAP_HEADERS,
        defines = QAP_DEFINES
    ),
    source!(
        "qap/rots-block",
        "qap/rots-block.cu",
        ["qap_rots_block", "qap_rots_block_fast"],
        relocatable = false,
        test_only = false,
        headers = QAP_HEADERS,
        defines = QAP_DEFINES
    ),
    source!(
        "pfsp/tabu-full",
        "pfsp/tabu-full.cu",
        ["pfsp_tabu_full"],
        relocatable = false,
        test_only = false,
        headers = PFSP_HEADERS,
        defines = PFSP_DEFINES
    ),
    source!(
        "pfsp/tabu-prefix",
        "pfsp/tabu-prefix.cu",
        [
            "pfsp_parent_table",
            "pfsp_parent_table_warp",
            "pfsp_tabu_prefix"
        ],
        relocatable = false,
        test_only = false,
        headers = PFSP_HEADERS,
        defines = PFSP_DEFINES
    ),
    source!(
        "pfsp/ig-block",
        "pfsp/ig-block.cu",
        ["pfsp_ig_block"],
        relocatable = false,
        test_only = false,
        headers = PFSP_IG_HEADERS,
        defines = PFSP_IG_DEFINES
    ),
    source!(
        "pfsp/ig-grid",
        "pfsp/ig-grid.cu",
        ["pfsp_ig_grid_moves"],
        relocatable = false,
        test_only = false,
        headers = PFSP_IG_HEADERS,
        defines = PFSP_IG_DEFINES
    ),
    source!(
        "pfsp/beam",
        "pfsp/beam.cu",
        [
            "pfsp_beam_bounds",
            "pfsp_beam_keys",
            "pfsp_beam_histogram",
            "pfsp_beam_count",
            "pfsp_beam_select",
            "pfsp_beam_trace"
        ],
        relocatable = false,
        test_only = false,
        headers = PFSP_HEADERS,
        defines = PFSP_DEFINES
    ),
    source!(
        "pfsp/ig-warp",
        "pfsp/ig-warp.cu",
        ["pfsp_ig_warp"],
        relocatable = false,
        test_only = false,
        headers = PFSP_HEADERS,
        defines = PFSP_IGW_DEFINES
    ),
    source!(
        "hwsw/separate",
        "hwsw/separate.cu",
        [
            "hwsw_evaluate",
            "hwsw_count",
            "hwsw_scan",
            "hwsw_scatter",
            "hwsw_tabu",
            "hwsw_move"
        ],
        relocatable = false,
        test_only = false,
        headers = HWSW_HEADERS,
        defines = HWSW_DEFINES
    ),
    source!(
        "hwsw/compact",
        "hwsw/compact.cu",
        ["hwsw_evaluate", "hwsw_compact", "hwsw_tabu", "hwsw_move"],
        relocatable = false,
        test_only = false,
        headers = HWSW_HEADERS,
        defines = HWSW_DEFINES
    ),
    source!(
        "hwsw/fused",
        "hwsw/fused.cu",
        ["hwsw_fused", "hwsw_tabu", "hwsw_move"],
        relocatable = false,
        test_only = false,
        headers = HWSW_HEADERS,
        defines = HWSW_DEFINES
    ),
    source!(
        "hwsw/gpts-multi",
        "hwsw/gpts-multi.cu",
        ["hwsw_multi"],
        relocatable = false,
        test_only = false,
        headers = HWSW_HEADERS,
        defines = HWSW_MULTI_DEFINES
    ),
    source!(
        "tsp/construct-task",
        "tsp/construct-task.cu",
        [
            "tsp_construct_task",
            "tsp_choice_info",
            "tsp_candidate_info",
            "tsp_tour_lengths"
        ],
        relocatable = false,
        test_only = false,
        headers = TSP_HEADERS,
        defines = TSP_DEFINES
    ),
    source!(
        "tsp/construct-data",
        "tsp/construct-data.cu",
        [
            "tsp_construct_data",
            "tsp_choice_info",
            "tsp_candidate_info",
            "tsp_tour_lengths"
        ],
        relocatable = false,
        test_only = false,
        headers = TSP_HEADERS,
        defines = TSP_DEFINES
    ),
    source!(
        "tsp/construct-data-compressed",
        "tsp/construct-data-compressed.cu",
        [
            "tsp_construct_data_compressed",
            "tsp_choice_info",
            "tsp_candidate_info",
            "tsp_tour_lengths"
        ],
        relocatable = false,
        test_only = false,
        headers = TSP_HEADERS,
        defines = TSP_DEFINES
    ),
    source!(
        "tsp/pheromone-atomic",
        "tsp/pheromone-atomic.cu",
        ["tsp_evaporate", "tsp_deposit_atomic"],
        relocatable = false,
        test_only = false,
        headers = TSP_HEADERS,
        defines = TSP_DEFINES
    ),
    source!(
        "tsp/pheromone-gather",
        "tsp/pheromone-gather.cu",
        ["tsp_evaporate", "tsp_edges_by_city", "tsp_deposit_gather"],
        relocatable = false,
        test_only = false,
        headers = TSP_HEADERS,
        defines = TSP_DEFINES
    ),
    source!(
        "tsp/ls-2opt",
        "tsp/ls-2opt.cu",
        ["tsp_ls_2opt"],
        relocatable = false,
        test_only = false,
        headers = TSP_HEADERS,
        defines = TSP_LS_DEFINES
    ),
    source!(
        "tsp/focused",
        "tsp/focused.cu",
        [
            "tsp_focused_ants",
            "tsp_focused_pheromone",
            "tsp_focused_merge"
        ],
        relocatable = false,
        test_only = false,
        headers = TSP_HEADERS,
        defines = TSP_FOCUSED_DEFINES
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
