//! The flowshop GPU drivers' host side, without a GPU: parameter checks against an instance
//! and a device description, the limits' messages, the kernel variants, and the move keys'
//! pair numbering.

use kernels::gpu::DeviceInfo;
use kernels::Arch;
use solvers::pfsp::gpu::{self as pfsp_gpu, GpuAlgorithm, GpuParams};
use solvers::pfsp::{self, Instance};

/// The H100's opt-in shared memory per block.
const OPTIN: usize = 227 * 1024;

fn h100() -> DeviceInfo {
    DeviceInfo {
        ordinal: 0,
        name: "NVIDIA H100 80GB HBM3".into(),
        arch: Arch::SM90,
        sm_count: 132,
        total_memory_bytes: 80 << 30,
        max_threads_per_block: 1024,
        max_shared_bytes_per_block: 48 * 1024,
        max_shared_bytes_per_block_optin: OPTIN as u32,
        clock_khz: 1_980_000,
    }
}

#[test]
fn pair_numbering_round_trips_in_row_major_order() {
    for n in [2usize, 3, 7, 100, 901] {
        let mut k = 0;
        for i in 0..n {
            for j in i + 1..n {
                assert_eq!(pfsp_gpu::pair_index(n, i, j), k);
                assert_eq!(pfsp_gpu::pair_of(n, k), (i, j));
                k += 1;
            }
        }
    }
}

#[test]
fn defaults_pass_on_the_paper_sizes_and_taillard() {
    let device = h100();
    for (m, n) in [(15, 100), (20, 200), (40, 900), (20, 500), (60, 800)] {
        let inst = pfsp::generate(n, m, 1);
        for algorithm in [GpuAlgorithm::TabuFull, GpuAlgorithm::TabuPrefix] {
            GpuParams::new(algorithm)
                .check(&inst, &device)
                .unwrap_or_else(|e| panic!("{m}x{n} {}: {e}", algorithm.name()));
        }
    }
    // ig-block holds every Taillard size (up to 500 x 20) in shared memory.
    for (n, m) in [(20, 5), (50, 20), (100, 20), (200, 20), (500, 20)] {
        GpuParams::new(GpuAlgorithm::IgBlock)
            .check(&pfsp::generate(n, m, 1), &device)
            .unwrap_or_else(|e| panic!("{n}x{m}: {e}"));
    }
}

#[test]
fn limits_give_one_clear_error() {
    let device = h100();
    let ig = GpuParams::new(GpuAlgorithm::IgBlock);
    // VRF's largest (800 x 60) and the paper's 900 x 40 do not fit a walk's tables in shared
    // memory: they go to global memory, unless shared memory is asked for.
    let shared = GpuParams {
        tables: pfsp_gpu::IgwTables::Shared,
        ..ig.clone()
    };
    for (n, m) in [(800, 60), (900, 40)] {
        let inst = pfsp::generate(n, m, 1);
        ig.check(&inst, &device).unwrap();
        let err = shared.check(&inst, &device).unwrap_err();
        assert!(
            err.contains("shared memory") && err.contains("bytes") && err.contains("global"),
            "{err}"
        );
    }
    let tabu = GpuParams::new(GpuAlgorithm::TabuFull);
    let err = tabu
        .check(&pfsp::generate(3000, 5, 1), &device)
        .unwrap_err();
    assert!(err.contains("2048 jobs"), "{err}");
    let err = tabu
        .check(&pfsp::generate(20, 200, 1), &device)
        .unwrap_err();
    assert!(err.contains("128 machines"), "{err}");
    let err = GpuParams {
        threads_per_block: 100,
        ..tabu.clone()
    }
    .check(&pfsp::generate(20, 5, 1), &device)
    .unwrap_err();
    assert!(err.contains("multiple of 32"), "{err}");
    let err = GpuParams {
        threads_per_block: 32,
        ..ig.clone()
    }
    .check(&pfsp::generate(20, 5, 1), &device)
    .unwrap_err();
    assert!(err.contains("64..=1024"), "{err}");
    for destruction in [0, 65] {
        let err = GpuParams {
            destruction,
            ..ig.clone()
        }
        .check(&pfsp::generate(20, 5, 1), &device)
        .unwrap_err();
        assert!(err.contains("destruction must be in 1..=64"), "{err}");
    }
    // A destruction above n - 1 is clamped, as on the CPU: 3 jobs with the default 4 run.
    ig.check(&pfsp::generate(3, 2, 1), &device).unwrap();
    let huge = Instance::new("huge", 2, 1, vec![i64::from(i32::MAX) + 1, 1]).unwrap();
    let err = tabu.check(&huge, &device).unwrap_err();
    assert!(err.contains("int32"), "{err}");
}

#[test]
fn variants_are_specialised_to_the_instance() {
    let inst = pfsp::generate(100, 20, 1);
    let v = GpuParams::new(GpuAlgorithm::TabuPrefix).variant_for(&inst, Arch::SM90, OPTIN);
    assert_eq!(v.source, "pfsp/tabu-prefix");
    assert_eq!(v.defines["PFSP_N"], "100");
    assert_eq!(v.defines["PFSP_M"], "20");
    assert_eq!(v.defines["PFSP_WIDE"], "0");
    let wide = Instance::new("wide", 2, 1, vec![1 << 30, 1 << 30]).unwrap();
    assert!(!pfsp_gpu::completion_fits_i32(&wide));
    let v = GpuParams::new(GpuAlgorithm::IgBlock).variant_for(&wide, Arch::SM90, OPTIN);
    assert_eq!(v.defines["PFSP_WIDE"], "1");
    assert_eq!(v.defines["IG_THREADS"], "64");
    assert!(!v.defines.contains_key("IG_GLOBAL_TABLES"));
    // ig-block's tables: shared memory where (n + 1) (m | 1) values twice, four sequences and
    // 1 KiB fit, else global; forced either way by `tables`.
    assert_eq!(pfsp_gpu::ig_table_bytes(800, 60, true), 2 * 801 * 61 * 4);
    assert_eq!(
        pfsp_gpu::ig_shared_bytes(800, 60, true),
        2 * 801 * 61 * 4 + 16 * 800 + 1024
    );
    let ig = GpuParams::new(GpuAlgorithm::IgBlock);
    for (n, m, global) in [(500, 20, false), (800, 60, true), (900, 40, true)] {
        let inst = pfsp::generate(n, m, 1);
        let layout = pfsp_gpu::IgLayout::of(&ig, &inst, OPTIN);
        assert_eq!(!layout.tables_in_shared(), global, "{n}x{m}");
        // With global tables the times (n x 4 ceil(m / 4) ints) move to shared memory: 192 KB
        // at 800 x 60, 144 KB at 900 x 40.
        assert_eq!(
            layout,
            if global {
                pfsp_gpu::IgLayout::GlobalTables { shared_times: true }
            } else {
                pfsp_gpu::IgLayout::SharedTables
            }
        );
        let v = ig.variant_for(&inst, Arch::SM90, OPTIN);
        for define in ["IG_GLOBAL_TABLES", "IG_SHARED_TIMES"] {
            assert_eq!(
                v.defines.get(define).map(String::as_str),
                global.then_some("1"),
                "{n}x{m} {define}"
            );
        }
    }
    let small = pfsp::generate(50, 20, 1);
    // A smaller device (48 KiB per block) moves 500 x 20 to global memory too.
    assert_eq!(
        pfsp_gpu::IgLayout::of(&ig, &pfsp::generate(500, 20, 1), 48 * 1024),
        pfsp_gpu::IgLayout::GlobalTables { shared_times: true }
    );
    // ... and where the times do not fit either they stay in global memory.
    assert_eq!(
        pfsp_gpu::IgLayout::of(&ig, &pfsp::generate(800, 60, 1), 48 * 1024),
        pfsp_gpu::IgLayout::GlobalTables {
            shared_times: false
        }
    );
    let forced = GpuParams {
        tables: pfsp_gpu::IgwTables::Global,
        ..ig.clone()
    };
    assert!(!pfsp_gpu::IgLayout::of(&forced, &small, OPTIN).tables_in_shared());
    assert_eq!(
        forced.variant_for(&small, Arch::SM90, OPTIN).defines["IG_GLOBAL_TABLES"],
        "1"
    );
    // Padded job-major times: row j holds job j's times, then zeros up to 4 machines.
    let small = Instance::new("s", 2, 3, vec![1, 2, 3, 4, 5, 6]).unwrap();
    assert_eq!(pfsp_gpu::padded_times(&small), vec![1, 3, 5, 0, 2, 4, 6, 0]);
}

#[test]
fn incremental_tabu_list_forbids_what_the_cpu_forbids() {
    use rand::Rng;
    use std::collections::VecDeque;
    let mut rng = solvers::run::stream_rng(5, 0);
    for (n, tenure) in [(2usize, 3usize), (5, 4), (8, 200), (30, 10), (12, 0)] {
        let mut current: Vec<usize> = (0..n).collect();
        let mut list = pfsp_gpu::TabuList::new(tenure, &current);
        let mut reference: VecDeque<Vec<usize>> = VecDeque::new();
        if tenure > 0 {
            reference.push_back(current.clone());
        }
        for step in 0..500 {
            assert_eq!(
                list.forbidden(&current),
                pfsp::tabu::forbidden_moves(&current, &reference),
                "n {n} tenure {tenure} step {step}"
            );
            // Moves back onto listed sequences are frequent on small n: the interesting case.
            let i = rng.random_range(0..n - 1);
            let j = rng.random_range(i + 1..n);
            current.swap(i, j);
            list.after_move(&current, i, j);
            if tenure > 0 {
                if reference.len() == tenure {
                    reference.pop_front();
                }
                reference.push_back(current.clone());
            }
        }
    }
}

#[test]
fn the_parent_table_kernel_follows_the_machine_count() {
    // One warp where the machines fit in it (measured faster), else one block.
    assert_eq!(
        pfsp_gpu::table_entry(&pfsp::generate(500, 30, 1)),
        "pfsp_parent_table_warp"
    );
    assert_eq!(
        pfsp_gpu::table_entry(&pfsp::generate(33, 37, 1)),
        "pfsp_parent_table"
    );
}

#[test]
fn ig_block_shared_memory_figures() {
    // The figures docs/pfsp-gpu.md and the limit errors quote.
    assert_eq!(pfsp_gpu::ig_shared_bytes(500, 20, true), 93192);
    assert_eq!(pfsp_gpu::ig_shared_bytes(900, 40, true), 310952);
    assert_eq!(pfsp_gpu::ig_shared_bytes(800, 60, true), 404712);
    assert!(pfsp_gpu::ig_shared_bytes(500, 20, false) > pfsp_gpu::ig_shared_bytes(500, 20, true));
}

#[test]
fn ig_warp_holds_every_size_and_says_where_its_tables_live() {
    let device = h100();
    let warp = GpuParams::new(GpuAlgorithm::IgWarp);
    assert_eq!((warp.destruction, warp.destruction_max), (2, 6));
    assert!(warp.ties);
    // Taillard's sizes, VRF's largest and the paper's 900 x 40: all pass; small tables go to
    // shared memory, large ones to global memory.
    for (n, m, shared) in [
        (20, 5, "1"),
        (50, 20, "1"),
        (100, 20, "1"),
        (200, 20, "1"),
        (500, 20, "0"),
        (800, 60, "0"),
        (900, 40, "0"),
    ] {
        let inst = pfsp::generate(n, m, 1);
        warp.check(&inst, &device)
            .unwrap_or_else(|e| panic!("{n}x{m}: {e}"));
        let v = warp.variant_for(&inst, Arch::SM90, OPTIN);
        assert_eq!(v.source, "pfsp/ig-warp");
        assert_eq!(v.defines["IGW_WARPS"], "4");
        assert_eq!(v.defines["IGW_SHARED_TABLES"], shared, "{n}x{m}");
    }
    // Sizes mirror the kernel: (n + m + 1) m + 3 (n + 1) table values, 3 n + 64 ints.
    assert_eq!(
        pfsp_gpu::ig_warp_bytes(100, 20, true),
        ((121 * 20 + 303) * 4, (300 + 64) * 4)
    );
    assert_eq!(pfsp_gpu::ig_warp_bytes(10, 3, false).0, (14 * 3 + 33) * 8);
    // Forced shared tables on 800 x 60 do not fit: one message with the figure.
    let err = GpuParams {
        tables: pfsp_gpu::IgwTables::Shared,
        ..warp.clone()
    }
    .check(&pfsp::generate(800, 60, 1), &device)
    .unwrap_err();
    assert!(
        err.contains("bytes of shared memory") && err.contains("global"),
        "{err}"
    );
    for warps in [0, 33] {
        let err = GpuParams {
            warps,
            ..warp.clone()
        }
        .check(&pfsp::generate(20, 5, 1), &device)
        .unwrap_err();
        assert!(err.contains("1..=32 warps"), "{err}");
    }
    let err = GpuParams {
        destruction: 4,
        destruction_max: 3,
        ..warp.clone()
    }
    .check(&pfsp::generate(20, 5, 1), &device)
    .unwrap_err();
    assert!(err.contains("largest destruction"), "{err}");
    let err = GpuParams {
        temperature: f64::NAN,
        ..warp.clone()
    }
    .check(&pfsp::generate(20, 5, 1), &device)
    .unwrap_err();
    assert!(err.contains("temperature"), "{err}");
    // The name round-trips (the tuner's `variant`, serde).
    assert_eq!(
        GpuAlgorithm::from_name("ig-warp").unwrap(),
        GpuAlgorithm::IgWarp
    );
    assert_eq!(String::from(GpuAlgorithm::IgWarp), "ig-warp");
}

/// A point as the tuner hands it over, for `from_point`.
struct Point(Vec<(&'static str, &'static str)>);

impl solvers::gpu::PointValues for Point {
    fn int(&self, name: &str) -> Result<Option<i64>, String> {
        self.text(name)
            .map(|v| v.parse::<i64>().map_err(|e| format!("{name}: {e}")))
            .transpose()
    }
    fn float(&self, name: &str) -> Result<Option<f64>, String> {
        self.text(name)
            .map(|v| v.parse::<f64>().map_err(|e| format!("{name}: {e}")))
            .transpose()
    }
    fn text(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
    }
    fn flags(&self) -> &[String] {
        &[]
    }
    fn defines(&self) -> &[(String, String)] {
        &[]
    }
}

/// ig-grid's tabu steps and tenure (dimensions of spaces/pfsp.toml) reach its parameters;
/// without them it runs the plain iterated greedy with its own tenure, not the tabu variants'.
#[test]
fn ig_grid_points_of_the_space_become_parameters() {
    use solvers::gpu::GpuWorkload;
    let p = GpuParams::from_point(&Point(vec![
        ("variant", "ig-grid"),
        ("tabu_steps", "30"),
        ("tenure", "12"),
    ]))
    .unwrap();
    assert_eq!((p.tabu_steps, p.tenure), (30, 12));
    let plain = GpuParams::from_point(&Point(vec![("variant", "ig-grid")])).unwrap();
    assert_eq!(
        (plain.tabu_steps, plain.tenure),
        (0, solvers::pfsp::ig_grid::DEFAULT_GRID_TENURE)
    );
    assert_eq!(GpuParams::new(GpuAlgorithm::TabuFull).tenure, 200);
    let bad = Point(vec![("variant", "ig-grid"), ("tabu_steps", "-1")]);
    assert!(GpuParams::from_point(&bad)
        .unwrap_err()
        .contains("tabu_steps"));
}

#[test]
fn ig_warp_points_of_the_space_become_parameters() {
    use solvers::gpu::GpuWorkload;
    let point = Point(vec![
        ("variant", "ig-warp"),
        ("threads", "256"),
        ("blocks", "1056"),
        ("destruction", "3"),
        ("destruction_max", "8"),
        ("ties", "0"),
        ("tables", "global"),
        ("temperature", "0.7"),
        ("restart_stall", "10"),
    ]);
    let p = GpuParams::from_point(&point).unwrap();
    assert_eq!(p.algorithm, GpuAlgorithm::IgWarp);
    assert_eq!((p.warps, p.threads_per_block, p.blocks), (8, 256, 1056));
    assert_eq!((p.destruction, p.destruction_max), (3, 8));
    assert!(!p.ties);
    assert_eq!(p.tables, pfsp_gpu::IgwTables::Global);
    assert_eq!((p.temperature, p.restart_stall), (0.7, 10));
    // destruction_max 0 (or below destruction) means a fixed d.
    let fixed = Point(vec![
        ("variant", "ig-warp"),
        ("destruction", "6"),
        ("destruction_max", "0"),
    ]);
    let p = GpuParams::from_point(&fixed).unwrap();
    assert_eq!((p.destruction, p.destruction_max), (6, 6));
    let bad = Point(vec![("variant", "ig-warp"), ("tables", "texture")]);
    assert!(GpuParams::from_point(&bad).unwrap_err().contains("tables"));
}

/// `mats solve` runs ig-block where its walk's tables fit in shared memory and ig-grid where
/// they do not (800 x 60), unless the variant is named or a flag given applies only to
/// ig-block; `--algo ig-block` still runs ig-block there, with global tables. ig-grid's own
/// flags are taken where it runs and refused where ig-block does.
#[test]
fn solve_runs_ig_grid_where_ig_blocks_tables_do_not_fit_shared_memory() {
    use solvers::family::{Family, Instance as AnyInstance};
    use solvers::gpu::solve_flags::{FlagValue, GivenFlag, SolveConfig};
    let device = h100();
    let fits = AnyInstance::Pfsp(pfsp::generate(100, 20, 1));
    let too_big = AnyInstance::Pfsp(pfsp::generate(800, 60, 1));
    let plan = |given: &[GivenFlag]| SolveConfig::from_flags(Family::Pfsp, given, &[]).unwrap();
    let variant = |given: &[GivenFlag], inst| {
        plan(given)
            .fit(inst, &device)
            .unwrap()
            .variant_name()
            .to_string()
    };
    assert_eq!(variant(&[], &fits), "ig-block");
    assert_eq!(variant(&[], &too_big), "ig-grid");
    let flag = |flag: &'static str, value: FlagValue| GivenFlag { flag, value };
    // Flags both take keep the switch; an ig-block-only flag or a named variant prevents it.
    let d3 = flag("--destruction", FlagValue::Int(3));
    assert_eq!(variant(std::slice::from_ref(&d3), &too_big), "ig-grid");
    let config = plan(std::slice::from_ref(&d3))
        .fit(&too_big, &device)
        .unwrap();
    assert!(
        format!("{config:?}").contains("destruction: 3"),
        "{config:?}"
    );
    assert_eq!(
        plan(std::slice::from_ref(&d3)).passed_over(&too_big, &device),
        None
    );
    let stall = flag("--restart-stall", FlagValue::Int(40));
    assert_eq!(variant(std::slice::from_ref(&stall), &too_big), "ig-block");
    // ... and says so, naming the flags that kept ig-grid from running (`--adapt` silently
    // compared ig-block against the default's ig-grid on VFR500_60_1, 2026-11-28).
    let adapt = flag("--adapt", FlagValue::Int(1));
    let note = plan(&[stall.clone(), adapt.clone(), d3.clone()])
        .passed_over(&too_big, &device)
        .unwrap();
    assert_eq!(
        note,
        "ig-block runs this instance although `ig-grid` would by default: --restart-stall, \
         --adapt do not apply to `ig-grid` (omit them to run it)"
    );
    assert_eq!(
        plan(std::slice::from_ref(&adapt)).passed_over(&fits, &device),
        None
    );
    // ig-grid's own flags: taken where the instance runs ig-grid, with ig-grid's defaults for
    // the rest (its tenure, not the tabu variants'); refused, naming the variant, elsewhere.
    let tabu = flag("--tabu-steps", FlagValue::Int(10));
    let config = plan(std::slice::from_ref(&tabu))
        .fit(&too_big, &device)
        .unwrap();
    let shown = format!("{config:?}");
    assert!(
        shown.contains("IgGrid")
            && shown.contains("tabu_steps: 10")
            && shown.contains("tenure: 7,"),
        "{shown}"
    );
    let tenure = flag("--tenure", FlagValue::Int(5));
    let config = plan(&[tabu.clone(), tenure])
        .fit(&too_big, &device)
        .unwrap();
    assert!(format!("{config:?}").contains("tenure: 5,"), "{config:?}");
    let err = plan(std::slice::from_ref(&tabu))
        .fit(&fits, &device)
        .unwrap_err();
    assert!(
        err.contains("--tabu-steps does not apply to pfsp `ig-block`") && err.contains("ig-grid"),
        "{err}"
    );
    // Where ig-grid itself refuses the flags (128 threads for its fused evaluation), the error
    // about its own flag says why it did not run.
    let threads = flag("--threads", FlagValue::Int(128));
    let err = plan(&[tabu.clone(), threads])
        .fit(&too_big, &device)
        .unwrap_err();
    assert!(
        err.contains("--tabu-steps does not apply")
            && err.contains("`ig-grid`, which refuses")
            && err.contains("--threads"),
        "{err}"
    );
    // A flag no instance's variant takes is still refused before any instance is read.
    let tenure_range = flag("--tenure-range", FlagValue::List(vec![0.4, 0.8]));
    assert!(SolveConfig::from_flags(Family::Pfsp, &[tenure_range], &[]).is_err());
    let algo = flag("--algo", FlagValue::Text("ig-block".into()));
    assert_eq!(variant(&[algo], &too_big), "ig-block");
    // Walks ig-grid cannot run (more than 64) keep ig-block's meaning of --solutions.
    let many = flag("--solutions", FlagValue::Int(132));
    assert_eq!(variant(&[many], &too_big), "ig-block");
    // Tables forced into shared memory at 800 x 60: one error naming the flag and the way out.
    let shared = GivenFlag {
        flag: "--layout",
        value: FlagValue::Text("shared".into()),
    };
    let err = plan(std::slice::from_ref(&shared))
        .fit(&too_big, &device)
        .unwrap_err();
    assert!(
        err.contains("--layout") && err.contains("shared memory") && err.contains("global"),
        "{err}"
    );
    plan(&[shared]).fit(&fits, &device).unwrap();
}

#[test]
fn relinking_restarts_are_parameters_of_both_iterated_greedy_variants() {
    use solvers::gpu::GpuWorkload;
    let device = h100();
    let inst = pfsp::generate(50, 20, 1);
    for variant in ["ig-block", "ig-warp"] {
        // On by default for ig-block only, with a pool of 8 ready.
        let p = GpuParams::from_point(&Point(vec![("variant", variant)])).unwrap();
        assert_eq!(p.relink, variant == "ig-block", "{variant}");
        let off = GpuParams::from_point(&Point(vec![("variant", variant), ("relink", "0")]));
        assert!(!off.unwrap().relink, "{variant}: relink = 0 copies");
        assert_eq!(p.elite, pfsp_gpu::DEFAULT_ELITE);
        let p = GpuParams::from_point(&Point(vec![
            ("variant", variant),
            ("relink", "1"),
            ("elite", "16"),
        ]))
        .unwrap();
        assert!(p.relink && p.elite == 16, "{variant}");
        p.check(&inst, &device).unwrap();
        for (name, bad) in [("relink", "2"), ("elite", "0"), ("elite", "5000")] {
            let err =
                GpuParams::from_point(&Point(vec![("variant", variant), (name, bad)])).unwrap_err();
            assert!(
                err.contains(&format!("`{name}`")),
                "{variant} {name}: {err}"
            );
        }
        let err = GpuParams {
            elite: 0,
            ..GpuParams::new(GpuAlgorithm::from_name(variant).unwrap())
        }
        .check(&inst, &device)
        .unwrap_err();
        assert!(err.contains("elite"), "{err}");
    }
}

#[test]
fn solve_flags_turn_relinking_on_and_name_themselves_in_errors() {
    use solvers::family::Family;
    use solvers::gpu::solve_flags::{FlagValue, GivenFlag, SolveConfig};
    let relink = GivenFlag {
        flag: "--relink",
        value: FlagValue::Int(1),
    };
    let elite = |e: i64| GivenFlag {
        flag: "--elite",
        value: FlagValue::Int(e),
    };
    let algo = |a: &str| GivenFlag {
        flag: "--algo",
        value: FlagValue::Text(a.into()),
    };
    let plan = |given: &[GivenFlag]| SolveConfig::from_flags(Family::Pfsp, given, &[]);
    for variant in ["ig-block", "ig-warp"] {
        plan(&[algo(variant), relink.clone(), elite(4)]).unwrap();
        let err = plan(&[algo(variant), relink.clone(), elite(0)]).unwrap_err();
        assert!(err.starts_with("--elite"), "{err}");
    }
    // The default variant takes them too.
    plan(std::slice::from_ref(&relink)).unwrap();
    let err = plan(&[algo("tabu-prefix"), relink]).unwrap_err();
    assert!(
        err.contains("--relink") && err.contains("does not apply"),
        "{err}"
    );
}

/// Several ig-block walks per block: only where the tables live in global memory, a bounded
/// count that divides the walks and keeps the block within 1024 threads; the staged times stay
/// in shared memory only while every walk's sequences fit beside them.
#[test]
fn ig_block_walks_per_block_are_checked_and_change_the_variant() {
    let device = h100();
    let big = pfsp::generate(800, 60, 1);
    let small = pfsp::generate(50, 20, 1);
    let with = |w: u32| GpuParams {
        walks_per_block: w,
        ..GpuParams::new(GpuAlgorithm::IgBlock)
    };
    // The default is one walk per block, and its variant is the one it always was.
    assert_eq!(GpuParams::new(GpuAlgorithm::IgBlock).walks_per_block, 1);
    let v = with(1).variant_for(&big, Arch::SM90, OPTIN);
    assert!(!v.defines.contains_key("IG_WALKS"));
    for w in [2, 4, 8] {
        with(w)
            .check(&big, &device)
            .unwrap_or_else(|e| panic!("{w} walks per block at 800 x 60: {e}"));
        let v = with(w).variant_for(&big, Arch::SM90, OPTIN);
        assert_eq!(v.defines["IG_WALKS"], w.to_string());
        assert_eq!(v.defines["IG_GLOBAL_TABLES"], "1");
    }
    // 800 x 60: the times (204,800 B) and two walks' sequences and static parts (2 x 13,824 B)
    // fill the H100's 232,448 B exactly; a third walk moves the times out of shared memory.
    assert_eq!(
        pfsp_gpu::IgLayout::of(&with(2), &big, OPTIN),
        pfsp_gpu::IgLayout::GlobalTables { shared_times: true }
    );
    assert_eq!(
        pfsp_gpu::IgLayout::of(&with(3), &big, OPTIN),
        pfsp_gpu::IgLayout::GlobalTables {
            shared_times: false
        }
    );
    let err = |p: GpuParams, inst: &Instance| p.check(inst, &device).unwrap_err();
    assert!(err(with(0), &big).contains("walks per block must be in 1..=8"));
    assert!(err(with(9), &big).contains("walks per block must be in 1..=8"));
    // Shared tables have nothing to share.
    let e = err(with(2), &small);
    assert!(e.contains("--layout global"), "{e}");
    let global = GpuParams {
        tables: pfsp_gpu::IgwTables::Global,
        ..with(2)
    };
    global.check(&small, &device).unwrap();
    // Every walk's four sequences must fit: 8 walks of 2000 jobs need 264,192 bytes.
    let long = pfsp::generate(2000, 5, 1);
    let e = err(
        GpuParams {
            tables: pfsp_gpu::IgwTables::Global,
            ..with(8)
        },
        &long,
    );
    assert!(e.contains("264192 bytes"), "{e}");
    let e = err(
        GpuParams {
            blocks: 6,
            ..with(4)
        },
        &big,
    );
    assert!(e.contains("multiple of the walks per block"), "{e}");
    let e = err(
        GpuParams {
            threads_per_block: 512,
            ..with(4)
        },
        &big,
    );
    assert!(e.contains("2048 threads per block"), "{e}");
    // Bundles written before the field existed run one walk per block.
    let mut json = serde_json::to_value(with(1)).unwrap();
    json.as_object_mut().unwrap().remove("walks_per_block");
    let old: GpuParams = serde_json::from_value(json).unwrap();
    assert_eq!(old.walks_per_block, 1);
}

/// Whether NVRTC can compile here; says so when not, and fails where MATS_REQUIRE_NVRTC=1.
fn nvrtc_or_skip() -> bool {
    if kernels::nvrtc::available() {
        return true;
    }
    assert!(
        !std::env::var("MATS_REQUIRE_NVRTC").is_ok_and(|v| v == "1"),
        "MATS_REQUIRE_NVRTC=1 but NVRTC cannot be loaded"
    );
    println!("skipped: NVRTC not available");
    false
}

/// The labelled variants compiled (on every core at once), in the order asked.
fn compile_all(variants: Vec<(String, kernels::Variant)>) -> Vec<(String, kernels::Compiled)> {
    let (labels, variants): (Vec<String>, Vec<kernels::Variant>) = variants.into_iter().unzip();
    let compiled = kernels::nvrtc::compile_all(&variants);
    labels
        .into_iter()
        .zip(compiled)
        .map(|(label, c)| {
            let c = c.unwrap_or_else(|e| panic!("{label}: {e}"));
            (label, c)
        })
        .collect()
}

/// ig-block compiles with its tables in either place and with 1 to 4 machines per lane of the
/// wavefront, and ig-grid with its tables in either place (NVRTC only; skipped without it
/// unless MATS_REQUIRE_NVRTC=1).
#[test]
fn ig_block_compiles_for_each_table_place_and_machine_count() {
    if !nvrtc_or_skip() {
        return;
    }
    // Several walks per block (named barriers), with the times staged (2) and not (4).
    let big = pfsp::generate(800, 60, 1);
    let mut block_variants = Vec::new();
    for w in [2, 4] {
        let params = GpuParams {
            walks_per_block: w,
            ..GpuParams::new(GpuAlgorithm::IgBlock)
        };
        let variant = params.variant_for(&big, Arch::SM90, OPTIN);
        block_variants.push((format!("800x60, {w} walks per block"), variant));
    }
    for (n, m) in [(50, 20), (40, 45), (800, 60), (30, 100), (20, 128)] {
        let inst = pfsp::generate(n, m, 1);
        for tables in [pfsp_gpu::IgwTables::Shared, pfsp_gpu::IgwTables::Global] {
            let params = GpuParams {
                tables,
                ..GpuParams::new(GpuAlgorithm::IgBlock)
            };
            // A 48 KiB device keeps the times of the larger instances in global memory.
            for optin in [OPTIN, 48 * 1024] {
                let variant = params.variant_for(&inst, Arch::SM90, optin);
                let layout = pfsp_gpu::IgLayout::of(&params, &inst, optin);
                block_variants.push((format!("{n}x{m} {} {layout:?}", tables.name()), variant));
            }
        }
    }
    // ig-grid shares ig-common.cuh: its three table places, and the fused evaluation's
    // table kernel.
    // 500 x 100: the fused evaluation with four machines per lane.
    let mut grid_variants = Vec::new();
    let mut grid_entries = Vec::new();
    for (n, m) in [(200, 20), (800, 60), (20, 128), (500, 100)] {
        let inst = pfsp::generate(n, m, 1);
        for tables in [
            pfsp_gpu::IgwTables::Auto,
            pfsp_gpu::IgwTables::Shared,
            pfsp_gpu::IgwTables::Global,
        ] {
            let params = GpuParams {
                tables,
                ..GpuParams::new(GpuAlgorithm::IgGrid)
            };
            let variant = params.variant_for(&inst, Arch::SM90, OPTIN);
            let place = pfsp_gpu::GridTables::of(tables, &inst, OPTIN);
            let mut entries = vec!["pfsp_ig_grid_moves"];
            if place == pfsp_gpu::GridTables::PerWalk {
                entries.push("pfsp_ig_grid_tables");
            }
            grid_variants.push((format!("ig-grid {n}x{m} {}", place.name()), variant));
            grid_entries.push(entries);
        }
    }
    let grid_count = grid_variants.len();
    let mut compiled = compile_all(grid_variants.into_iter().chain(block_variants).collect());
    let block_compiled = compiled.split_off(grid_count);
    for ((label, compiled), entries) in compiled.iter().zip(&grid_entries) {
        for entry in entries {
            let r = compiled.resources_of(entry).expect("resources");
            println!(
                "{label} {entry}: {} registers, {} B spilled",
                r.registers, r.spill_store_bytes
            );
            assert_eq!(r.spill_store_bytes, 0, "{label} {entry}");
        }
    }
    for (label, compiled) in &block_compiled {
        let r = compiled.resources_of("pfsp_ig_block").expect("resources");
        println!(
            "{label}: {} registers, {} B spilled",
            r.registers, r.spill_store_bytes
        );
    }
}

/// ig-grid's limits: walks 1..=64, its block size, destruction and temperature as ig-block's,
/// and tables in global memory within a quarter of the device, each refused with the parameter
/// (or the way out) named; the variant is specialised to the tables' place.
#[test]
fn ig_grid_limits_name_the_parameter_and_the_memory() {
    let device = h100();
    let small = pfsp::generate(100, 20, 1);
    let grid = |f: &dyn Fn(&mut GpuParams)| {
        let mut p = GpuParams::new(GpuAlgorithm::IgGrid);
        f(&mut p);
        p
    };
    grid(&|_| {}).check(&small, &device).unwrap();
    for (what, params) in [
        ("walks", grid(&|p| p.blocks = 65)),
        ("threads", grid(&|p| p.threads_per_block = 32)),
        ("threads", grid(&|p| p.threads_per_block = 96 + 1)),
        ("destruction", grid(&|p| p.destruction = 0)),
        ("temperature", grid(&|p| p.temperature = f64::NAN)),
    ] {
        let err = params.check(&small, &device).unwrap_err();
        assert!(err.contains(what), "{what}: {err}");
    }
    // The fused evaluation (auto where two blocks' tables do not fit) runs two warps per
    // block.
    let err = grid(&|p| p.threads_per_block = 128)
        .check(&pfsp::generate(800, 60, 1), &device)
        .unwrap_err();
    assert!(err.contains("64") && err.contains("--layout"), "{err}");
    let global = |f: &dyn Fn(&mut GpuParams)| {
        grid(&|p| {
            p.tables = pfsp_gpu::IgwTables::Global;
            f(p)
        })
    };
    global(&|p| p.threads_per_block = 128)
        .check(&small, &device)
        .unwrap();
    // 2048 x 128, tables per block in global memory: 4.3 GB per walk; 8 walks exceed a
    // quarter of 80 GB. Per walk (the default) they take 2 MB each.
    let huge = pfsp::generate(2048, 128, 1);
    global(&|p| p.blocks = 2).check(&huge, &device).unwrap();
    let err = global(&|p| p.blocks = 8).check(&huge, &device).unwrap_err();
    assert!(err.contains("--solutions") && err.contains("GB"), "{err}");
    grid(&|p| p.blocks = 64).check(&huge, &device).unwrap();
    // Tables in shared memory where one block's do not fit: the flag and the way out named.
    let err = grid(&|p| p.tables = pfsp_gpu::IgwTables::Shared)
        .check(&huge, &device)
        .unwrap_err();
    assert!(
        err.contains("--layout shared") && err.contains("auto"),
        "{err}"
    );
    // auto: every block's tables in shared memory where two blocks fit (100 x 20), the fused
    // evaluation where they do not (800 x 60).
    let large = pfsp::generate(800, 60, 1);
    let defines = |params: &GpuParams, inst: &Instance| {
        format!("{:?}", params.variant_for(inst, Arch::SM90, OPTIN))
    };
    assert!(!defines(&grid(&|_| {}), &small).contains("IG_GRID_FUSED"));
    assert!(!defines(&grid(&|_| {}), &small).contains("IG_GLOBAL_TABLES"));
    assert!(defines(&grid(&|_| {}), &large).contains("IG_GRID_FUSED"));
    assert!(defines(&global(&|_| {}), &small).contains("IG_GLOBAL_TABLES"));
    grid(&|p| p.threads_per_block = 128)
        .check(&small, &device)
        .unwrap();
}

/// `--beam` and `--beam-idle-weight` reach ig-block and ig-grid (the variant each instance
/// runs), are refused by the others, and a beam the device cannot hold is refused up front
/// with the width and the memory named.
#[test]
fn beam_starts_are_parameters_of_ig_block_and_ig_grid() {
    use solvers::family::{Family, Instance as AnyInstance};
    use solvers::gpu::solve_flags::{FlagValue, GivenFlag, SolveConfig};
    use solvers::gpu::GpuWorkload;
    let device = h100();
    let p = GpuParams::from_point(&Point(vec![
        ("variant", "ig-block"),
        ("beam", "65536"),
        ("beam_idle_weight", "3"),
    ]))
    .unwrap();
    assert_eq!((p.beam, p.beam_idle_weight), (65536, 3));
    assert_eq!(GpuParams::new(GpuAlgorithm::IgBlock).beam, 0);
    let inst = pfsp::generate(200, 20, 1);
    p.check(&inst, &device).unwrap();
    let warp = GpuParams {
        beam: 1024,
        ..GpuParams::new(GpuAlgorithm::IgWarp)
    };
    let err = warp.check(&inst, &device).unwrap_err();
    assert!(err.contains("--beam") && err.contains("ig-warp"), "{err}");
    // 2^25 nodes x 200 jobs passes the 2^32 children a level may have.
    let huge = GpuParams {
        beam: 1 << 25,
        ..GpuParams::new(GpuAlgorithm::IgBlock)
    };
    let err = huge.check(&inst, &device).unwrap_err();
    assert!(err.contains("children per level"), "{err}");
    // Within the keys but not the memory of a small device.
    let small_device = DeviceInfo {
        total_memory_bytes: 1 << 30,
        ..h100()
    };
    let wide = GpuParams {
        beam: 1 << 20,
        ..GpuParams::new(GpuAlgorithm::IgBlock)
    };
    let err = wide.check(&inst, &small_device).unwrap_err();
    assert!(
        err.contains("--beam 1048576") && err.contains("device memory"),
        "{err}"
    );
    let weight = GpuParams {
        beam: 1024,
        beam_idle_weight: 101,
        ..GpuParams::new(GpuAlgorithm::IgBlock)
    };
    assert!(weight
        .check(&inst, &device)
        .unwrap_err()
        .contains("idle weight"));
    // With `auto` (mats solve's default) too, rather than running without a beam.
    let auto_weight = GpuParams {
        beam: pfsp_gpu::BEAM_AUTO,
        ..weight.clone()
    };
    let err = auto_weight.check(&inst, &device).unwrap_err();
    assert!(err.contains("idle weight"), "{err}");
    // From `mats solve`: taken by the variant each instance runs, ig-grid at 800 x 60.
    let beam = GivenFlag {
        flag: "--beam",
        value: FlagValue::Int(4096),
    };
    for (jobs, machines, variant) in [(100, 20, "IgBlock"), (800, 60, "IgGrid")] {
        let inst = AnyInstance::Pfsp(pfsp::generate(jobs, machines, 1));
        let config = SolveConfig::from_flags(Family::Pfsp, std::slice::from_ref(&beam), &[])
            .unwrap()
            .fit(&inst, &device)
            .unwrap();
        let shown = format!("{config:?}");
        assert!(
            shown.contains(variant) && shown.contains("beam: 4096"),
            "{shown}"
        );
    }
    let algo = GivenFlag {
        flag: "--algo",
        value: FlagValue::Text("tabu-prefix".into()),
    };
    let err = SolveConfig::from_flags(Family::Pfsp, &[algo, beam], &[])
        .and_then(|c| c.fit(&AnyInstance::Pfsp(pfsp::generate(50, 20, 1)), &device));
    assert!(err.unwrap_err().contains("--beam"));
}

/// `--beam auto` (`mats solve`'s default): the widest width the memory and the keys allow under
/// a time limit, none without one, none where no width fits; a set width as set; nothing for
/// the variants that take no beam.
#[test]
fn beam_auto_picks_a_width_only_under_a_time_limit() {
    use solvers::pfsp::gpu::beam::{auto_width, AUTO_MAX_WIDTH};
    let memory = 80u64 << 30;
    let auto = GpuParams {
        beam: pfsp_gpu::BEAM_AUTO,
        ..GpuParams::new(GpuAlgorithm::IgBlock)
    };
    let inst = pfsp::generate(200, 20, 1);
    assert_eq!(auto.beam_width(&inst, true, memory), Some(AUTO_MAX_WIDTH));
    assert_eq!(auto.beam_width(&inst, false, memory), None);
    // A quarter of 4 GiB holds a narrower beam only.
    let narrow = auto.beam_width(&inst, true, 4 << 30).unwrap();
    assert!(
        narrow < AUTO_MAX_WIDTH && narrow.is_power_of_two(),
        "{narrow}"
    );
    assert!(pfsp_gpu::beam::device_bytes(&inst, narrow) as u64 <= 1 << 30);
    assert!(pfsp_gpu::beam::device_bytes(&inst, 2 * narrow) as u64 > 1 << 30);
    // 2000 jobs with times so large (a sum near 10^12, within the kernels' 2^41) that no
    // width leaves the guide its bits beside the index's: walks from NEH, not an error.
    let base = pfsp::generate(2000, 5, 1);
    let times = base
        .times_machine_major()
        .iter()
        .map(|&t| t * 2_000_000)
        .collect();
    let large = Instance::new("large", 2000, 5, times).unwrap();
    assert_eq!(auto_width(&large, memory, 0), None);
    assert_eq!(auto.beam_width(&large, true, memory), None);
    auto.check(&large, &h100()).unwrap();
    let set = GpuParams {
        beam: 4096,
        ..auto.clone()
    };
    assert_eq!(set.beam_width(&inst, false, memory), Some(4096));
    let off = GpuParams {
        beam: 0,
        ..auto.clone()
    };
    assert_eq!(off.beam_width(&inst, true, memory), None);
    let tabu = GpuParams {
        beam: pfsp_gpu::BEAM_AUTO,
        ..GpuParams::new(GpuAlgorithm::TabuPrefix)
    };
    assert_eq!(tabu.beam_width(&inst, true, memory), None);
    tabu.check(&inst, &h100()).unwrap();
    // `mats solve`'s default is auto.
    use solvers::gpu::solve_flags::SolveConfig;
    let config = SolveConfig::from_flags(solvers::family::Family::Pfsp, &[], &[])
        .unwrap()
        .fit(&solvers::family::Instance::Pfsp(inst.clone()), &h100())
        .unwrap();
    assert!(
        format!("{config:?}").contains(&format!("beam: {}", usize::MAX)),
        "{config:?}"
    );
}

/// The beam kernels compile for int32 and int64 completion times and 5 to 128 machines, and
/// the two launched with 1024 threads (count, select) fit 64 registers a thread, so that they
/// launch at all (NVRTC only; skipped without it unless MATS_REQUIRE_NVRTC=1).
#[test]
fn beam_kernels_compile_and_fit_their_tile_launch() {
    if !nvrtc_or_skip() {
        return;
    }
    let wide = {
        let base = pfsp::generate(12, 4, 7);
        let times = base
            .times_machine_major()
            .iter()
            .map(|&t| t * 2_000_000)
            .collect();
        Instance::new("wide", 12, 4, times).unwrap()
    };
    let mut cases: Vec<Instance> = [(20, 5), (33, 37), (200, 20), (800, 60), (20, 128)]
        .iter()
        .map(|&(n, m)| pfsp::generate(n, m, 1))
        .collect();
    cases.push(wide);
    let variants = cases
        .iter()
        .map(|inst| {
            let label = format!("beam {}x{}", inst.jobs, inst.machines);
            (label, pfsp_gpu::beam::variant(inst, Arch::SM90, &[]))
        })
        .collect();
    for (label, compiled) in compile_all(variants) {
        for entry in ["pfsp_beam_count", "pfsp_beam_select"] {
            let r = compiled.resources_of(entry).expect("resources");
            println!(
                "{label} {entry}: {} registers, {} B spilled",
                r.registers, r.spill_store_bytes
            );
            assert!(r.registers <= 64, "{label} {entry}");
        }
    }
}

// The layout line says where the walks started: from the beam's width and best, from NEH when
// a beam search ran but finished no width in its share of the time (it used to say nothing
// under `--beam auto`), and nothing about a beam where none ran.
#[test]
fn the_layout_says_where_the_walks_started() {
    use solvers::pfsp::gpu::beam_layout;
    let layout = || "shared".to_string();
    assert_eq!(
        beam_layout(layout(), Some(65536), Some((16384, 11200))),
        "shared, walks from a beam search of width 16384 (best 11200)"
    );
    assert_eq!(
        beam_layout(layout(), Some(1 << 20), None),
        "shared, walks from NEH (no beam search of width up to 1048576 finished within its share of the time)"
    );
    assert_eq!(beam_layout(layout(), None, None), "shared");
}
