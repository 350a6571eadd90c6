//! Several budgets in one campaign: a campaign with `budgets_s = [0.5, 5, 60]` tunes each
//! class once per budget, and every reader (summary, store runs, export, report) names such a
//! (class, budget) as `CLASS@BUDGETs`, so one store holds them side by side without a schema
//! change, and a report draws each as a class of its own.

/// The name of `class` tuned at `budget_s` seconds per run (`small@0.5s`).
pub fn budget_class(class: &str, budget_s: f64) -> String {
    format!("{class}@{}", seconds_label(budget_s))
}

/// A budget as the names write it: `0.5s`, `5s`, `60s` (Rust's shortest exact float text,
/// so the label reads back as the same number).
pub fn seconds_label(budget_s: f64) -> String {
    format!("{budget_s}s")
}

/// The class and the budget of a name [`budget_class`] wrote; a plain class name (a
/// campaign of one budget, or an older store) has no budget.
pub fn split_budget_class(name: &str) -> (&str, Option<f64>) {
    let Some((class, label)) = name.rsplit_once('@') else {
        return (name, None);
    };
    match label.strip_suffix('s').map(str::parse::<f64>) {
        Some(Ok(s)) if s.is_finite() && s > 0.0 && !class.is_empty() => (class, Some(s)),
        _ => (name, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_names_read_back_and_plain_names_have_no_budget() {
        for b in [0.5, 5.0, 60.0, 0.125, 1e-3] {
            let name = budget_class("n60-100", b);
            assert_eq!(split_budget_class(&name), ("n60-100", Some(b)), "{name}");
        }
        assert_eq!(budget_class("small", 5.0), "small@5s");
        assert_eq!(split_budget_class("small"), ("small", None));
        // Only a positive number of seconds after the last '@' is a budget.
        assert_eq!(split_budget_class("a@b"), ("a@b", None));
        assert_eq!(split_budget_class("a@-1s"), ("a@-1s", None));
        assert_eq!(split_budget_class("@5s"), ("@5s", None));
        assert_eq!(split_budget_class("x@y@2s"), ("x@y", Some(2.0)));
    }
}
