//! Prints the NVRTC options and program log of one variant, compiled twice in one process
//! (NVRTC caches in-process): `cargo run -p mats-kernels --example compile_log -- probe/busy [FLAG...]`.
fn main() {
    let mut args = std::env::args().skip(1);
    let source = args.next().unwrap_or_else(|| "probe/busy".into());
    // MATS_OPEN_GPU=1 opens a CUDA context first, as `mats bench measure` does.
    if std::env::var("MATS_OPEN_GPU").is_ok_and(|v| v == "1") {
        let gpu = kernels::gpu::Gpu::open(0).expect("GPU 0 opens");
        std::mem::forget(gpu);
    }
    let mut variant = kernels::source::find(&source)
        .expect("known source")
        .example_variant(kernels::Arch::SM90);
    for flag in args {
        variant = variant.flag(&flag);
    }
    for attempt in ["first", "second"] {
        match kernels::nvrtc::compile(&variant) {
            Ok(c) => println!(
                "{attempt}: {:.1} ms {:?}\n{}\n{:?}",
                c.compile_seconds * 1e3,
                c.options,
                c.log,
                c.resources
            ),
            Err(e) => eprintln!("{e}"),
        }
    }
}
