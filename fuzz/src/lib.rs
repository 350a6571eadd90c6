//! Fuzzing of every input format mats reads, on stable Rust (no sanitizer coverage, no
//! nightly): seeds from the shipped files, byte- and token-level mutations, each input run
//! under `catch_unwind` with its time and peak memory measured (`alloc::Counting`).
//!
//! - `targets`: one target per format (the four instance formats, campaign and space TOML,
//!   tuned-bundle index and manifest, `mats solve` arguments), each a function of bytes.
//! - `mutate`: the mutators.
//! - `engine`: the loop, its corpus (inputs that reached a new outcome are kept) and report.
//! - `alloc`: a counting global allocator for peak memory per input.
//!
//! `cargo run --release -p mats-fuzz -- --help`; figures and the long-run command are in
//! docs/reliability.md; `tests/smoke.rs` is the time-boxed run of `cargo test`.

pub mod alloc;
pub mod engine;
pub mod mutate;
pub mod targets;
