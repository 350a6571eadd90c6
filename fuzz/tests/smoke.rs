//! The time-boxed fuzz run of `cargo test` (and so of CI): every format for a few seconds,
//! from its shipped seeds, with no panic, no input slower than the timeout, and peak memory
//! within 64 x the input size + 64 MiB. `MATS_FUZZ_SECONDS` sets the seconds per format
//! (default 3: about half a minute in all, to keep CI short); docs/reliability.md has the
//! long run.

use std::time::Duration;

use fuzz::engine::{self, Settings};
use fuzz::targets::Target;

#[global_allocator]
static ALLOC: fuzz::alloc::Counting = fuzz::alloc::Counting;

#[test]
fn every_format_survives_a_time_boxed_fuzz_run() {
    let seconds: f64 = std::env::var("MATS_FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3.0);
    assert!(
        fuzz::alloc::counting(),
        "the counting allocator is installed"
    );
    engine::quiet_panics();
    let mut failures = Vec::new();
    for target in Target::ALL {
        assert!(!target.seeds().is_empty(), "{} has seeds", target.name());
        let settings = Settings {
            seed: 7,
            duration: Some(Duration::from_secs_f64(seconds)),
            // Tests run unoptimised dependencies in debug builds; be generous.
            timeout: Duration::from_secs(5),
            ..Settings::default()
        };
        let report = engine::run(target, &settings);
        println!("{}", report.line());
        assert!(report.inputs > 0, "{}", report.line());
        assert!(
            report.accepted > 0,
            "no input was accepted: {}",
            report.line()
        );
        if !report.clean() {
            failures.push(format!("{} {:?}", report.line(), report.panics));
        }
    }
    let _ = std::panic::take_hook();
    assert!(failures.is_empty(), "findings:\n{}", failures.join("\n"));
}
