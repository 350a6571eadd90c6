//! Assembles the report: derives each figure's data, draws it or records why not, builds the
//! tables and writes the page.

use std::collections::BTreeMap;
use std::path::Path;

use crate::data::{
    self, Analysis, Bars, BaselineSource, ConvergenceLine, Metric, MetricFigures as _, ParetoData,
};
use crate::figures::bars::{bar_desc, bar_scale, BarsPlot};
use crate::figures::convergence::{improvement_label, ConvergencePlot};
use crate::figures::pareto::ParetoPlot;
use crate::figures::subspace::SubspacePlot;
use crate::figures::{self, Plot};
use crate::html::{self, Entry, Page, Section, Table};
use crate::{ImageFormat, ReportError, ReportInput, ReportSummary, SkippedFigure, WrittenFigure};

/// Collects figures and skips while sections are built.
struct Writer<'a> {
    out_dir: &'a Path,
    format: ImageFormat,
    summary: ReportSummary,
}

impl Writer<'_> {
    /// Draws `plot` as `<id>.<ext>` and returns its page entry.
    fn figure(
        &mut self,
        id: String,
        title: String,
        plot: &impl Plot,
        caption: String,
        tables: Vec<Table>,
    ) -> Result<Entry, ReportError> {
        let file = format!("{id}.{}", self.format.extension());
        let path = self.out_dir.join(&file);
        figures::save(plot, &path, self.format).map_err(|message| ReportError::Draw {
            figure: id.clone(),
            message,
        })?;
        self.summary.written.push(WrittenFigure {
            id: id.clone(),
            title: title.clone(),
            path,
        });
        Ok(Entry::Figure {
            id,
            title,
            file,
            caption,
            tables,
        })
    }

    fn skip(&mut self, id: String, title: String, reason: String) -> Entry {
        self.summary.skipped.push(SkippedFigure {
            id: id.clone(),
            title: title.clone(),
            reason: reason.clone(),
        });
        Entry::Skipped { id, title, reason }
    }
}

pub(crate) fn render(
    input: &ReportInput,
    out_dir: &Path,
    format: ImageFormat,
) -> Result<ReportSummary, ReportError> {
    std::fs::create_dir_all(out_dir).map_err(|source| ReportError::Io {
        path: out_dir.to_path_buf(),
        source,
    })?;
    crate::font::ensure_registered();
    let an = Analysis::new(input);
    let mut w = Writer {
        out_dir,
        format,
        summary: ReportSummary {
            index: out_dir.join("index.html"),
            written: Vec::new(),
            skipped: Vec::new(),
        },
    };
    // Class numbers keep file names short and safe whatever characters class names hold.
    let class_no: BTreeMap<&str, usize> = an
        .classes
        .iter()
        .enumerate()
        .map(|(i, c)| (c.as_str(), i + 1))
        .collect();

    let mut sections = vec![campaign_section(input, &an), classes_section(&an)];
    sections.extend(budgets_section(&an));
    let verdicts = crate::verdict::class_verdicts(input);
    sections.push(verdict_section(&mut w, input, &verdicts)?);
    let (mut pareto, mut convergence, mut subspace) = (Vec::new(), Vec::new(), Vec::new());
    for class in &an.classes {
        let no = class_no[class.as_str()];
        if an.class_data[class].runs.is_empty() {
            continue;
        }
        pareto.extend(pareto_entries(&mut w, input, &an, class, no)?);
        convergence.extend(convergence_entries(&mut w, &an, class, no)?);
        subspace.push(subspace_entry(&mut w, &an, class, no)?);
    }
    sections.push(section(
        "pareto",
        "Pareto fronts",
        Some(
            "All evaluated points of each class (means over its instances); the non-dominated \
             ones are joined. Lower is better on both axes.",
        ),
        pareto,
    ));
    sections.push(section("convergence", "Convergence", None, convergence));
    sections.push(section(
        "subspace",
        "Compiler sub-space (Fig. 2)",
        None,
        subspace,
    ));
    sections.push(paper_section(&mut w, &an)?);

    let page = Page {
        title: format!("mats report: {}", input.campaign.name),
        subtitle: format!(
            "{} figure(s) drawn, {} left out for lack of data; campaign created {}",
            w.summary.written.len(),
            w.summary.skipped.len(),
            input.campaign.created_at
        ),
        sections,
    };
    let index = w.summary.index.clone();
    std::fs::write(&index, html::page_html(&page)).map_err(|source| ReportError::Io {
        path: index,
        source,
    })?;
    Ok(w.summary)
}

/// How the best configuration changes with the budget, where the campaign tuned several.
fn budgets_section(an: &Analysis<'_>) -> Option<Section> {
    let rows = crate::budgets::budget_rows(an);
    if rows.is_empty() {
        return None;
    }
    let metric = an
        .settings
        .objectives
        .as_deref()
        .and_then(|o| o.split_whitespace().next())
        .unwrap_or("time");
    Some(section(
        "budgets",
        "Budgets",
        Some(
            "The campaign tuned each class at several budgets (a later budget's search \
             starting from the earlier winner): how the best configuration changes with \
             the budget.",
        ),
        vec![Entry::Table(crate::budgets::budget_table(&rows, metric))],
    ))
}

/// A class's Pareto figures, one per pair of metrics the campaign's objectives draw.
fn pareto_entries(
    w: &mut Writer<'_>,
    input: &ReportInput,
    an: &Analysis<'_>,
    class: &str,
    no: usize,
) -> Result<Vec<Entry>, ReportError> {
    let cd = &an.class_data[class];
    let mut entries = Vec::new();
    for (x, y) in data::figure_pairs(an.settings.objectives.as_deref()) {
        // Time-based figures keep the ids they always had (`pareto-power-01`).
        let id = match x {
            Metric::Time => format!("pareto-{}-{no:02}", y.name()),
            _ => format!("pareto-{}-{}-{no:02}", x.name(), y.name()),
        };
        let title = format!("Pareto front, {} vs {}: {class}", x.name(), y.name());
        entries.push(match data::pareto_data(input, an, class, (x, y)) {
            Ok(d) => {
                let plot = ParetoPlot { data: &d };
                let caption = pareto_caption(&d);
                let tables = vec![pareto_table(&d, &plot, cd.baseline_time())];
                w.figure(id, title, &plot, caption, tables)?
            }
            Err(reason) => w.skip(id, title, reason),
        });
    }
    Ok(entries)
}

/// A class's convergence figures, one per metric its searches optimised.
fn convergence_entries(
    w: &mut Writer<'_>,
    an: &Analysis<'_>,
    class: &str,
    no: usize,
) -> Result<Vec<Entry>, ReportError> {
    let mut metrics: Vec<Metric> = an.class_data[class]
        .runs
        .iter()
        .filter(|r| r.row.strategy != "baseline" && r.row.strategy != "cross-class")
        .flat_map(|r| Metric::all_of(&r.row.objective))
        .collect();
    metrics.sort();
    metrics.dedup();
    if metrics.is_empty() {
        return Ok(vec![w.skip(
            format!("convergence-{no:02}"),
            format!("Convergence: {class}"),
            "no search run in this class".into(),
        )]);
    }
    let mut entries = Vec::new();
    for metric in metrics {
        let id = format!("convergence-{}-{no:02}", metric.name());
        let title = format!("Convergence ({}): {class}", metric.name());
        entries.push(match data::convergence_data(an, class, metric) {
            Ok(lines) => {
                let plot = ConvergencePlot {
                    class,
                    metric,
                    lines: &lines,
                };
                let caption = format!(
                    "{} against evaluations as a percentage of {} production runs (the paper's cost); one line \
                     per run, the dot marks its last evaluation.",
                    improvement_label(metric),
                    an.settings.production_runs
                );
                let tables = vec![convergence_table(&lines)];
                w.figure(id, title, &plot, caption, tables)?
            }
            Err(reason) => w.skip(id, title, reason),
        });
    }
    Ok(entries)
}

/// A class's compiler sub-space figure (the paper's Fig. 2).
fn subspace_entry(
    w: &mut Writer<'_>,
    an: &Analysis<'_>,
    class: &str,
    no: usize,
) -> Result<Entry, ReportError> {
    let id = format!("subspace-{no:02}");
    let title = format!("Compiler sub-space (Fig. 2): {class}");
    Ok(match data::compiler_subspace(an, class) {
        Ok(points) => {
            let plot = SubspacePlot {
                class,
                points: &points,
            };
            let mut caption = "Points that differ from the baseline only in compiler flags \
                               and defines: (a) speedups sorted, (b) power sorted, (c) \
                               speedup in order of power."
                .to_string();
            if points.iter().any(|p| p.power_w.is_none()) {
                caption.push_str(" Power was not measured, so only (a) is drawn.");
            }
            let mut rows: Vec<&data::SubspacePoint> = points.iter().collect();
            rows.sort_by(|a, b| a.speedup.total_cmp(&b.speedup));
            let table = Table {
                caption: None,
                headers: vec!["point".into(), "speedup".into(), "power (W)".into()],
                rows: rows
                    .iter()
                    .map(|p| vec![p.key.clone(), num(p.speedup), opt(p.power_w)])
                    .collect(),
            };
            w.figure(id, title, &plot, caption, vec![table])?
        }
        Err(reason) => w.skip(id, title, reason),
    })
}

/// The paper's Figs. 3-6 over all classes.
fn paper_section(w: &mut Writer<'_>, an: &Analysis<'_>) -> Result<Section, ReportError> {
    let mut paper = Vec::new();
    paper.push(bars_entry(
        w,
        "fig3-staged",
        "Staged vs combined search (Fig. 3)",
        "Best speedup each staged search reached per class: compiler flags first, launch \
         configuration first, or both at once.",
        data::staged_bars(an).map(|b| vec![b]),
    )?);
    let fig4 = data::data_tuned_bars(an);
    let tuned_note = fig4.as_ref().ok().map(|(_, k)| k.clone());
    paper.push(bars_entry(
        w,
        "fig4-data-tuned",
        "Data-tuned vs tuned (Fig. 4)",
        &format!(
            "Speedup over the baseline of each class's own best point (data-tuned) and of the \
             one point with the highest geometric-mean speedup over all classes (tuned{}).",
            tuned_note.map(|k| format!(": {k}")).unwrap_or_default()
        ),
        fig4.map(|(b, _)| vec![b]),
    )?);
    paper.push(bars_entry(
        w,
        "fig5-algorithmic-choice",
        "With and without algorithmic choice (Fig. 5)",
        "Best speedup per class when only the baseline's variant may be chosen, and when any \
         variant may.",
        data::algorithmic_choice_bars(an).map(|b| vec![b]),
    )?);
    paper.push(bars_entry(
        w,
        "fig6-objectives",
        "Tuning for time vs power vs Pareto (Fig. 6)",
        "Time and power of the point each objective chose per class (for Pareto runs, the \
         time-best and power-best points of the run's front).",
        data::objective_bars(an).map(|b| b.to_vec()),
    )?);
    Ok(section("paper", "The paper's figures", None, paper))
}

/// The verdict per class (tuned vs default on fresh seeds and holdouts), its figure, and the
/// same table as `verdicts.md` beside the page.
fn verdict_section(
    w: &mut Writer<'_>,
    input: &ReportInput,
    verdicts: &[crate::verdict::ClassVerdict],
) -> Result<Section, ReportError> {
    let md = crate::verdict::markdown(&input.campaign.name, verdicts);
    let md_path = w.out_dir.join("verdicts.md");
    std::fs::write(&md_path, md).map_err(|source| ReportError::Io {
        path: md_path,
        source,
    })?;
    let (headers, rows) = crate::verdict::table(verdicts);
    let mut entries = vec![Entry::Table(Table {
        caption: None,
        headers,
        rows,
    })];
    let id = "verdict".to_string();
    let title = "Tuned vs default per class".to_string();
    let measured: Vec<&crate::verdict::ClassVerdict> = verdicts
        .iter()
        .filter(|v| v.fresh.is_some() || v.held.is_some())
        .collect();
    let metrics: std::collections::BTreeSet<&str> =
        measured.iter().map(|v| v.metric.as_str()).collect();
    entries.push(if measured.is_empty() {
        w.skip(
            id,
            title,
            "no class has a final re-measure or holdouts (the campaign stopped before them, \
             or no search ran)"
                .into(),
        )
    } else if metrics.len() > 1 {
        w.skip(
            id,
            title,
            "the classes were compared in different metrics".into(),
        )
    } else {
        let metric = metrics.into_iter().next().unwrap_or("time");
        let label = match metric {
            "gap" => "mean gap (%)".to_string(),
            "energy" => "mean energy (J)".to_string(),
            "power" => "mean power (W)".to_string(),
            _ => "mean time".to_string(),
        };
        let panel = |holdout: bool, name: &str| Bars {
            y_label: format!("{label}, {name}"),
            is_time: metric == "time",
            categories: measured.iter().map(|v| v.class.clone()).collect(),
            series: vec![
                (
                    "reference (default or baseline)".into(),
                    measured
                        .iter()
                        .map(|v| v.pair(holdout).0.map(|m| m.mean))
                        .collect(),
                ),
                (
                    "tuned".into(),
                    measured
                        .iter()
                        .map(|v| v.pair(holdout).1.map(|m| m.mean))
                        .collect(),
                ),
            ],
            reference: None,
        };
        let panels = [panel(false, "fresh seeds"), panel(true, "holdouts")];
        let plot = BarsPlot {
            title: title.clone(),
            panels: &panels,
        };
        let tables = panels.iter().map(bars_table).collect();
        w.figure(
            id,
            title,
            &plot,
            "Means over (instance, seed) pairs of the tuned point and the point it must beat \
             (the default solver, else the baseline), re-measured on seeds the search never \
             used and on the held-out instances; lower is better. The table above gives the \
             spreads and the verdicts."
                .into(),
            tables,
        )?
    });
    Ok(section(
        "verdict",
        "Verdict per class",
        Some(
            "Each class's tuned point against the default solver (or the baseline where the \
             campaign names no default), re-measured interleaved on fresh seeds and on the \
             held-out instances: means ± sd over (instance, seed) pairs. Better or worse means \
             a difference of more than twice its standard error. The same table is in \
             verdicts.md.",
        ),
        entries,
    ))
}

fn section(id: &str, title: &str, intro: Option<&str>, entries: Vec<Entry>) -> Section {
    Section {
        id: id.into(),
        title: title.into(),
        intro: intro.map(str::to_string),
        entries,
    }
}

fn bars_entry(
    w: &mut Writer<'_>,
    id: &str,
    title: &str,
    caption: &str,
    panels: Result<Vec<Bars>, String>,
) -> Result<Entry, ReportError> {
    match panels {
        Ok(panels) => {
            let plot = BarsPlot {
                title: title.to_string(),
                panels: &panels,
            };
            let tables = panels.iter().map(bars_table).collect();
            w.figure(id.into(), title.into(), &plot, caption.into(), tables)
        }
        Err(reason) => Ok(w.skip(id.into(), title.into(), reason)),
    }
}

fn bars_table(b: &Bars) -> Table {
    let scale = bar_scale(b);
    let mut headers = vec!["class".to_string()];
    headers.extend(b.series.iter().map(|(name, _)| name.clone()));
    Table {
        caption: Some(bar_desc(b)),
        headers,
        rows: b
            .categories
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut row = vec![c.clone()];
                row.extend(
                    b.series
                        .iter()
                        .map(|(_, v)| opt(v.get(i).copied().flatten().map(|x| x * scale.factor))),
                );
                row
            })
            .collect(),
    }
}

fn pareto_caption(d: &ParetoData) -> String {
    let mut c = format!(
        "{} evaluated point(s), {} on the front (blue). The triangle marks the baseline",
        d.points.len(),
        d.front.len()
    );
    if d.baseline.is_none() {
        c.push_str(" (not measured here, so absent)");
    }
    c.push_str("; diamonds mark exported bundles.");
    if !d.remeasured.is_empty() {
        c.push_str(&format!(
            " Hollow circles: the {} front point(s) re-measured on fresh seeds after the \
             search, each joined to its search value; these are the values a power or energy \
             cap in `mats solve --tuned` compares.",
            d.remeasured.len()
        ));
    }
    for u in &d.unplaced_exports {
        c.push_str(&format!(
            " {u} was not evaluated in this class and is not drawn."
        ));
    }
    c
}

fn pareto_table(d: &ParetoData, plot: &ParetoPlot<'_>, base_time: Option<f64>) -> Table {
    let (xs, ys) = plot.scales();
    let x_head = format!("{} ({})", d.x_metric.name(), xs.unit);
    let y_head = format!("{} ({})", d.y_metric.name(), ys.unit);
    // A speedup only where the x axis is time.
    let base_time = base_time.filter(|_| d.x_metric == Metric::Time);
    let row = |role: &str, key: &str, x: f64, y: f64| {
        vec![
            role.to_string(),
            key.to_string(),
            num(x * xs.factor),
            num(y * ys.factor),
            opt(base_time.and_then(|b| data::speedup(b, x))),
        ]
    };
    let mut rows = Vec::new();
    if let Some((x, y)) = d.baseline {
        rows.push(row("baseline", "", x, y));
    }
    for (label, x, y) in &d.exports {
        rows.push(row(label, "", *x, *y));
    }
    for &i in &d.front {
        if let Some(p) = d.points.get(i) {
            rows.push(row("front", &p.key, p.x, p.y));
        }
    }
    for (key, x, y) in &d.remeasured {
        rows.push(row("front, re-measured", key, *x, *y));
    }
    Table {
        caption: Some("Baseline, exports, the points of the front and their re-measure".into()),
        headers: vec![
            "role".into(),
            "point".into(),
            x_head,
            y_head,
            "speedup".into(),
        ],
        rows,
    }
}

fn convergence_table(lines: &[ConvergenceLine]) -> Table {
    Table {
        caption: None,
        headers: vec![
            "run".into(),
            "evaluations".into(),
            "cost at end (%)".into(),
            "best".into(),
            "cost when best first reached (%)".into(),
        ],
        rows: lines
            .iter()
            .map(|l| {
                let last = l.points.last().copied();
                let best = last.map(|p| p.1);
                let first_best = best
                    .and_then(|b| l.points.iter().find(|p| p.1 >= b))
                    .map(|p| p.0);
                vec![
                    l.label.clone(),
                    l.evaluations.to_string(),
                    opt(last.map(|p| p.0)),
                    opt(best),
                    opt(first_best),
                ]
            })
            .collect(),
    }
}

fn campaign_section(input: &ReportInput, an: &Analysis<'_>) -> Section {
    let s = &an.settings;
    let missing = || "(not recorded)".to_string();
    let mut devices: Vec<&str> = input.trials.iter().map(|t| t.device.as_str()).collect();
    devices.sort();
    devices.dedup();
    let mut rows = vec![
        vec!["campaign".into(), input.campaign.name.clone()],
        vec!["created".into(), input.campaign.created_at.clone()],
        vec!["family".into(), s.family.clone().unwrap_or_else(missing)],
        vec!["backend".into(), s.backend.clone().unwrap_or_else(missing)],
        vec!["device".into(), s.device.clone().unwrap_or_else(missing)],
        vec![
            "devices in trials".into(),
            if devices.is_empty() {
                "(no trials)".into()
            } else {
                devices.join("; ")
            },
        ],
        vec![
            "objectives".into(),
            s.objectives.clone().unwrap_or_else(missing),
        ],
        vec!["production runs".into(), s.production_runs.to_string()],
        vec![
            "baseline point".into(),
            s.baseline.as_ref().map(|b| b.key()).unwrap_or_else(missing),
        ],
        vec![
            "quality margin (%)".into(),
            s.quality_margin_percent.map(num).unwrap_or_else(missing),
        ],
        vec![
            "seed".into(),
            s.seed
                .as_ref()
                .map(|v| v.to_string())
                .unwrap_or_else(missing),
        ],
        vec![
            "measurement".into(),
            s.measurement
                .as_ref()
                .map(|v| v.to_string())
                .unwrap_or_else(missing),
        ],
    ];
    if let Some(ps) = &s.parameters {
        rows.push(vec![
            "parameters".into(),
            ps.iter()
                .map(|p| format!("{} ({})", p.name, p.kind))
                .collect::<Vec<_>>()
                .join(", "),
        ]);
    }
    let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &input.trials {
        *by_status.entry(t.status.as_str()).or_default() += 1;
    }
    let trials = Table {
        caption: Some(format!("Trials ({})", input.trials.len())),
        headers: vec!["status".into(), "trials".into()],
        rows: by_status
            .iter()
            .map(|(s, n)| vec![s.to_string(), n.to_string()])
            .collect(),
    };
    let mut notes = s.notes.clone();
    notes.extend(an.notes.iter().cloned());
    section(
        "campaign",
        "Campaign",
        None,
        vec![
            Entry::Table(Table {
                caption: Some("Settings and device".into()),
                headers: vec!["setting".into(), "value".into()],
                rows,
            }),
            Entry::Table(trials),
            Entry::Notes(notes),
        ],
    )
}

fn classes_section(an: &Analysis<'_>) -> Section {
    // A quality campaign's production runs last a fixed budget: its classes are told apart by
    // their gaps, and a speedup would name the fastest point, not the one the campaign chose.
    let quality = an.quality();
    let rows = an
        .class_data
        .iter()
        .map(|(class, cd)| {
            let base = cd.baseline.as_ref().map(|(m, _)| m);
            // The lowest gap, or the highest speedup.
            let best = if quality {
                cd.lowest(Metric::Gap)
            } else {
                cd.best_point()
            };
            let mut row = vec![
                class.clone(),
                cd.instances.to_string(),
                cd.runs.len().to_string(),
                cd.points.len().to_string(),
            ];
            if quality {
                row.push(opt(base.and_then(|m| Metric::Gap.of(m))));
            }
            row.extend([
                opt(base.and_then(|m| Metric::Time.of(m)).map(|t| t * 1e3)),
                opt(base.and_then(|m| Metric::Power.of(m))),
                opt(base.and_then(|m| Metric::Energy.of(m))),
                match cd.baseline.as_ref().map(|(_, s)| s) {
                    Some(BaselineSource::Settings) => "settings".into(),
                    Some(BaselineSource::BaselineRun) => "baseline run".into(),
                    None => "-".into(),
                },
                opt(best.map(|(_, v)| v)),
                best.map_or_else(|| "-".into(), |(m, _)| m.key.clone()),
            ]);
            row
        })
        .collect();
    let mut headers: Vec<String> = ["class", "instances (with holdouts)", "runs", "points"]
        .map(String::from)
        .into();
    if quality {
        headers.push("baseline gap (%)".into());
    }
    headers.extend(
        [
            "baseline time (ms)",
            "baseline power (W)",
            "baseline energy (J)",
            "baseline from",
            if quality {
                "best gap (%)"
            } else {
                "best speedup"
            },
            "best point",
        ]
        .map(String::from),
    );
    section(
        "classes",
        "Classes",
        None,
        vec![Entry::Table(Table {
            caption: None,
            headers,
            rows,
        })],
    )
}

/// Four significant digits or so, never scientific notation for ordinary magnitudes.
fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else if a >= 0.001 || a == 0.0 {
        format!("{v:.4}")
    } else {
        format!("{v:.3e}")
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(num).unwrap_or_else(|| "-".into())
}
