//! Prints the NVRTC options and program log of one variant, compiled twice in one process
//! (NVRTC caches in-process): `cargo run -p mats-kernels --example compile_log -- probe/busy [FLAG...]`.
fn main() {
    let mut args = std::env::args().skip(1);
    let source = args.next().unwrap_or_else(|| "probe/busy".into());
    let mut variant = kernels::Variant::new(&source, kernels::Arch::SM90);
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
