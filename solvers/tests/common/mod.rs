//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The repository's own data folder (always present).
pub fn repo_data() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../data"))
}

/// `../shared/data` beside the repository, when this checkout has it. Tests that need it say
/// that they skipped, so a green run without it is not mistaken for full coverage.
pub fn shared_data(test: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data"));
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("{test}: skipped: ../shared/data not found beside the repository");
        None
    }
}
