//! Resolving a campaign's instances (files, globs, generator specs) and grouping them into
//! dataset classes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use results::InstanceRecord;
use solvers::bks::BestKnown;
use solvers::family::{self, Family, Instance};

use super::config::{CampaignFile, ClassesConfig, GeneratorConfig};

/// One instance of the campaign, loaded.
#[derive(Debug, Clone)]
pub struct CampaignInstance {
    pub record: InstanceRecord,
    /// The file it was read from (generated instances are written into the output folder
    /// first, so a measuring worker can read every instance by path).
    pub path: PathBuf,
    pub instance: Instance,
}

/// Loads every instance the campaign names, in name order, without duplicates.
pub fn resolve(
    file: &CampaignFile,
    out_dir: &Path,
    bks: &BestKnown,
) -> Result<Vec<CampaignInstance>> {
    let mut paths = expand(file, &file.config.instances.paths, "paths")?;
    paths.extend(generate_all(
        file,
        &file.config.instances.generate,
        out_dir,
    )?);
    load_all(file, paths, bks)
}

/// Writes generated instances into `out_dir/instances` (so every run, and every measuring
/// worker, reads the same files) and returns their paths.
fn generate_all(
    file: &CampaignFile,
    specs: &[GeneratorConfig],
    out_dir: &Path,
) -> Result<Vec<PathBuf>> {
    if specs.is_empty() {
        return Ok(Vec::new());
    }
    let folder = out_dir.join("instances");
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    specs
        .iter()
        .map(|spec| generate(file, spec, &folder))
        .collect()
}

/// Whether the campaign generates instances (tuning or held out): they are written into
/// its output folder.
pub fn generates(file: &CampaignFile) -> bool {
    !file.config.instances.generate.is_empty() || !file.config.instances.holdout_generate.is_empty()
}

/// The held-out instances (`instances.holdout`): loaded like the campaign's, never searched.
/// An instance cannot be both tuned on and held out.
pub fn resolve_holdouts(
    file: &CampaignFile,
    tuned: &[CampaignInstance],
    out_dir: &Path,
    bks: &BestKnown,
) -> Result<Vec<CampaignInstance>> {
    let instances = &file.config.instances;
    if instances.holdout.is_empty() && instances.holdout_generate.is_empty() {
        return Ok(Vec::new());
    }
    let mut paths = expand(file, &instances.holdout, "holdout")?;
    paths.extend(generate_all(file, &instances.holdout_generate, out_dir)?);
    let out = load_all(file, paths, bks)?;
    for h in &out {
        if let Some(t) = tuned.iter().find(|t| t.record.name == h.record.name) {
            return Err(file.error_at(
                "holdout",
                format!(
                    "{} is both a tuning instance ({}) and a holdout ({}); a holdout must be \
                     an instance the search never sees",
                    h.record.name,
                    t.path.display(),
                    h.path.display()
                ),
            ));
        }
        if let Some(first) = tuned.first() {
            if first.instance.family() != h.instance.family() {
                return Err(file.error_at(
                    "holdout",
                    format!(
                        "{} is {}, but the campaign tunes {}",
                        h.path.display(),
                        h.instance.family(),
                        first.instance.family()
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// Files named by `patterns` (paths or globs relative to the campaign file).
fn expand(file: &CampaignFile, patterns: &[String], key: &str) -> Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for pattern in patterns {
        let full = file.resolve(Path::new(pattern));
        let text = full.to_string_lossy().to_string();
        if pattern.contains(['*', '?', '[']) {
            let matches: Vec<PathBuf> = glob::glob(&text)
                .map_err(|e| file.error_at(key, format!("bad pattern {pattern:?}: {e}")))?
                .filter_map(|entry| entry.ok())
                .filter(|p| p.is_file() && !is_solution_file(p))
                .collect();
            if matches.is_empty() {
                return Err(file.error_at(key, format!("{pattern:?} ({text}) matches no file")));
            }
            paths.extend(matches);
        } else {
            if !full.is_file() {
                return Err(file.error_at(key, format!("{pattern:?}: no such file ({text})")));
            }
            paths.push(full);
        }
    }
    Ok(paths)
}

/// Loads instances, in name order, without duplicates, all of one family.
fn load_all(
    file: &CampaignFile,
    mut paths: Vec<PathBuf>,
    bks: &BestKnown,
) -> Result<Vec<CampaignInstance>> {
    paths.sort();
    paths.dedup();

    let mut out: Vec<CampaignInstance> = Vec::new();
    for path in paths {
        let instance = family::load(&path, None, None).map_err(|e| match e {
            solvers::error::InputError::Several { count, .. } => file.error_at(
                "paths",
                format!(
                    "{} holds {count} instances, and a campaign takes files of one instance \
                     each: write those to tune into files of their own (`mats instance \
                     generate pfsp --jobs J --machines M --seed S` writes Taillard's instance \
                     of seed S)",
                    path.display()
                ),
            ),
            other => other.into(),
        })?;
        let name = instance.name().to_string();
        if let Some(other) = out.iter().find(|o| o.record.name == name) {
            return Err(file.error_at(
                "paths",
                format!(
                    "two instances are named {name}: {} and {}; rename one",
                    other.path.display(),
                    path.display()
                ),
            ));
        }
        if let Some(first) = out.first() {
            if first.instance.family() != instance.family() {
                return Err(file.error_at(
                    "paths",
                    format!(
                        "a campaign tunes one family; {} is {} but {} is {}",
                        path.display(),
                        instance.family(),
                        first.path.display(),
                        first.instance.family()
                    ),
                ));
            }
        }
        let record = InstanceRecord {
            name: name.clone(),
            source: path.display().to_string(),
            family: instance.family().name().to_string(),
            class: instance.class(),
            features: serde_json::to_value(instance.features())?,
            best_known: {
                let found = bks.lookup(&instance);
                if let Some(warning) = found.mismatch(&name) {
                    eprintln!("warning: {}: {warning}", path.display());
                }
                found.entry().map(|e| e.value)
            },
        };
        out.push(CampaignInstance {
            record,
            path,
            instance,
        });
    }
    out.sort_by(|a, b| a.record.name.cmp(&b.record.name));
    Ok(out)
}

fn is_solution_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("sln" | "tour" | "md" | "csv")
    ) || path.to_string_lossy().ends_with(".opt.tour")
}

fn generate(file: &CampaignFile, spec: &GeneratorConfig, folder: &Path) -> Result<PathBuf> {
    let (name, text) = match spec {
        GeneratorConfig::Pfsp {
            jobs,
            machines,
            seed,
        } => {
            solvers::pfsp::generator::check_request(*jobs, *machines, *seed, |k| {
                format!("pfsp's {k}")
            })
            .map_err(|e| file.error_at("generate", e))?;
            let inst = solvers::pfsp::generate(*jobs, *machines, *seed);
            (
                format!("pfsp-{jobs}x{machines}-s{seed}.txt"),
                solvers::pfsp::to_taillard_text(&inst),
            )
        }
        GeneratorConfig::Hwsw {
            nodes,
            edges,
            ccr,
            r_level,
            seed,
        } => {
            let level: solvers::hwsw::RLevel = r_level
                .parse()
                .map_err(|e: String| file.error_at("generate", format!("`r_level`: {e}")))?;
            let spec = solvers::hwsw::GeneratorSpec::new(*nodes, *edges, *ccr, level, *seed);
            // The generator speaks of `mats instance generate`'s flags, here the table's keys.
            let inst = solvers::hwsw::generate(&spec)
                .map_err(|e| file.error_at("generate", e.to_string().replace("--", "")))?;
            (
                format!("hwsw-{nodes}n-{edges}e-ccr{ccr}-{r_level}-s{seed}.hwsw"),
                inst.to_text(),
            )
        }
    };
    let path = folder.join(name);
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// Class name -> indices into `instances`, in class-name order.
/// The classes of the searched `instances`. A class table may also list holdouts (the class
/// each is held out of, see [`holdout_class`]): those names are passed in `holdouts` and
/// skipped here.
pub fn classes(
    file: &CampaignFile,
    instances: &[CampaignInstance],
    holdouts: &[CampaignInstance],
) -> Result<BTreeMap<String, Vec<usize>>> {
    let mut classes: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    match &file.config.instances.classes {
        ClassesConfig::Auto(_) => {
            for (i, inst) in instances.iter().enumerate() {
                classes
                    .entry(inst.record.class.clone())
                    .or_default()
                    .push(i);
            }
        }
        ClassesConfig::Listed(listed) => {
            super::config::ensure_no_overlap(listed)
                .map_err(|e| file.error_at("instances.classes", e))?;
            // `CLASS@Bs` names a budget's class in the store and the export: a table name of
            // that shape would be read back as another class at another budget.
            if let Some(bad) = listed
                .keys()
                .find(|c| c.trim().is_empty() || c.contains('@'))
            {
                return Err(file.error_at(
                    "instances.classes",
                    format!(
                        "class name {bad:?}: a class needs a name without `@` (mats writes a \
                         budget's class as CLASS@Bs)"
                    ),
                ));
            }
            for (class, names) in listed {
                for name in names {
                    let Some(i) = instances.iter().position(|inst| &inst.record.name == name)
                    else {
                        if holdouts.iter().any(|h| &h.record.name == name) {
                            continue;
                        }
                        return Err(file.error_at(
                            "instances.classes",
                            format!(
                                "class {class} lists {name}, which is not among the instances \
                                 or the holdouts"
                            ),
                        ));
                    };
                    classes.entry(class.clone()).or_default().push(i);
                }
            }
            if let Some(loose) = instances
                .iter()
                .find(|inst| !listed.values().flatten().any(|n| n == &inst.record.name))
            {
                return Err(file.error_at(
                    "instances.classes",
                    format!(
                        "instance {} is in no class; list it or drop it",
                        loose.record.name
                    ),
                ));
            }
        }
    }
    if let Some(k) = file.config.instances.per_class {
        for (class, members) in classes.iter_mut() {
            // The first in name order, as `per_class` promises (a table's order is the
            // user's listing, automatic classes the order of the paths).
            members.sort_by(|&a, &b| instances[a].record.name.cmp(&instances[b].record.name));
            if members.len() > k {
                let dropped: Vec<&str> = members[k..]
                    .iter()
                    .map(|&i| instances[i].record.name.as_str())
                    .collect();
                eprintln!(
                    "note: class {class}: per_class = {k} keeps the first {k} by name; not \
                     tuned: {}",
                    dropped.join(", ")
                );
                members.truncate(k);
            }
        }
    }
    Ok(classes)
}

/// The class a holdout is compared in: with a class table, the class that lists it; with
/// automatic classes, its own class label. A holdout of no tuned class is an error naming it:
/// it would silently go uncompared, as tai50a did on the H100 beside a table class of tai35a
/// and tai60a.
pub fn holdout_class(
    file: &CampaignFile,
    holdout: &CampaignInstance,
    classes: &BTreeMap<String, Vec<usize>>,
) -> Result<String> {
    match &file.config.instances.classes {
        ClassesConfig::Auto(_) => {
            if classes.contains_key(&holdout.record.class) {
                Ok(holdout.record.class.clone())
            } else {
                Err(file.error_at(
                    "holdout",
                    format!(
                        "holdout {} is of class {}, which no tuning instance has (classes: {}); \
                         hold out an instance of a tuned class, or name the classes in \
                         [instances.classes] with the holdout under one",
                        holdout.record.name,
                        holdout.record.class,
                        classes.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                ))
            }
        }
        ClassesConfig::Listed(listed) => listed
            .iter()
            .find(|(_, names)| names.contains(&holdout.record.name))
            .map(|(class, _)| class.clone())
            .ok_or_else(|| {
                file.error_at(
                    "instances.classes",
                    format!(
                        "holdout {} is in no class: list it in [instances.classes] under the \
                         class it is held out of",
                        holdout.record.name
                    ),
                )
            }),
    }
}

/// Every holdout's class (`held_in`, from [`holdout_class`]) must be one the campaign tunes:
/// a class table may list a class of holdouts alone, which no search would ever reach, so its
/// holdouts would silently never be compared.
pub fn check_holdout_classes(
    file: &CampaignFile,
    held: &[CampaignInstance],
    held_in: &[String],
    classes: &BTreeMap<String, Vec<usize>>,
) -> Result<()> {
    for (h, class) in held.iter().zip(held_in) {
        if !classes.contains_key(class) {
            return Err(file.error_at(
                "instances.classes",
                format!(
                    "holdout {} is listed in class {class}, which has no tuning instance (only \
                     holdouts): it would never be compared; list it under a class with tuning \
                     instances (classes: {})",
                    h.record.name,
                    classes.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// The family of a campaign's instances.
pub fn family_of(instances: &[CampaignInstance]) -> Option<Family> {
    instances.first().map(|i| i.instance.family())
}
