//! Renders the synthetic campaigns in both formats and checks what a user would open: every
//! figure file exists, is non-empty and parses; the page references only files that exist;
//! figures without data are listed as skipped and not written.

use std::collections::BTreeSet;
use std::path::Path;

use reports::demo::{synthetic_input, Flavour};
use reports::{render, ImageFormat, ReportSummary};

fn check_figures(summary: &ReportSummary, format: ImageFormat) {
    assert!(!summary.written.is_empty());
    for f in &summary.written {
        let bytes = std::fs::read(&f.path).unwrap_or_else(|e| panic!("{}: {e}", f.path.display()));
        assert!(!bytes.is_empty(), "{} is empty", f.path.display());
        match format {
            ImageFormat::Svg => {
                let text = std::str::from_utf8(&bytes).expect("SVG is UTF-8");
                let doc = roxmltree::Document::parse(text)
                    .unwrap_or_else(|e| panic!("{} is not XML: {e}", f.path.display()));
                assert_eq!(doc.root_element().tag_name().name(), "svg");
            }
            ImageFormat::Png => {
                let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
                let mut reader = decoder
                    .read_info()
                    .unwrap_or_else(|e| panic!("{} is not PNG: {e}", f.path.display()));
                let mut buf = vec![0; reader.output_buffer_size()];
                let info = reader.next_frame(&mut buf).expect("PNG decodes");
                assert!(info.width > 100 && info.height > 100);
            }
        }
    }
    for s in &summary.skipped {
        assert!(!s.reason.is_empty());
        for ext in ["svg", "png"] {
            let p = summary.index.with_file_name(format!("{}.{ext}", s.id));
            assert!(!p.exists(), "skipped figure {} was written", s.id);
        }
    }
}

/// Every `src` and `href` of the page that is not an in-page anchor names an existing file
/// in the report folder; returns the referenced files.
fn check_links(index: &Path) -> BTreeSet<String> {
    let html = std::fs::read_to_string(index).expect("index.html");
    assert!(html.starts_with("<!DOCTYPE html>"));
    let dir = index.parent().expect("folder");
    let mut files = BTreeSet::new();
    for attr in ["src=\"", "href=\""] {
        for (pos, _) in html.match_indices(attr) {
            let rest = &html[pos + attr.len()..];
            let value = &rest[..rest.find('"').expect("closing quote")];
            if value.starts_with('#') {
                continue;
            }
            assert!(
                !value.contains("://") && !value.starts_with('/'),
                "{value} is not relative"
            );
            assert!(
                dir.join(value).is_file(),
                "index.html references missing {value}"
            );
            files.insert(value.to_string());
        }
    }
    files
}

#[test]
fn gpu_campaign_in_both_formats() {
    for format in [ImageFormat::Svg, ImageFormat::Png] {
        let dir = tempfile::tempdir().expect("tempdir");
        let summary = render(&synthetic_input(Flavour::Gpu), dir.path(), format).expect("render");
        check_figures(&summary, format);
        let referenced = check_links(&summary.index);
        // The page shows every figure written, and nothing else.
        let written: BTreeSet<String> = summary
            .written
            .iter()
            .filter_map(|f| f.path.file_name()?.to_str().map(str::to_string))
            .collect();
        assert_eq!(referenced, written);
        let ids: BTreeSet<&str> = summary.written.iter().map(|f| f.id.as_str()).collect();
        for id in [
            "pareto-power-01",
            "pareto-energy-03",
            "convergence-time-02",
            "subspace-01",
            "fig3-staged",
            "fig4-data-tuned",
            "fig5-algorithmic-choice",
            "fig6-objectives",
            "verdict",
        ] {
            assert!(ids.contains(id), "{id} missing from {ids:?}");
        }
        assert!(summary.skipped.is_empty(), "{:?}", summary.skipped);
        // The campaign's front, re-measured on fresh seeds, is drawn and tabled beside the
        // search's values (it is what a cap in `solve --tuned` compares).
        let html = std::fs::read_to_string(&summary.index).unwrap();
        assert!(
            html.contains("5 front point(s) re-measured on fresh seeds"),
            "caption"
        );
        assert!(html.contains("front, re-measured"), "table rows");
        if format == ImageFormat::Svg {
            let figure = summary.index.with_file_name("pareto-energy-01.svg");
            let svg = std::fs::read_to_string(&figure).unwrap();
            assert!(svg.contains("front re-measured on fresh seeds"), "legend");
        }
    }
}

#[test]
fn cpu_campaign_skips_power_figures_with_reasons() {
    let dir = tempfile::tempdir().expect("tempdir");
    let summary =
        render(&synthetic_input(Flavour::Cpu), dir.path(), ImageFormat::Svg).expect("render");
    check_figures(&summary, ImageFormat::Svg);
    check_links(&summary.index);
    let skipped: BTreeSet<&str> = summary.skipped.iter().map(|s| s.id.as_str()).collect();
    for id in ["pareto-power-01", "pareto-energy-02", "fig6-objectives"] {
        assert!(skipped.contains(id), "{id} not skipped: {skipped:?}");
    }
    assert!(summary
        .skipped
        .iter()
        .any(|s| s.reason.contains("CPU campaign")));
    // Time-only figures are still drawn.
    assert!(summary
        .written
        .iter()
        .any(|f| f.id == "convergence-time-01"));
    assert!(summary.written.iter().any(|f| f.id == "subspace-01"));
    let html = std::fs::read_to_string(&summary.index).expect("index");
    assert!(html.contains("not drawn:"));
    // `device` is missing from the CPU settings: the page says so instead of failing.
    assert!(html.contains("settings has no `device`"));
}

#[test]
fn empty_campaign_still_writes_a_page() {
    let mut input = synthetic_input(Flavour::Gpu);
    input.campaign.settings = serde_json::json!({});
    input.runs.clear();
    input.evaluations.clear();
    input.exports.clear();
    input.campaign.name = "<script>alert(1)</script>".into();
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = render(&input, dir.path(), ImageFormat::Png).expect("render");
    assert!(summary.written.is_empty());
    assert!(!summary.skipped.is_empty());
    check_links(&summary.index);
    let html = std::fs::read_to_string(&summary.index).expect("index");
    assert!(!html.contains("<script>"), "campaign name not escaped");
}

#[test]
fn missing_baseline_setting_falls_back_to_the_baseline_run() {
    let mut input = synthetic_input(Flavour::Gpu);
    if let Some(obj) = input.campaign.settings.as_object_mut() {
        obj.remove("baseline");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = render(&input, dir.path(), ImageFormat::Svg).expect("render");
    // Speedup figures still work from the baseline run...
    assert!(summary
        .written
        .iter()
        .any(|f| f.id == "convergence-time-01"));
    // ...but Fig. 2 needs the baseline's parameters and Fig. 5 its variant.
    let skipped: BTreeSet<&str> = summary.skipped.iter().map(|s| s.id.as_str()).collect();
    assert!(skipped.contains("subspace-01"));
    assert!(skipped.contains("fig5-algorithmic-choice"));
}
