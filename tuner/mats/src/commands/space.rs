//! `mats space show FILE`: a space's parameters, constants, constraints and size.

use std::fmt::Write as _;

use anyhow::Result;

use crate::cli::SpaceShowArgs;
use search::space::{kind_name, Space};

/// Prints the space (text, or JSON with `--json`).
pub fn show(args: &SpaceShowArgs) -> Result<()> {
    let space = Space::load(&args.file)?;
    let text = if args.json {
        let value = serde_json::json!({
            "file": space.origin(),
            "description": space.description(),
            "family": space.family(),
            "parameters": space.param_info(),
            "constants": space.constants(),
            "constraints": space.constraints(),
            "valid_points": space.count(),
            "unconstrained_points": space.unconstrained_count(),
            "raw_product": space.raw_product(),
        });
        serde_json::to_string_pretty(&value)? + "\n"
    } else {
        render(&space)
    };
    super::write_output(None, &text)
}

/// The text form.
pub fn render(space: &Space) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "space {}", space.origin());
    if let Some(d) = space.description() {
        let _ = writeln!(out, "  {d}");
    }
    if let Some(f) = space.family() {
        let _ = writeln!(out, "family: {f}");
    }
    let _ = writeln!(out, "\nparameters:");
    let rows: Vec<[String; 5]> = space
        .param_info()
        .into_iter()
        .map(|p| {
            let values: Vec<String> = p
                .domain
                .iter()
                .map(|v| match v {
                    results::Value::Text(t) => format!("{t:?}"),
                    results::Value::Int(i) => i.to_string(),
                })
                .collect();
            [
                p.name,
                kind_name(p.kind).to_string(),
                format!("{} value(s): {}", values.len(), abbreviate(&values)),
                p.when
                    .map_or_else(|| "all".to_string(), |w| format!("when {w}")),
                p.emits.unwrap_or_default(),
            ]
        })
        .collect();
    let header = ["name", "kind", "domain", "applies to", "emits"];
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: [&str; 5]| {
        let mut s = String::from(" ");
        for (c, w) in cells.iter().zip(widths) {
            // Padded by hand: a `{:<w$}` width above 65,535 panics, and cells come from files.
            s.push(' ');
            s.push_str(c);
            s.extend(std::iter::repeat_n(
                ' ',
                w.saturating_sub(c.chars().count()),
            ));
        }
        s.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line(header));
    for r in &rows {
        let _ = writeln!(out, "{}", line([&r[0], &r[1], &r[2], &r[3], &r[4]]));
    }
    let _ = writeln!(out, "\nconstants:");
    if space.constants().is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    for (k, v) in space.constants() {
        let _ = writeln!(out, "  {k} = {v}");
    }
    let _ = writeln!(out, "\nconstraints:");
    if space.constraints().is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    for c in space.constraints() {
        let _ = writeln!(out, "  {c}");
    }
    let raw = space.raw_product();
    let structural = space.unconstrained_count();
    let structural_text =
        structural.map_or("more than can be walked".to_string(), |n| n.to_string());
    let valid = space.count();
    let _ = writeln!(out);
    let _ = writeln!(out, "product of the domains:      {raw}");
    let _ = writeln!(out, "with `when` conditions:      {structural_text}");
    let _ = writeln!(
        out,
        "valid points:                {valid} ({:.1}% of the points the conditions allow)",
        100.0 * valid as f64 / structural.unwrap_or(u64::MAX).max(1) as f64
    );
    out
}

/// Long domains show their ends.
fn abbreviate(values: &[String]) -> String {
    if values.len() <= 8 {
        values.join(", ")
    } else {
        format!(
            "{}, ..., {}",
            values[..4].join(", "),
            values[values.len() - 2..].join(", ")
        )
    }
}
