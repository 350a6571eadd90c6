//! Variant validation needs no NVRTC.

use kernels::{Arch, KernelCache, Variant};

#[test]
fn reserved_and_bare_optimisation_flags_are_rejected() {
    let e = Variant::new("probe/busy", Arch::SM90)
        .flag("--gpu-architecture=sm_80")
        .nvrtc_options()
        .unwrap_err();
    assert!(e.contains("set by the runtime"), "{e}");
    let e = Variant::new("probe/busy", Arch::SM90)
        .flag("-O3")
        .nvrtc_options()
        .unwrap_err();
    assert!(e.contains("--ptxas-options=-O3"), "{e}");
    // A macro from a flag would override the runtime's size defines.
    for flag in [
        "-DQAP_N=60",
        "-D QAP_N=60",
        "--define-macro=PFSP_N=20",
        "-UTSP_K",
    ] {
        let e = Variant::new("probe/busy", Arch::SM90)
            .flag(flag)
            .nvrtc_options()
            .unwrap_err();
        assert!(e.contains("kind \"define\""), "{flag}: {e}");
    }
    let e = Variant::new("probe/busy", Arch::SM90)
        .define("1BAD", 2)
        .nvrtc_options()
        .unwrap_err();
    assert!(e.contains("C identifier"), "{e}");
    let e = Variant::new("qap/none", Arch::SM90)
        .nvrtc_options()
        .unwrap_err();
    assert!(
        e.contains("unknown kernel source") && e.contains("probe/busy"),
        "{e}"
    );
}

#[test]
fn options_carry_arch_report_defines_and_rdc() {
    let o = Variant::new("probe/dynamic", Arch::SM90)
        .define("CHUNK", 32)
        .flag("-maxrregcount=32")
        .nvrtc_options()
        .unwrap();
    assert_eq!(o[0], "--gpu-architecture=sm_90");
    assert!(o.contains(&"--ptxas-options=-v".to_string()));
    assert!(o.contains(&"--relocatable-device-code=true".to_string()));
    assert!(o.contains(&"-DCHUNK=32".to_string()));
    assert_eq!(o.last().unwrap(), "-maxrregcount=32");
}

#[test]
fn cache_key_depends_on_everything_that_changes_the_cubin() {
    let v = Variant::new("probe/busy", Arch::SM90);
    let k = |v: &Variant, nv| KernelCache::key(v, nv).unwrap();
    let base = k(&v, (13, 0));
    assert_eq!(base, k(&v.clone(), (13, 0)));
    assert_ne!(base, k(&v, (13, 1)));
    assert_ne!(base, k(&Variant::new("probe/busy", Arch(80)), (13, 0)));
    assert_ne!(base, k(&v.clone().flag("--use_fast_math"), (13, 0)));
    assert_ne!(base, k(&v.clone().define("X", 1), (13, 0)));
}
