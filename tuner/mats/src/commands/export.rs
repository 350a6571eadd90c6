//! `mats export DIR --out tuned/`: one tuned bundle per distinct best point (per budget where
//! the campaign tuned several), an index from class (and budget) to bundle per preference
//! (quality or time, energy, power), and each (class, budget)'s front, every front point with
//! a bundle of its own so `solve --tuned --max-power` can run it.
//!
//! A GPU bundle holds the kernels (CUBIN + metadata, in the kernel cache's own layout, one per
//! problem size the class's instances have) and a manifest; a CPU bundle holds the manifest
//! alone. Classes whose best point is the same share one bundle.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use results::{EvaluationStatus, ExportRow, Point};
use sha2::{Digest, Sha256};

use crate::cli::ExportArgs;

pub use engine::bundle::{ClassEntry, Index, KernelFile, Manifest, Measured};

/// A campaign that never reached its end (killed: no summary; interrupted: the summary says
/// so) has classes it never searched and verdicts it never measured; its export is still
/// what it recorded, but the user must know before shipping it.
/// `summary` is the folder's summary as read (`None`: it has none).
fn warn_if_unfinished(
    dir: &std::path::Path,
    campaign: &results::CampaignRow,
    summary: Option<&results::TuneSummary>,
) {
    // A tune still writing was said above; its missing summary is not a kill.
    if results::FolderLock::holder(dir).is_some() {
        return;
    }
    let Some(how) = super::results::unfinished_by(summary) else {
        return;
    };
    let again = match summary.is_some_and(|s| !s.merged_from.is_empty()) {
        // A merged folder is not resumed: its shards are, then merged again.
        true => "`mats tune CAMPAIGN.toml --shard K/N --resume` for each unfinished shard, \
                 then `mats merge` again"
            .to_string(),
        false => format!(
            "`{} --resume`",
            engine::tune::command_line(
                campaign.settings["campaign_file"]
                    .as_str()
                    .unwrap_or("CAMPAIGN.toml"),
                dir,
                campaign.settings["shard"].as_str(),
            )
        ),
    };
    if summary.is_some_and(|s| s.stopped.is_some() && !engine::tune::budget::stopped_by_user(s)) {
        eprintln!(
            "warning: campaign {:?} in {} {how}: the classes it searched are exported, what it \
             never searched is not; give each class its share of the [budget] (`cost_percent`) \
             and finish it with {again}",
            campaign.name,
            dir.display(),
        );
        return;
    }
    eprintln!(
        "warning: campaign {:?} in {} {how} before its end: classes it had yet to search, \
         its final re-measure and its holdouts are missing from this export; finish it with \
         {again}",
        campaign.name,
        dir.display(),
    );
}

pub fn run(args: &ExportArgs) -> Result<()> {
    if let Some(holder) = results::FolderLock::holder(&args.source.dir) {
        eprintln!(
            "warning: a mats tune is still writing {} ({holder}); this export holds what it \
             has recorded so far, without the verdicts it has yet to measure",
            args.source.dir.display()
        );
    }
    let (store, campaign) = super::results::open(&args.source)?;
    // The campaign's own verdict per class: where the final re-measure found the baseline
    // or the default better than the search's winner, that point is exported instead.
    // A campaign that never finished has none; one that cannot be read is said, since without
    // it the verdicts and the holdouts' warnings cannot be applied.
    let summary_path = args.source.dir.join("summary.json");
    let summary = match engine::tune::read_summary(&summary_path) {
        Ok(s) => Some(s),
        Err(_) if !summary_path.exists() => None,
        Err(e) => {
            eprintln!(
                "warning: {e:#}; exporting each class's search best without the campaign's \
                 final re-measure and holdouts"
            );
            None
        }
    };
    // Unreadable, it was said above; else what it says (or its absence) about the end.
    if summary.is_some() || !summary_path.exists() {
        warn_if_unfinished(&args.source.dir, &campaign, summary.as_ref());
    }
    let Evaluations {
        searched: by_class,
        remeasured,
        rechecked,
    } = evaluations_by_class(&store, campaign.id)?;
    if by_class.is_empty() {
        bail!(
            "campaign {:?} in {} has no successful evaluations to export",
            campaign.name,
            args.source.dir.display()
        );
    }
    // Another campaign's export in --out would lose its bundles to this one's.
    if let Ok(other) = engine::bundle::Index::read(&args.out) {
        if other.campaign != campaign.name && !args.replace {
            bail!(
                "{} holds the export of campaign {:?}; export {:?} into another folder, or \
                 give --replace to remove that export",
                args.out.display(),
                other.campaign,
                campaign.name
            );
        }
    }
    if let Some(bin) = &args.binaries {
        crate::standalone::check_binaries_folder(bin, &campaign.name, args.replace)?;
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let source = Source::read(&store, &campaign, summary)?;

    let mut bundles = Bundles::default();
    let mut index = source.empty_index();
    let none = BTreeMap::new();
    for (label, points) in &by_class {
        let front_again = remeasured.get(label);
        let points = ClassPoints {
            searched: points,
            rechecked: rechecked.get(label).unwrap_or(&none),
        };
        export_class(
            &source,
            &mut bundles,
            &mut index,
            label,
            points,
            front_again,
        )?;
    }
    // Older readers see the first budget as the class's bundles and front.
    for entry in index.classes.values_mut() {
        entry
            .budgets
            .sort_by(|a, b| a.budget_s.total_cmp(&b.budget_s));
        if let Some(first) = entry.budgets.first() {
            entry.bundles = first.bundles.clone();
            entry.pareto = first.pareto.clone();
        }
    }
    // An earlier export into this folder (of this campaign or another) leaves bundles the
    // new index no longer names; they would sit beside it looking current.
    let previous = args
        .out
        .join("index.json")
        .is_file()
        .then(|| engine::bundle::Index::read(&args.out).ok())
        .flatten();
    for ((_, point), (name, manifest)) in &mut bundles.by_point {
        write_bundle(&source, &args.out, name, point, manifest)?;
    }
    results::write_json_atomically(&args.out.join("index.json"), &index)
        .map_err(anyhow::Error::msg)?;
    if let Some(previous) = previous {
        remove_stale_bundles(&args.out, &previous, &index)?;
    }
    print_index(&index, bundles.by_point.len(), &args.out);
    if let Some(bin) = &args.binaries {
        for (class, path) in crate::standalone::write_binaries(&args.out, bin, args.replace)? {
            println!("  standalone {}  ({class})", path.display());
        }
    }
    Ok(())
}

/// Removes the bundle folders `previous` named that `now` does not (each still holding a
/// manifest, so nothing else is touched), and says how many and whose they were.
fn remove_stale_bundles(
    out: &std::path::Path,
    previous: &engine::bundle::Index,
    now: &engine::bundle::Index,
) -> Result<()> {
    let kept = now.bundle_folders();
    let mut removed = 0;
    for folder in previous.bundle_folders().difference(&kept) {
        let path = out.join(folder);
        // A name from a file: only a plain folder name inside `out` is ours to remove.
        let plain =
            std::path::Path::new(folder).components().count() == 1 && !folder.starts_with('.');
        if plain && path.join("manifest.json").is_file() {
            std::fs::remove_dir_all(&path)
                .with_context(|| format!("cannot remove the stale bundle {}", path.display()))?;
            removed += 1;
        }
    }
    if removed > 0 {
        eprintln!(
            "removed {removed} bundle folder(s) of the previous export in {} (campaign {:?}) \
             that this one does not name",
            out.display(),
            previous.campaign
        );
    }
    Ok(())
}

/// What an export reads of a stored campaign once: its store and row, its recorded
/// settings, summary, space and instances, and the NVRTC that builds the kernels now.
struct Source<'a> {
    store: &'a results::Store,
    campaign: &'a results::CampaignRow,
    settings: results::CampaignSettings,
    summary: Option<results::TuneSummary>,
    backend: String,
    family: String,
    device: String,
    /// A quality objective (a budget or a target), not fixed work.
    quality: bool,
    space: search::space::Space,
    instances: Vec<results::InstanceRow>,
    nvrtc: Option<String>,
}

impl<'a> Source<'a> {
    fn read(
        store: &'a results::Store,
        campaign: &'a results::CampaignRow,
        summary: Option<results::TuneSummary>,
    ) -> Result<Source<'a>> {
        let settings = results::CampaignSettings::from_json(&campaign.settings);
        let backend = settings.backend.clone().unwrap_or_else(|| "cpu".into());
        let space = engine::tune::stored_space(campaign)
            .context("the campaign's space (file and overrides) is needed to export")?;
        let instances = store.instances(campaign.id)?;
        let nvrtc = if backend == "gpu" {
            kernels::nvrtc::version()
                .ok()
                .map(|(a, b)| format!("{a}.{b}"))
        } else {
            None
        };
        Ok(Source {
            store,
            campaign,
            family: settings.family.clone().unwrap_or_default(),
            device: settings.device.clone().unwrap_or_default(),
            quality: matches!(
                settings.run,
                Some(results::RunMode::Budget { .. }) | Some(results::RunMode::Target { .. })
            ),
            settings,
            summary,
            backend,
            space,
            instances,
            nvrtc,
        })
    }

    /// The instances the campaign put in the data class `class`, tuned and held out, with
    /// the content hash it measured them under (instances of a store that recorded none are
    /// left out: a name alone does not make a file the one measured).
    fn class_members(&self, class: &str) -> Vec<engine::bundle::Member> {
        let measured = &self.campaign.settings[engine::tune::settings::KEY];
        self.instances
            .iter()
            .filter(|i| i.record.class == class)
            .filter_map(|i| {
                let sha = measured[format!("instances.{}.sha256", i.record.name)].as_str()?;
                Some(engine::bundle::Member {
                    name: i.record.name.clone(),
                    sha256: sha.to_string(),
                })
            })
            .collect()
    }

    /// A class's instances: those its summary lists (a campaign's own class names, which
    /// the instances' feature classes need not match), else those of that feature class.
    fn members(&self, label: &str) -> Vec<&results::InstanceRow> {
        let listed = self
            .summary
            .as_ref()
            .and_then(|s| s.classes.iter().find(|c| c.class == label))
            .map(|c| &c.instances);
        let class = results::split_budget_class(label).0;
        self.instances
            .iter()
            .filter(|i| match listed {
                Some(names) => names.contains(&i.record.name),
                None => i.record.class == class,
            })
            .collect()
    }

    /// The index before any class: what the campaign measured on and with what.
    fn empty_index(&self) -> Index {
        Index {
            campaign: self.campaign.name.clone(),
            family: self.family.clone(),
            backend: self.backend.clone(),
            device: self.device.clone(),
            arch: self.settings.arch,
            // The driver the measurements were taken under (a bundle's timings belong to it).
            driver: self.settings.driver.clone(),
            nvrtc: self.nvrtc.clone(),
            classes: BTreeMap::new(),
            run: self.settings.run,
            prefer: Some(
                primary_preference(self.settings.objectives.as_deref(), self.quality).to_string(),
            ),
        }
    }
}

/// The bundles of an export: one per (class label, point), numbered in the order they are
/// first asked for.
#[derive(Default)]
struct Bundles {
    by_point: BTreeMap<(String, Point), (String, Manifest)>,
}

impl Bundles {
    /// What the class `label`'s bundle `name` was exported with.
    fn measured_named(&self, label: &str, name: &str) -> Option<&Measured> {
        self.by_point
            .iter()
            .find(|((l, _), (n, _))| l == label && n == name)
            .and_then(|(_, (_, manifest))| manifest.measured.get(label))
    }

    /// The bundle of `m` for the class `label` (at `budget_s` where the campaign tuned several
    /// budgets), made on first use; records what was measured there.
    fn bundle_of(
        &mut self,
        source: &Source,
        label: &str,
        budget_s: Option<f64>,
        m: &Measured,
        note: Option<String>,
    ) -> String {
        let next = self.by_point.len();
        let key = (label.to_string(), m.point.clone());
        let (name, manifest) = self.by_point.entry(key).or_insert_with(|| {
            let id = match budget_s {
                Some(b) => format!("{}@{b}", m.point.key()),
                None => m.point.key(),
            };
            let name = format!("bundle-{next:02}-{}", &short_hash(&id));
            let settings = &source.settings;
            let manifest = Manifest {
                point: m.point.clone(),
                flags: Vec::new(),
                values: BTreeMap::new(),
                backend: source.backend.clone(),
                device: source.device.clone(),
                arch: settings.arch,
                driver: settings.driver.clone(),
                nvrtc: source.nvrtc.clone(),
                measured: BTreeMap::new(),
                kernels: Vec::new(),
                objective: settings.objectives.clone(),
                run: budget_s
                    .map(|budget_s| results::RunMode::Budget { budget_s })
                    .or(settings.run),
                note,
            };
            (name, manifest)
        });
        manifest
            .measured
            .entry(label.to_string())
            .or_insert_with(|| m.clone());
        name.clone()
    }
}

/// One class (label `CLASS` or `CLASS@BUDGETs`): its bundle per preference, recorded in the
/// store's exports, and its front, each point with a bundle of its own so a cap in `solve
/// --tuned` can run it, with the verification's re-measured values (`front_again`) where the
/// campaign made one.
fn export_class(
    source: &Source,
    bundles: &mut Bundles,
    index: &mut Index,
    label: &str,
    points: ClassPoints,
    front_again: Option<&BTreeMap<Point, Measured>>,
) -> Result<()> {
    let (class, budget_s) = results::split_budget_class(label);
    let measured: Vec<&Measured> = points.searched.values().collect();
    let chosen = choose_bundles(source, bundles, label, budget_s, points)?;
    // Where the campaign re-measured its front, that front is what a cap chooses from: a point
    // only the search measured (non-dominated there by time or power, say) would be judged by
    // its search values, and one such point ran over its cap on the H100.
    let mut front: Vec<Measured> = match front_again.filter(|again| !again.is_empty()) {
        Some(again) => again
            .values()
            // The summary's front is what the re-measure kept: a point that failed the
            // quality guard there (and the baseline, measured beside the front for that
            // guard) has values in that run but is no front point.
            .filter(|m| {
                source
                    .summary
                    .as_ref()
                    .is_none_or(|s| s.front_point(label, &m.point).is_some())
            })
            .map(|m| {
                // The per-instance peaks live in the summary (the store keeps means per point).
                let peaks = source
                    .summary
                    .as_ref()
                    .and_then(|s| s.front_point(label, &m.point))
                    .filter(|f| f.remeasured);
                Measured {
                    peak_power_w: peaks.and_then(|f| f.peak_power_w),
                    peak_energy_j: peaks.and_then(|f| f.peak_energy_j),
                    ..m.clone()
                }
            })
            .collect(),
        None => {
            // The bundles' points with the values they were exported with (a default that won
            // the final re-measure has those values only), and the search's best where that
            // re-measure shipped another point: its search values were contradicted there,
            // and a cap choosing it would run the point that lost.
            let exported: Vec<Measured> = chosen
                .values()
                .filter_map(|name| bundles.measured_named(label, name))
                .cloned()
                .collect();
            let lost = source
                .summary
                .as_ref()
                .and_then(|s| s.best_point(label))
                .filter(|best| !exported.iter().any(|m| &m.point == *best));
            // Of points measured alike the front keeps the first: the bundles' own go first,
            // so the point a preference exports is the one listed (seven points at a gap of 0
            // listed another). Where the re-measure overruled the search, every value only
            // the search measured is as suspect as its best's (the search's second best, at
            // its search gap, pushed the shipped default out of the front): the front is the
            // bundles' points alone.
            let searched = measured
                .iter()
                .copied()
                .filter(|m| lost.is_none() && !exported.iter().any(|e| e.point == m.point));
            let candidates: Vec<&Measured> = exported.iter().chain(searched).collect();
            engine::pick::front(
                &candidates,
                budget_s
                    .map(|budget_s| results::RunMode::Budget { budget_s })
                    .or(source.settings.run),
            )
        }
    };
    for m in &mut front {
        m.bundle = Some(bundles.bundle_of(source, label, budget_s, m, None));
    }
    let entry = index
        .classes
        .entry(class.to_string())
        .or_insert_with(|| ClassEntry {
            bundles: BTreeMap::new(),
            pareto: Vec::new(),
            features: engine::bundle::feature_ranges(
                source
                    .members(label)
                    .into_iter()
                    .map(|i| &i.record.features),
            ),
            budgets: Vec::new(),
            members: source.class_members(class),
        });
    match budget_s {
        Some(budget_s) => entry.budgets.push(engine::bundle::BudgetEntry {
            budget_s,
            bundles: chosen,
            pareto: front,
        }),
        None => {
            entry.bundles = chosen;
            entry.pareto = front;
        }
    }
    Ok(())
}

/// A class's bundle for each preference (quality and energy, or time, energy and power),
/// each recorded in the store's exports; returns preference -> bundle name.
fn choose_bundles(
    source: &Source,
    bundles: &mut Bundles,
    label: &str,
    budget_s: Option<f64>,
    points: ClassPoints,
) -> Result<BTreeMap<String, String>> {
    let prefers: &[&str] = if source.quality {
        &["quality", "energy"]
    } else {
        &["time", "energy", "power"]
    };
    let verdict = source.summary.as_ref().and_then(|s| s.verdict(label));
    let tuned_failed = source
        .summary
        .as_ref()
        .is_some_and(|s| s.final_role_failed(label, "tuned"));
    let campaign_best = source.summary.as_ref().and_then(|s| s.best_point(label));
    let target_mode = matches!(source.settings.run, Some(results::RunMode::Target { .. }));
    // The preference the campaign's own objective answers (its summary's best point and final
    // verdict are about that one): an energy campaign's best is the energy bundle, not the
    // quality one.
    let own = primary_preference(source.settings.objectives.as_deref(), source.quality);
    let mut chosen = BTreeMap::new();
    for &prefer in prefers {
        let primary = prefer == own;
        let verdict = Verdict {
            best: campaign_best.filter(|_| primary),
            winner: verdict.as_ref().filter(|_| primary),
            tuned_failed: tuned_failed && primary,
        };
        let Some((best, mut note)) = preferred(prefer, points, verdict, target_mode) else {
            continue;
        };
        if let Some(n) = &note {
            println!("  {label}: {n}");
        }
        // The campaign's own objective is what its holdouts compared.
        let warning = source
            .summary
            .as_ref()
            .filter(|_| primary)
            .and_then(|s| s.holdout_warning(label, &best.point));
        if let Some(w) = warning {
            println!("  {label}: warning: {w}");
            note = Some(match note {
                Some(n) => format!("{n}; {w}"),
                None => w,
            });
        }
        let name = bundles.bundle_of(source, label, budget_s, best, note);
        chosen.insert(prefer.to_string(), name.clone());
        let campaign_id = source.campaign.id;
        let point_id = source.store.point(campaign_id, &best.point)?;
        source.store.set_export(
            campaign_id,
            &ExportRow {
                class: label.to_string(),
                prefer: prefer.to_string(),
                point_id,
                point: best.point.clone(),
                bundle: name,
            },
        )?;
    }
    Ok(chosen)
}

/// Writes one bundle's folder: its manifest with the point realised (flags, values, a fixed
/// work's iterations) and, on the GPU, its kernels for the instances of the classes it serves.
fn write_bundle(
    source: &Source,
    out: &Path,
    name: &str,
    point: &Point,
    manifest: &mut Manifest,
) -> Result<()> {
    let folder = out.join(name);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let r = engine::runner::Realised::from(
        source
            .space
            .realise(point)
            .map_err(|e| anyhow::anyhow!("bundle {name}: {e}"))?,
    );
    manifest.flags = r.flags;
    manifest.values = r.values;
    // A production run's length is part of what was tuned: `solve --tuned` repeats it.
    if let (false, Some(i)) = (source.quality, source.settings.iterations) {
        manifest
            .values
            .entry("iterations".into())
            .or_insert(results::Value::Int(i));
    }
    if source.backend == "gpu" {
        // The instances of the classes the bundle serves, each class's members found once.
        let served: std::collections::HashSet<_> = manifest
            .measured
            .keys()
            .flat_map(|label| source.members(label).into_iter().map(|m| m.id))
            .collect();
        let sources: Vec<PathBuf> = source
            .instances
            .iter()
            .filter(|i| served.contains(&i.id))
            .map(|i| PathBuf::from(&i.record.source))
            .collect();
        let optin = source.settings.optin_shared.unwrap_or(227 * 1024) as usize;
        manifest.kernels = build_kernels(&source.family, &folder, manifest, &sources, optin)?;
    }
    results::write_json_atomically(&folder.join("manifest.json"), &*manifest)
        .map_err(anyhow::Error::msg)?;
    Ok(())
}

/// What an export wrote: per class (and budget) the bundle of each preference.
fn print_index(index: &Index, bundles: usize, out: &Path) {
    println!(
        "exported {} class{} into {} bundle(s) in {}",
        index.classes.len(),
        if index.classes.len() == 1 { "" } else { "es" },
        bundles,
        out.display()
    );
    for (class, entry) in &index.classes {
        let line = |bundles: &BTreeMap<String, String>, front: usize| {
            let chosen: Vec<String> = bundles
                .iter()
                .map(|(prefer, bundle)| format!("{prefer}: {bundle}"))
                .collect();
            format!("{}  ({front} front points)", chosen.join(", "))
        };
        if entry.budgets.is_empty() {
            println!("  {class:<24} {}", line(&entry.bundles, entry.pareto.len()));
        }
        for b in &entry.budgets {
            let label = results::budget_class(class, b.budget_s);
            println!("  {label:<24} {}", line(&b.bundles, b.pareto.len()));
        }
    }
}

/// What the campaign's summary says of a class: the point its search ended on (for the
/// campaign's own objective only) and the role and point that beat it in the final
/// re-measure, if one did.
#[derive(Clone, Copy, Default)]
struct Verdict<'a> {
    best: Option<&'a Point>,
    winner: Option<&'a (String, Point)>,
    /// The search's best failed a trial of the final re-measure (the winner is another role
    /// because the tuned one has no value, not because it lost).
    tuned_failed: bool,
}

/// The export preference a campaign's objective answers: its first metric's (`gap` and time
/// to a target: quality; energy; power; fixed-work time: time).
fn primary_preference(objectives: Option<&str>, quality: bool) -> &'static str {
    // The objectives label lists the searches' objectives; the first is the campaign's own.
    let first = objectives.and_then(|o| o.split_whitespace().next());
    match first.and_then(results::Metric::first_of) {
        Some(results::Metric::Energy) => "energy",
        Some(results::Metric::Power) => "power",
        _ if quality => "quality",
        _ => "time",
    }
}

/// The point a class exports for `prefer` (`time`, `quality`, `energy` or `power`): the
/// search's best in that objective (for the campaign's objective, the point the search ended
/// on, which the re-measure and the holdouts compared, rather than another it tied with),
/// unless the final re-measure on fresh seeds found the baseline or the default better, which
/// is then exported with a note saying so. `None` where no point measured that objective.
fn preferred<'a>(
    prefer: &str,
    points: ClassPoints<'a>,
    verdict: Verdict,
    target_mode: bool,
) -> Option<(&'a Measured, Option<String>)> {
    let key = |m: &Measured| match prefer {
        "time" => Some(m.time_s),
        // The objective itself in target mode (PAR-k time); the gap at the budget.
        "quality" if target_mode => Some(m.time_s),
        "quality" => m.gap_percent,
        "energy" => m.energy_j,
        _ => m.power_w,
    };
    let least: &Measured = points
        .searched
        .values()
        .filter(|m| key(m).is_some())
        .min_by(|a, b| {
            key(a)
                .unwrap_or(f64::MAX)
                .total_cmp(&key(b).unwrap_or(f64::MAX))
        })?;
    let recorded = verdict
        .best
        .and_then(|p| points.searched.get(p))
        .filter(|m| key(m).is_some());
    let searched = recorded.unwrap_or(least);
    // The campaign's best without a row of its own (a store from before resumes recorded by
    // point): said, since the point shipped is then another.
    let missing = verdict.best.filter(|_| recorded.is_none()).map(|p| {
        format!(
            "the campaign's best ({p}) has no evaluation in the store; the search's best \
             recorded ({}) is exported",
            least.point
        )
    });
    match verdict.winner {
        Some((role, point)) if *point != searched.point => {
            let why = if verdict.tuned_failed {
                format!(
                    "the search's best ({}) failed a trial of the final re-measure on fresh \
                     seeds, so the {role} is exported",
                    searched.point
                )
            } else {
                format!(
                    "the {role} won the final re-measure on fresh seeds against the search's \
                     best ({}), so the {role} is exported",
                    searched.point
                )
            };
            // A default the search never evaluated was measured by the re-measure itself.
            match points.searched.get(point).or(points.rechecked.get(point)) {
                Some(m) => Some((m, Some(why))),
                None => Some((
                    searched,
                    Some(format!(
                        "the {role} won the final re-measure on fresh seeds, but the store \
                         holds no evaluation of it; the search's best is exported"
                    )),
                )),
            }
        }
        _ => Some((searched, missing)),
    }
}

/// A class's points: each one's latest ok evaluation by the search, and by the final
/// re-measure on fresh seeds (where a default the search never ran was measured).
#[derive(Clone, Copy)]
struct ClassPoints<'a> {
    searched: &'a BTreeMap<Point, Measured>,
    rechecked: &'a BTreeMap<Point, Measured>,
}

type ByClass = BTreeMap<String, BTreeMap<Point, Measured>>;

/// Per class, point -> its latest ok evaluation: of the searches, of the front's re-measure
/// on fresh seeds (the values a cap compares with) and of the final re-measure (the values
/// of a default that won it). The holdout and cross-class runs measure other instances: not
/// the class's results.
struct Evaluations {
    searched: ByClass,
    remeasured: ByClass,
    rechecked: ByClass,
}

fn evaluations_by_class(store: &results::Store, campaign_id: i64) -> Result<Evaluations> {
    let runs = store.runs(campaign_id)?;
    let run_of: BTreeMap<i64, &results::RunRow> = runs.iter().map(|r| (r.id, r)).collect();
    let mut by_class = ByClass::new();
    let mut remeasured = ByClass::new();
    let mut rechecked = ByClass::new();
    for e in store.evaluations(campaign_id)? {
        if e.status != EvaluationStatus::Ok {
            continue;
        }
        let (Some(run), Some(time_s)) = (run_of.get(&e.run_id), e.time_s) else {
            continue;
        };
        let into = match run.strategy.as_str() {
            engine::tune::front::RUN_LABEL => &mut remeasured,
            "final" => &mut rechecked,
            "holdout" | "cross-class" => continue,
            _ => &mut by_class,
        };
        into.entry(run.class.clone()).or_default().insert(
            e.point.clone(),
            Measured {
                point: e.point,
                time_s,
                power_w: e.power_w,
                energy_j: e.energy_j,
                gap_percent: e.gap_percent,
                bundle: None,
                peak_power_w: None,
                peak_energy_j: None,
            },
        );
    }
    Ok(Evaluations {
        searched: by_class,
        remeasured,
        rechecked,
    })
}

fn short_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(4).map(|b| format!("{b:02x}")).collect()
}

/// Compiles the bundle's kernels into its own `kernels/` folder (the kernel cache layout, so
/// `solve --tuned` loads them as cache hits).
fn build_kernels(
    family: &str,
    folder: &Path,
    manifest: &Manifest,
    sources: &[PathBuf],
    optin_shared: usize,
) -> Result<Vec<KernelFile>> {
    let arch = kernels::Arch(
        manifest
            .arch
            .context("the campaign recorded no GPU architecture")?,
    );
    if !kernels::nvrtc::available() {
        bail!("exporting GPU bundles needs NVRTC (libnvrtc) to build the kernels; none was found");
    }
    let nvrtc = kernels::nvrtc::version()?;
    let cache = kernels::KernelCache::new(folder.join("kernels"));
    let family: solvers::family::Family = family
        .parse()
        .map_err(|e| anyhow::anyhow!("the campaign's family {family:?}: {e}"))?;
    let config = manifest.gpu_config(family)?;
    let target = solvers::gpu::CompileTarget { arch, optin_shared };
    let mut out = Vec::new();
    for source in sources {
        let inst = solvers::family::load(source, Some(config.family()), None)
            .with_context(|| format!("the bundle's instance {}", source.display()))?;
        let variant = config
            .kernel_variant(&inst, target)
            .map_err(anyhow::Error::msg)?;
        let cache_key = kernels::KernelCache::key(&variant, nvrtc)?;
        if out.iter().any(|k: &KernelFile| k.cache_key == cache_key) {
            continue;
        }
        cache
            .get_or_compile(&variant)
            .with_context(|| format!("building {} for {}", variant.source, inst.name()))?;
        let source = variant.kernel_source().map_err(anyhow::Error::msg)?;
        out.push(KernelFile {
            instance: inst.name().to_string(),
            source: source.id.to_string(),
            source_sha256: format!("{:x}", Sha256::digest(source.text.as_bytes())),
            options: variant.nvrtc_options().map_err(anyhow::Error::msg)?,
            cache_key,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(starts: i64, gap: f64) -> Measured {
        let mut point = Point::new();
        point.set("starts", starts);
        Measured {
            point,
            time_s: 0.2,
            power_w: None,
            energy_j: None,
            gap_percent: Some(gap),
            bundle: None,
            peak_power_w: None,
            peak_energy_j: None,
        }
    }

    fn by_point(ms: &[Measured]) -> BTreeMap<Point, Measured> {
        ms.iter().map(|m| (m.point.clone(), m.clone())).collect()
    }

    /// The campaign's own objective decides which bundle its best and verdict go to: an
    /// energy campaign's best was exported as the quality bundle.
    #[test]
    fn the_primary_preference_follows_the_campaigns_objective() {
        assert_eq!(primary_preference(Some("gap"), true), "quality");
        assert_eq!(primary_preference(Some("time"), true), "quality"); // time to target
        assert_eq!(primary_preference(Some("energy"), true), "energy");
        assert_eq!(
            primary_preference(Some("pareto:gap,energy"), true),
            "quality"
        );
        assert_eq!(
            primary_preference(Some("pareto:energy,gap"), true),
            "energy"
        );
        assert_eq!(primary_preference(Some("time"), false), "time");
        assert_eq!(primary_preference(Some("power"), false), "power");
        assert_eq!(primary_preference(None, false), "time");
    }

    #[test]
    fn a_default_that_won_the_re_measure_is_exported_even_where_the_search_never_ran_it() {
        // The quickstart's dominance=high class on the CPU: the search's best (128 starts)
        // lost the final re-measure to the default (1 start), which the search never evaluated;
        // the export used to fall back to the search's best without a word.
        let searched = by_point(&[measured(128, 0.0), measured(256, 0.5)]);
        let rechecked = by_point(&[measured(128, 3.797), measured(1, 0.0)]);
        let points = ClassPoints {
            searched: &searched,
            rechecked: &rechecked,
        };
        let verdict = ("default".to_string(), measured(1, 0.0).point);
        let with_winner = Verdict {
            best: None,
            winner: Some(&verdict),
            tuned_failed: false,
        };
        let (chosen, note) = preferred("quality", points, with_winner, false).expect("a point");
        assert_eq!(chosen.point, verdict.1);
        let note = note.expect("a note says why");
        assert!(
            note.contains("the default won the final re-measure"),
            "{note}"
        );
        // Where the tuned point failed a trial there, the note says that, not "won".
        let failed = Verdict {
            tuned_failed: true,
            ..with_winner
        };
        let (_, note) = preferred("quality", points, failed, false).expect("a point");
        let note = note.expect("a note says why");
        assert!(
            note.contains("failed a trial of the final re-measure"),
            "{note}"
        );
        // The campaign's best without a row of its own: said, not silently replaced.
        let gone = measured(64, 0.0).point;
        let missing = Verdict {
            best: Some(&gone),
            ..Verdict::default()
        };
        let (chosen, note) = preferred("quality", points, missing, false).expect("a point");
        assert_eq!(chosen.point, measured(128, 0.0).point);
        assert!(note
            .expect("a note")
            .contains("has no evaluation in the store"));

        // Where the search ran the default too, its search values describe it.
        let searched_too = by_point(&[measured(128, 0.0), measured(1, 0.1)]);
        let points = ClassPoints {
            searched: &searched_too,
            rechecked: &rechecked,
        };
        let (chosen, _) = preferred("quality", points, with_winner, false).expect("a point");
        assert_eq!(chosen.gap_percent, Some(0.1));

        // Measured nowhere: the search's best, and a note that says so.
        let empty = BTreeMap::new();
        let points = ClassPoints {
            searched: &searched,
            rechecked: &empty,
        };
        let (chosen, note) = preferred("quality", points, with_winner, false).expect("a point");
        assert_eq!(chosen.point, measured(128, 0.0).point);
        assert!(note.expect("a note").contains("holds no evaluation of it"));

        // Without a verdict (the search's best won) nothing is noted.
        let points = ClassPoints {
            searched: &searched,
            rechecked: &rechecked,
        };
        let (chosen, note) =
            preferred("quality", points, Verdict::default(), false).expect("a point");
        assert_eq!(chosen.point, measured(128, 0.0).point);
        assert_eq!(note, None);
    }

    #[test]
    fn among_tied_points_the_one_the_campaign_verified_is_exported() {
        // The quickstart's dominance=normal class on the CPU: 128 and 256 starts both reached
        // 0% in the search, which ended on 256 and re-measured that one; the export took 128,
        // the first of the tie in the map's order, a point nothing had verified.
        let searched = by_point(&[measured(128, 0.0), measured(256, 0.0), measured(16, 1.4)]);
        let empty = BTreeMap::new();
        let points = ClassPoints {
            searched: &searched,
            rechecked: &empty,
        };
        let campaign_best = measured(256, 0.0).point;
        let ended_on = Verdict {
            best: Some(&campaign_best),
            ..Verdict::default()
        };
        let (chosen, note) = preferred("quality", points, ended_on, false).expect("a point");
        assert_eq!(chosen.point, campaign_best);
        assert_eq!(note, None);
        // Without a summary the least value is all there is.
        let (chosen, _) = preferred("quality", points, Verdict::default(), false).expect("a point");
        assert_eq!(chosen.point, measured(128, 0.0).point);
    }
}
