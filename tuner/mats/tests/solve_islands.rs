//! `mats solve --gpus`: its flags are checked before any GPU is needed; on a GPU, an island
//! solve of every family (two islands on GPU 0 where the machine has one) reports per-GPU
//! work, exchanges and a re-scored best within the time limit. Without a GPU those tests say
//! they skipped.

use std::time::Instant;

mod common;
use common::{data, error_of, mats};

#[test]
fn island_flags_are_checked_before_any_gpu_is_needed() {
    let qap = data("qap/tai12a.dat");
    let cases: [(&[&str], &str); 6] = [
        (
            &["--gpus", "0,1", "--time-limit", "1"],
            "--gpus applies to --backend gpu",
        ),
        (&["--backend", "gpu", "--gpus", "0,1"], "give --time-limit"),
        (
            &[
                "--backend",
                "gpu",
                "--gpus",
                "all",
                "--time-limit",
                "1",
                "--iterations",
                "5",
            ],
            "--iterations does not apply to an island solve",
        ),
        (
            &["--backend", "gpu", "--gpus", "0,x", "--time-limit", "1"],
            "--gpus takes `all` or GPU ordinals",
        ),
        (
            &[
                "--backend",
                "gpu",
                "--gpus",
                "0,1",
                "--time-limit",
                "1",
                "--exchange-interval",
                "0",
            ],
            "--exchange-interval must be a positive number",
        ),
        (
            &[
                "--backend",
                "gpu",
                "--gpus",
                "0,1",
                "--time-limit",
                "1",
                "--exchange-interval",
                "0.001",
            ],
            "at least 0.05, found 0.001",
        ),
    ];
    for (flags, expected) in cases {
        let mut args = vec!["solve", qap.as_str()];
        args.extend_from_slice(flags);
        let err = error_of(&args);
        assert!(err.contains(expected), "{flags:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // clap refuses --gpu with --gpus, and --exchange-interval without --gpus.
    error_of(&[
        "solve",
        &qap,
        "--backend",
        "gpu",
        "--gpu",
        "0",
        "--gpus",
        "0,1",
    ]);
    error_of(&[
        "solve",
        &qap,
        "--backend",
        "gpu",
        "--exchange-interval",
        "1",
    ]);
}

/// `--gpus` for a test: every GPU where there are several, else GPU 0 twice.
fn islands_or_skip(test: &str) -> Option<String> {
    if !kernels::gpu::test_gpu_or_skip(test) {
        return None;
    }
    let count = kernels::gpu::device_count().unwrap_or(0);
    Some(if count > 1 {
        "all".into()
    } else {
        "0,0".into()
    })
}

#[test]
fn island_solves_of_every_family_report_per_gpu_work_within_the_limit() {
    let Some(gpus) =
        islands_or_skip("island_solves_of_every_family_report_per_gpu_work_within_the_limit")
    else {
        return;
    };
    let files = [
        ("qap/tai20a.dat", None),
        ("pfsp/tai20_5.txt", Some("1")),
        ("tsp/berlin52.tsp", None),
        ("hwsw/crc32-synthetic.hwsw", None),
    ];
    for (file, index) in files {
        let path = data(file);
        let mut args = vec![
            "solve",
            path.as_str(),
            "--backend",
            "gpu",
            "--gpus",
            gpus.as_str(),
            // 5 s: a cold machine spends 1-2 s of the limit initialising the driver before
            // the first epoch, and the test wants at least two exchanges after it.
            "--time-limit",
            "5",
            "--exchange-interval",
            "0.5",
            "--json",
        ];
        if let Some(k) = index {
            args.extend(["--index", k]);
        }
        let began = Instant::now();
        let out = mats(&args);
        let took = began.elapsed().as_secs_f64();
        assert!(
            out.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(took < 5.5, "{file}: {took:.3} s for a 5 s limit");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let islands = &report["gpu"]["islands"];
        let rows = islands["per_gpu"].as_array().unwrap();
        assert!(rows.len() >= 2, "{file}: {islands}");
        assert!(
            islands["exchanges"].as_u64().unwrap() >= 2,
            "{file}: {islands}"
        );
        let best = report["objective"].as_i64().unwrap();
        let least = rows
            .iter()
            .filter_map(|r| r["best_objective"].as_i64())
            .min();
        assert_eq!(least, Some(best), "{file}");
        for row in rows {
            assert!(row["iterations"].as_u64().unwrap() > 0, "{file}: {row}");
            assert!(row["seeded_epochs"].as_u64().unwrap() >= 1, "{file}: {row}");
        }
        println!(
            "{file}: {} on {} islands, {}",
            best,
            rows.len(),
            islands["exchanges"]
        );
    }
}
