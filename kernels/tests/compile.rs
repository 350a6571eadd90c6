//! Every kernel variant compiles to sm_90 CUBIN with representative flag sets, and ptxas'
//! resource report is read. Runs without a GPU: NVRTC alone is enough. Without NVRTC the test
//! says it skipped, unless MATS_REQUIRE_NVRTC=1 (set by .ci/run), where it fails.

use kernels::{source, Arch, CacheStatus, KernelCache, KernelSource, Variant};

fn nvrtc_or_skip(test: &str) -> bool {
    if kernels::nvrtc::available() {
        return true;
    }
    if std::env::var("MATS_REQUIRE_NVRTC").is_ok_and(|v| v == "1") {
        panic!("{test}: MATS_REQUIRE_NVRTC=1 but NVRTC (libnvrtc.so.13) cannot be loaded");
    }
    println!("{test}: skipped: NVRTC not available (set LD_LIBRARY_PATH to its lib folder)");
    false
}

/// Flag sets that cover the tuner's axes: ptxas level, register cap, front-end math flags.
const FLAG_SETS: &[&[&str]] = &[
    &["--ptxas-options=-O2", "-maxrregcount=32"],
    &[
        "--ptxas-options=-O3",
        "--ptxas-options=--allow-expensive-optimizations=true",
    ],
    &["--ptxas-options=-O0"],
    &[
        "--use_fast_math",
        "--extra-device-vectorization",
        "--dopt=on",
    ],
    &[
        "--fmad=false",
        "--prec-div=true",
        "--prec-sqrt=true",
        "--ftz=false",
    ],
];

#[test]
fn every_kernel_compiles_for_sm90_with_representative_flags() {
    if !nvrtc_or_skip("every_kernel_compiles_for_sm90_with_representative_flags") {
        return;
    }
    println!("NVRTC {:?}", kernels::nvrtc::version().unwrap());
    let jobs: Vec<(&KernelSource, &[&str])> = source::all()
        .iter()
        .flat_map(|source| FLAG_SETS.iter().map(move |flags| (source, *flags)))
        .collect();
    // Each source's example variant with each flag set, compiled on every core at once.
    let variants: Vec<Variant> = jobs
        .iter()
        .map(|(source, flags)| {
            flags
                .iter()
                .fold(source.example_variant(Arch::SM90), |v, f| v.flag(f))
        })
        .collect();
    for ((source, flags), compiled) in jobs.iter().zip(kernels::nvrtc::compile_all(&variants)) {
        let compiled = compiled.unwrap_or_else(|e| panic!("{e}"));
        assert!(compiled.cubin.len() > 100, "{}: empty CUBIN", source.id);
        for entry in source.entries {
            let r = compiled.resources_of(entry).unwrap_or_else(|| {
                panic!(
                    "{}::{entry}: no resource report in\n{}",
                    source.id, compiled.log
                )
            });
            assert!(
                r.registers > 0,
                "{}::{entry}: 0 registers?\n{}",
                source.id,
                compiled.log
            );
            println!(
                "{:<16} {:<22} {:<75} regs {:>3} stack {:>4} spill st/ld {:>3}/{:<3} smem {}",
                source.id,
                entry,
                flags.join(" "),
                r.registers,
                r.stack_frame_bytes,
                r.spill_store_bytes,
                r.spill_load_bytes,
                r.shared_bytes
            );
        }
    }
}

#[test]
fn compile_errors_carry_the_log_and_options() {
    if !nvrtc_or_skip("compile_errors_carry_the_log_and_options") {
        return;
    }
    let e =
        kernels::nvrtc::compile(&Variant::new("probe/busy", Arch::SM90).flag("--no-such-option"))
            .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("probe/busy") && text.contains("--no-such-option"),
        "{text}"
    );
}

#[test]
fn disk_cache_hits_on_the_second_request_and_keys_differ_by_flags() {
    if !nvrtc_or_skip("disk_cache_hits_on_the_second_request_and_keys_differ_by_flags") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(dir.path());
    let variant = Variant::new("probe/busy", Arch::SM90).flag("--ptxas-options=-O1");
    let (first, status1) = cache.get_or_compile(&variant).unwrap();
    let (second, status2) = cache.get_or_compile(&variant).unwrap();
    assert_eq!((status1, status2), (CacheStatus::Miss, CacheStatus::Hit));
    assert_eq!(first.cubin, second.cubin);
    assert_eq!(first.resources, second.resources);
    let version = kernels::nvrtc::version().unwrap();
    let other = variant.clone().define("UNUSED", 1);
    assert_ne!(
        KernelCache::key(&variant, version).unwrap(),
        KernelCache::key(&other, version).unwrap()
    );
}

/// A cache folder that cannot be written costs the cache, not the kernel.
#[test]
fn an_unwritable_cache_still_compiles() {
    if !nvrtc_or_skip("an_unwritable_cache_still_compiles") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    // A folder below a file cannot be made, by root either.
    let cache = KernelCache::new(file.join("kernels"));
    let variant = Variant::new("probe/busy", Arch::SM90);
    let (compiled, status) = cache.get_or_compile(&variant).unwrap();
    assert_eq!(status, CacheStatus::Miss);
    assert!(!compiled.cubin.is_empty());
}

/// A run's time limit holds on a cold cache: a compile that cannot finish by the cache's
/// deadline is given up at the deadline, stores nothing, and the same variant compiles and is
/// stored when there is time.
#[test]
fn a_cache_with_a_deadline_gives_up_on_a_compile_at_the_deadline() {
    if !nvrtc_or_skip("a_cache_with_a_deadline_gives_up_on_a_compile_at_the_deadline") {
        return;
    }
    use std::time::{Duration, Instant};
    let tmp = tempfile::tempdir().unwrap();
    // The largest of the shipped kernels compiles in well over 50 ms anywhere.
    let variant = source::all()
        .iter()
        .find(|s| s.id == "qap/rots-block")
        .expect("qap/rots-block is shipped")
        .example_variant(Arch::SM90);
    let entries = || std::fs::read_dir(tmp.path()).map_or(0, |d| d.count());

    let started = Instant::now();
    let cache = KernelCache::new(tmp.path()).until(started + Duration::from_millis(50));
    match cache.get_or_compile(&variant) {
        Err(kernels::KernelError::OutOfTime { source_id, .. }) => {
            assert_eq!(source_id, "qap/rots-block")
        }
        other => panic!("expected OutOfTime, got {:?}", other.map(|(_, s)| s)),
    }
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_millis(500),
        "gave up after {waited:?}"
    );
    assert_eq!(entries(), 0, "an abandoned compile stored something");

    // A deadline already past costs no compile at all.
    let past = KernelCache::new(tmp.path()).until(Instant::now() - Duration::from_millis(1));
    assert!(matches!(
        past.get_or_compile(&variant),
        Err(kernels::KernelError::OutOfTime { .. })
    ));

    let roomy = KernelCache::new(tmp.path()).until(Instant::now() + Duration::from_secs(600));
    let (_, status) = roomy.get_or_compile(&variant).unwrap();
    assert_eq!(status, CacheStatus::Miss);
    // A hit never waits on anything, whatever the deadline.
    let (_, status) = past.get_or_compile(&variant).unwrap();
    assert_eq!(status, CacheStatus::Hit);

    // The abandoned compile is counted until it ends (`mats` then ends without the exit
    // destructors that crash under a running NVRTC); this test process waits for it instead.
    let waiting = Instant::now();
    while kernels::compiles_running() {
        assert!(
            waiting.elapsed() < Duration::from_secs(120),
            "a compile never ended"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
