//! The report page: a small document model and its HTML, with inline CSS and relative image
//! paths so `index.html` opens from disk with no server and no network.

use std::fmt::Write;

/// A table of numbers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub caption: Option<String>,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A block of a section.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A drawn figure: `file` is relative to the page.
    Figure {
        id: String,
        title: String,
        file: String,
        caption: String,
        tables: Vec<Table>,
    },
    /// A figure left out, with the reason.
    Skipped {
        id: String,
        title: String,
        reason: String,
    },
    Table(Table),
    /// Remarks shown as a list.
    Notes(Vec<String>),
}

/// A titled part of the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub id: String,
    pub title: String,
    pub intro: Option<String>,
    pub entries: Vec<Entry>,
}

/// The whole page.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub title: String,
    pub subtitle: String,
    pub sections: Vec<Section>,
}

/// Escapes text for HTML element content and double-quoted attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const CSS: &str = "
body { font-family: 'DejaVu Sans', system-ui, sans-serif; margin: 0 auto; max-width: 1280px;
       padding: 1.5em 2em; color: #222; line-height: 1.4; }
h1 { margin-bottom: 0.1em; } .subtitle { color: #555; margin-top: 0; }
h2 { border-bottom: 2px solid #0072b2; padding-bottom: 0.2em; margin-top: 2em; }
h3 { margin-bottom: 0.3em; }
nav ul { columns: 2; } nav a { color: #0072b2; }
figure { margin: 1em 0 2em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; background: #fff; }
figcaption { color: #444; font-size: 0.92em; margin: 0.3em 0 0.6em 0; }
table { border-collapse: collapse; margin: 0.4em 0 1em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #eef4f8; }
td { max-width: 40em; overflow-wrap: anywhere; }
caption { text-align: left; font-weight: bold; padding: 0.2em 0; }
details { margin-bottom: 1em; } summary { cursor: pointer; color: #0072b2; }
.skipped { background: #fff8e5; border-left: 4px solid #e69f00; padding: 0.4em 0.8em; margin: 0.6em 0; }
.notes { background: #f4f4f4; border-left: 4px solid #999; padding: 0.4em 0.8em 0.4em 2em; }
";

/// The page as a complete HTML document.
pub fn page_html(page: &Page) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n\
         <p class=\"subtitle\">{}</p>\n",
        escape(&page.title),
        escape(&page.title),
        escape(&page.subtitle)
    );
    h.push_str("<nav><ul>\n");
    for s in &page.sections {
        let _ = writeln!(
            h,
            "<li><a href=\"#{}\">{}</a></li>",
            escape(&s.id),
            escape(&s.title)
        );
    }
    h.push_str("</ul></nav>\n");
    for s in &page.sections {
        let _ = writeln!(
            h,
            "<section id=\"{}\">\n<h2>{}</h2>",
            escape(&s.id),
            escape(&s.title)
        );
        if let Some(intro) = &s.intro {
            let _ = writeln!(h, "<p>{}</p>", escape(intro));
        }
        for e in &s.entries {
            entry_html(&mut h, e);
        }
        h.push_str("</section>\n");
    }
    h.push_str("</body>\n</html>\n");
    h
}

fn entry_html(h: &mut String, e: &Entry) {
    match e {
        Entry::Figure {
            id,
            title,
            file,
            caption,
            tables,
        } => {
            let _ = writeln!(
                h,
                "<figure id=\"{}\">\n<h3>{}</h3>\n<img src=\"{}\" alt=\"{}\">\n\
                 <figcaption>{}</figcaption>",
                escape(id),
                escape(title),
                escape(file),
                escape(title),
                escape(caption)
            );
            if !tables.is_empty() {
                h.push_str("<details><summary>numbers behind the figure</summary>\n");
                for t in tables {
                    table_html(h, t);
                }
                h.push_str("</details>\n");
            }
            h.push_str("</figure>\n");
        }
        Entry::Skipped { id, title, reason } => {
            let _ = writeln!(
                h,
                "<p class=\"skipped\" id=\"{}\"><strong>{}</strong> not drawn: {}</p>",
                escape(id),
                escape(title),
                escape(reason)
            );
        }
        Entry::Table(t) => table_html(h, t),
        Entry::Notes(notes) if notes.is_empty() => {}
        Entry::Notes(notes) => {
            h.push_str("<ul class=\"notes\">\n");
            for n in notes {
                let _ = writeln!(h, "<li>{}</li>", escape(n));
            }
            h.push_str("</ul>\n");
        }
    }
}

fn table_html(h: &mut String, t: &Table) {
    h.push_str("<table>\n");
    if let Some(c) = &t.caption {
        let _ = writeln!(h, "<caption>{}</caption>", escape(c));
    }
    h.push_str("<tr>");
    for head in &t.headers {
        let _ = write!(h, "<th>{}</th>", escape(head));
    }
    h.push_str("</tr>\n");
    for row in &t.rows {
        h.push_str("<tr>");
        for cell in row {
            // Right-align numbers so columns of them line up.
            let numeric = cell
                .trim_end_matches(|c: char| c.is_alphabetic() || c == '%' || c == ' ' || c == 'µ')
                .parse::<f64>()
                .is_ok();
            let class = if numeric { " class=\"num\"" } else { "" };
            let _ = write!(h, "<td{class}>{}</td>", escape(cell));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn page_has_figures_and_skips() {
        let page = Page {
            title: "t<1>".into(),
            subtitle: String::new(),
            sections: vec![Section {
                id: "s".into(),
                title: "S".into(),
                intro: None,
                entries: vec![
                    Entry::Figure {
                        id: "f".into(),
                        title: "F".into(),
                        file: "f.svg".into(),
                        caption: "c".into(),
                        tables: vec![Table {
                            caption: None,
                            headers: vec!["a".into()],
                            rows: vec![vec!["1.5 ms".into()]],
                        }],
                    },
                    Entry::Skipped {
                        id: "g".into(),
                        title: "G".into(),
                        reason: "no data".into(),
                    },
                ],
            }],
        };
        let h = page_html(&page);
        assert!(h.contains("<title>t&lt;1&gt;</title>"));
        assert!(h.contains("src=\"f.svg\""));
        assert!(h.contains("class=\"num\">1.5 ms"));
        assert!(h.contains("not drawn: no data"));
    }
}
