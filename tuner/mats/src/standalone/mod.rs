//! Standalone tuned executables: `mats export DIR --binaries OUT/` writes one per class, a
//! copy of this `mats` binary with the class's bundles appended ([`payload`]); run as
//! `OUT/NAME INSTANCE [--time-limit S] [--seed N] [--index K] [--json]`, it unpacks them into a private
//! temporary folder and runs `mats solve --tuned` on that folder with the class named, so
//! whatever an export holds (budgets, fronts) reaches it unchanged.

pub mod payload;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Parser;

pub use payload::Header;

/// The arguments of a standalone executable (`NAME INSTANCE ...`).
#[derive(Debug, Parser)]
#[command(
    about = "A tuned mats solver for one class of instances (written by `mats export --binaries`)",
    disable_version_flag = true
)]
struct StandaloneArgs {
    /// Instance file (as for `mats solve`).
    #[arg(required_unless_present = "info")]
    instance: Option<PathBuf>,
    /// Wall-clock limit in seconds (default: the budget the class was tuned for).
    #[arg(long, value_name = "S", value_parser = positive_seconds)]
    time_limit: Option<f64>,
    /// Random seed (default as `mats solve`).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Which instance of a file that holds several (Taillard's flowshop files), 1-based.
    #[arg(long, value_name = "K")]
    index: Option<usize>,
    /// Print one JSON object (the fields of `mats solve --json`, docs/json.md).
    #[arg(long)]
    json: bool,
    /// Print what is embedded (class, campaign, GPU architecture, files) and exit.
    #[arg(long)]
    info: bool,
}

/// An argument error (exit status 2, as the docs promise) rather than the solve's own.
fn positive_seconds(text: &str) -> Result<f64, String> {
    let max = crate::commands::solve::MAX_TIME_LIMIT_S;
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= max => Ok(s),
        _ => Err(format!(
            "a positive number of seconds up to {max:e} expected, found {text:?}"
        )),
    }
}

/// In a standalone executable, runs it and returns its exit status; `None` in a plain `mats`
/// (the usual command line follows). `main` calls it before parsing any argument.
pub fn run_if_embedded() -> Option<ExitCode> {
    // No path to ourselves (no /proc), or one we cannot read (an execute-only file, a binary
    // replaced while it runs): nothing to detect, so this runs as plain mats.
    let exe = std::env::current_exe().ok()?;
    std::fs::File::open(&exe).ok()?;
    let header = match payload::read_header(&exe) {
        Ok(None) => return None,
        Ok(Some(header)) => header,
        Err(error) => return Some(fail("mats", &error)),
    };
    let args = match StandaloneArgs::try_parse_from(std::env::args_os()) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    let name = header.name.clone();
    match run(&exe, header, &args) {
        Ok(()) => Some(ExitCode::SUCCESS),
        Err(error) => Some(crate::output::exit_for(&error).unwrap_or_else(|| fail(&name, &error))),
    }
}

fn fail(name: &str, error: &anyhow::Error) -> ExitCode {
    eprintln!("{name}: error: {}", search::errors::one_line(error));
    ExitCode::FAILURE
}

fn run(exe: &Path, header: Header, args: &StandaloneArgs) -> Result<()> {
    if args.info {
        println!("{}", serde_json::to_string_pretty(&header)?);
        return Ok(());
    }
    check_machine(&header)?;
    let dir = tempfile::Builder::new()
        .prefix("mats-standalone-")
        .tempdir()
        .context("cannot create a temporary folder for the embedded bundle")?;
    // A closed pipe ends the process without dropping `dir`; a stop signal ends the solve
    // early (crate::interrupt), and `dir` is dropped on the way out as usual.
    crate::output::remove_at_exit(dir.path());
    let unpacked = payload::unpack(exe, dir.path())?;
    if header.arch.is_some() {
        accept_this_driver(dir.path(), &unpacked)?;
    }
    let solve = solve_args(dir.path(), &header.class, args)?;
    let solved = crate::commands::solve::run(&solve);
    // Errors name the export folder, which here is a temporary one the user never saw.
    let folder = dir.path().display().to_string();
    solved.map_err(|e| {
        let text = search::errors::one_line(&e);
        if text.contains(&folder) {
            anyhow::anyhow!(text.replace(&folder, &format!("{}'s export", header.name)))
        } else {
            e
        }
    })
}

/// The `mats solve --tuned` command line a standalone run stands for.
fn solve_args(dir: &Path, class: &str, args: &StandaloneArgs) -> Result<crate::cli::SolveArgs> {
    let mut argv: Vec<OsString> = ["mats", "solve", "--tuned"].map(OsString::from).into();
    argv.push(dir.into());
    argv.extend(["--tuned-class", class].map(OsString::from));
    if let Some(s) = args.time_limit {
        argv.extend([OsString::from("--time-limit"), s.to_string().into()]);
    }
    if let Some(n) = args.seed {
        argv.extend([OsString::from("--seed"), n.to_string().into()]);
    }
    if let Some(k) = args.index {
        argv.extend([OsString::from("--index"), k.to_string().into()]);
    }
    if args.json {
        argv.push("--json".into());
    }
    argv.push("--".into());
    argv.extend(args.instance.iter().map(OsString::from));
    match crate::cli::Cli::try_parse_from(argv)
        .context("the embedded solve command")?
        .command
    {
        crate::cli::Command::Solve(solve) => Ok(solve),
        _ => bail!("the embedded solve command parsed as another command"),
    }
}

/// Refuses a GPU executable on a machine whose GPU is of another architecture (or has none)
/// before anything is unpacked: its kernels would not load, and its tuning would not hold.
fn check_machine(header: &Header) -> Result<()> {
    let Some(arch) = header.arch else {
        return Ok(());
    };
    if !kernels::gpu::driver_available() {
        return Err(arch_error(header, arch, None));
    }
    let gpu = kernels::gpu::Gpu::open(0).context("opening GPU 0 to check its architecture")?;
    if gpu.info.arch.0 != arch {
        return Err(arch_error(
            header,
            arch,
            Some(format!("GPU 0 is {} ({})", gpu.info.name, gpu.info.arch)),
        ));
    }
    Ok(())
}

/// `mats solve --tuned` refuses a bundle measured under another CUDA driver (its timings
/// may not hold); a standalone executable exists to run on other machines of the same
/// architecture, so there the difference is a warning: the unpacked manifests' driver is
/// cleared (they are this run's private copies).
fn accept_this_driver(dir: &Path, header: &Header) -> Result<()> {
    let here = kernels::gpu::driver_version()
        .ok()
        .map(|(a, b)| format!("{a}.{b}"));
    let mut measured_under = BTreeSet::new();
    for entry in header
        .files
        .iter()
        .filter(|f| f.path.ends_with("manifest.json"))
    {
        let path = dir.join(&entry.path);
        let text = solvers::error::read_kind(
            &path,
            "a bundle's manifest.json",
            solvers::error::caps::MANIFEST,
        )
        .map_err(anyhow::Error::new)?;
        let mut manifest: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("the embedded {} is not a manifest", entry.path))?;
        let Some(driver) = manifest.get("driver").and_then(|d| d.as_str()) else {
            continue;
        };
        if Some(driver) == here.as_deref() {
            continue;
        }
        measured_under.insert(driver.to_string());
        manifest["driver"] = serde_json::Value::Null;
        std::fs::write(&path, serde_json::to_string_pretty(&manifest)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if !measured_under.is_empty() {
        eprintln!(
            "warning: {} was measured under CUDA driver {} and this machine has {}: it runs, \
             but its tuned timings may not hold here",
            header.name,
            measured_under.into_iter().collect::<Vec<_>>().join(", "),
            here.as_deref().unwrap_or("none")
        );
    }
    Ok(())
}

/// The one message for a machine that cannot run an executable built for `sm_{arch}`;
/// `found` names this machine's GPU (none: no CUDA driver).
fn arch_error(header: &Header, arch: u32, found: Option<String>) -> anyhow::Error {
    anyhow::anyhow!(
        "{} was tuned and built for {} (sm_{arch}) and runs only on GPUs of that architecture, \
         but {}; export it again from a campaign run on this machine's GPU",
        header.name,
        header.device,
        found.unwrap_or_else(|| "this machine has no CUDA driver (libcuda.so)".into())
    )
}

/// Writes one standalone executable per class of the export in `export` into `out`; returns
/// (class, executable) pairs.
/// Refuses a folder that holds another campaign's standalone executables unless `replace`:
/// `mats export` asks before it writes anything.
pub fn check_binaries_folder(out: &Path, campaign: &str, replace: bool) -> Result<()> {
    if replace {
        return Ok(());
    }
    if let Some((path, old)) = binaries_in(out)?
        .into_iter()
        .find(|(_, h)| h.campaign != campaign)
    {
        bail!(
            "{} holds {}, a standalone executable of campaign {:?}; write {campaign:?}'s into \
             another folder, or give --replace to remove that campaign's",
            out.display(),
            path.display(),
            old.campaign,
        );
    }
    Ok(())
}

/// The standalone executables in `out` (none where it does not exist yet); anything else
/// there (a damaged file, a plain program) is not ours to judge or remove.
fn binaries_in(out: &Path) -> Result<Vec<(PathBuf, Header)>> {
    if !out.is_dir() {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    for entry in std::fs::read_dir(out).with_context(|| format!("cannot list {}", out.display()))? {
        let path = entry?.path();
        if let (true, Ok(Some(header))) = (path.is_file(), payload::read_header(&path)) {
            found.push((path, header));
        }
    }
    Ok(found)
}

pub fn write_binaries(export: &Path, out: &Path, replace: bool) -> Result<Vec<(String, PathBuf)>> {
    let exe = std::env::current_exe()
        .context("cannot find the running mats executable to copy into standalone ones")?;
    let exe_len = payload::executable_len(&exe)?;
    let index = engine::bundle::Index::read(export)?;
    // The raw index: classes' entries may hold more than this build's `Index` knows of.
    let raw: serde_json::Value = serde_json::from_str(
        &solvers::error::read_kind(
            &export.join("index.json"),
            "an export's index.json",
            solvers::error::caps::INDEX,
        )
        .map_err(anyhow::Error::new)?,
    )
    .with_context(|| format!("{} is not an export's index", export.display()))?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let names = file_names(index.classes.keys().map(String::as_str));
    check_binaries_folder(out, &index.campaign, replace)?;
    // Those this export no longer writes would sit beside the new ones looking current.
    let stale = binaries_in(out)?
        .into_iter()
        .map(|(path, _)| path)
        .filter(|path| {
            !names
                .iter()
                .any(|n| path.file_name() == Some(std::ffi::OsStr::new(n)))
        });
    for path in stale {
        std::fs::remove_file(&path)
            .with_context(|| format!("cannot remove the stale executable {}", path.display()))?;
        eprintln!("removed the stale standalone executable {}", path.display());
    }
    let mut written = Vec::new();
    for (class, name) in index.classes.keys().zip(names) {
        let entry = &raw["classes"][class];
        let mut files = vec![("index.json".to_string(), export.join("index.json"))];
        for bundle in bundles_of(entry, export) {
            files.extend(files_under(&export.join(&bundle), &bundle)?);
        }
        let header = Header {
            name: name.clone(),
            class: class.clone(),
            campaign: index.campaign.clone(),
            family: index.family.clone(),
            backend: index.backend.clone(),
            device: index.device.clone(),
            arch: if index.backend == "gpu" {
                index.arch
            } else {
                None
            },
            mats_version: env!("CARGO_PKG_VERSION").into(),
            files: Vec::new(),
        };
        let path = out.join(&name);
        payload::write(&exe, exe_len, &files, header, &path)
            .with_context(|| format!("writing the standalone executable for class {class}"))?;
        written.push((class.clone(), path));
    }
    Ok(written)
}

/// Bundle folders a class entry names anywhere (per preference today; per budget or front
/// point in exports that record those): every string in it that is a bundle folder of the
/// export.
fn bundles_of(entry: &serde_json::Value, export: &Path) -> BTreeSet<String> {
    fn strings<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
        match v {
            serde_json::Value::String(s) => out.push(s),
            serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
            serde_json::Value::Object(m) => m.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    strings(entry, &mut found);
    found
        .into_iter()
        .filter(|s| {
            let p = Path::new(s);
            p.components().count() == 1
                && matches!(p.components().next(), Some(std::path::Component::Normal(_)))
                && export.join(s).join("manifest.json").is_file()
        })
        .map(str::to_string)
        .collect()
}

/// Regular files under `folder` (recursively), as (payload path, file) pairs.
fn files_under(folder: &Path, rel: &str) -> Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(folder)
        .with_context(|| format!("cannot list {}", folder.display()))?
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("cannot list {}", folder.display()))?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let file_name = e.file_name();
        let Some(name) = file_name.to_str() else {
            bail!("{}: a file name that is not UTF-8", e.path().display());
        };
        let kind = e
            .file_type()
            .with_context(|| format!("cannot read {}", e.path().display()))?;
        let rel = format!("{rel}/{name}");
        if kind.is_dir() {
            out.extend(files_under(&e.path(), &rel)?);
        } else if kind.is_file() {
            out.push((rel, e.path()));
        }
    }
    Ok(out)
}

/// A file name per class: letters, digits, `.`, `_` and `-` kept, anything else (`:`, `=`,
/// `,`, `/`) one `-`; a name two classes share gets `-2`, `-3`, ...
fn file_names<'a>(classes: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut taken = BTreeSet::new();
    let mut out = Vec::new();
    for class in classes {
        let mut name = String::new();
        for c in class.chars() {
            let keep = c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
            if keep {
                name.push(c);
            } else if !name.ends_with('-') {
                name.push('-');
            }
        }
        // Neither an option (`-x`) nor hidden (`.x`), nor `.`/`..`.
        let trimmed = name.trim_matches(|c| c == '-' || c == '.');
        let base = if trimmed.is_empty() { "class" } else { trimmed };
        let mut name = base.to_string();
        let mut k = 2;
        while !taken.insert(name.clone()) {
            name = format!("{base}-{k}");
            k += 1;
        }
        out.push(name);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_become_safe_distinct_file_names() {
        let names = file_names(
            [
                "qap:density=dense,symmetry=sym,dominance=low",
                "qap:density=dense,symmetry=sym,dominance=low!",
                "../..",
                "-rf",
                "",
            ]
            .into_iter(),
        );
        assert_eq!(
            names,
            [
                "qap-density-dense-symmetry-sym-dominance-low",
                "qap-density-dense-symmetry-sym-dominance-low-2",
                "class",
                "rf",
                "class-2",
            ]
        );
    }

    #[test]
    fn a_class_takes_every_bundle_its_entry_names_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        for b in ["bundle-00-aa", "bundle-01-bb", "bundle-02-cc"] {
            std::fs::create_dir(tmp.path().join(b)).unwrap();
            std::fs::write(tmp.path().join(b).join("manifest.json"), "{}").unwrap();
        }
        // A nested table (per budget) as well as the per-preference one, a class label and a
        // path that leaves the folder.
        let entry = serde_json::json!({
            "bundles": {"time": "bundle-00-aa", "energy": "bundle-00-aa"},
            "budgets": [{"budget_s": 5, "bundle": "bundle-02-cc"}],
            "note": "qap:density=dense",
            "other": "../bundle-01-bb",
        });
        let found: Vec<String> = bundles_of(&entry, tmp.path()).into_iter().collect();
        assert_eq!(found, ["bundle-00-aa", "bundle-02-cc"]);
    }

    #[test]
    fn another_driver_is_cleared_from_the_private_manifests_only() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("b")).unwrap();
        // No machine has CUDA driver 0.1.
        let manifest = serde_json::json!({"driver": "0.1", "point": {"x": 1}});
        std::fs::write(tmp.path().join("b/manifest.json"), manifest.to_string()).unwrap();
        std::fs::write(tmp.path().join("index.json"), r#"{"driver": "0.1"}"#).unwrap();
        let file = |path: &str| payload::FileEntry {
            path: path.into(),
            bytes: 0,
            sha256: String::new(),
        };
        let header = Header {
            files: vec![file("index.json"), file("b/manifest.json")],
            ..gpu_header()
        };
        accept_this_driver(tmp.path(), &header).unwrap();
        let read = |p: &str| -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(tmp.path().join(p)).unwrap()).unwrap()
        };
        assert_eq!(
            read("b/manifest.json"),
            serde_json::json!({"driver": null, "point": {"x": 1}})
        );
        assert_eq!(read("index.json")["driver"], "0.1", "only manifests");
    }

    fn gpu_header() -> Header {
        Header {
            name: "qap-dense".into(),
            class: "qap:dense".into(),
            campaign: "c".into(),
            family: "qap".into(),
            backend: "gpu".into(),
            device: "NVIDIA H100 80GB HBM3".into(),
            arch: Some(90),
            mats_version: "0".into(),
            files: Vec::new(),
        }
    }

    #[test]
    fn the_arch_message_names_both_architectures_or_the_missing_driver() {
        let header = gpu_header();
        let other = arch_error(&header, 90, Some("GPU 0 is NVIDIA A100 (sm_80)".into()));
        let text = other.to_string();
        assert!(text.contains("sm_90") && text.contains("sm_80"), "{text}");
        assert!(text.starts_with("qap-dense was tuned and built for NVIDIA H100"));
        let none = arch_error(&header, 90, None).to_string();
        assert!(none.contains("no CUDA driver"), "{none}");
        // A CPU executable needs no GPU at all.
        let cpu = Header {
            arch: None,
            ..header
        };
        assert!(check_machine(&cpu).is_ok());
    }
}
