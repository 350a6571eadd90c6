//! Best-known objective values.
//!
//! The project carries a table for the instances it ships (`data/bks.csv`, embedded in the
//! binary); users add tables with the columns of `../shared/data/*/bks.csv` (at least `name`
//! and `bks`; other columns are ignored). Later tables override earlier ones.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{read_to_string, InputError};
use crate::family::{Family, Instance};

const EMBEDDED: &str = include_str!("../../data/bks.csv");

/// Reference values of the generated HW/SW graphs of `campaigns/hwsw-synthetic.toml`, which
/// have no published best-known costs (`mats instance reference`, `data/hwsw/README.md`).
const EMBEDDED_HWSW: &str = include_str!("../../data/hwsw/synthetic-bks.csv");

/// A lookup from instance name (file stem, lower case) to best-known value. A name alone
/// does not make an instance: where a table says which family, size or content its row is
/// (columns `family`, `n` or `n_jobs`, `m_machines`, `fingerprint`), [`BestKnown::lookup`]
/// gives the value only to an instance that is that one, so a file that borrows a published
/// name (a generated QAP saved as `tai12a.dat`, a TSP file named `ta001`) gets no gap
/// rather than a wrong one.
#[derive(Debug, Clone, Default)]
pub struct BestKnown {
    values: HashMap<String, Vec<Row>>,
}

/// One table row as a lookup checks it.
#[derive(Debug, Clone)]
struct Row {
    entry: BestKnownEntry,
    family: Option<Family>,
    /// QAP and TSP n, PFSP jobs, HW/SW nodes.
    n: Option<usize>,
    /// PFSP machines.
    m: Option<usize>,
    fingerprint: Option<u64>,
}

/// What [`BestKnown::lookup`] found for an instance.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    Found(BestKnownEntry),
    /// No row has the instance's name.
    Unknown,
    /// Rows have its name but describe another instance: says how it differs.
    Mismatch(String),
}

impl Lookup {
    pub fn entry(&self) -> Option<BestKnownEntry> {
        match self {
            Lookup::Found(e) => Some(*e),
            _ => None,
        }
    }

    /// What a warning says where rows named `name` describe another instance.
    pub fn mismatch(&self, name: &str) -> Option<String> {
        match self {
            Lookup::Mismatch(why) => Some(format!(
                "no best-known value: the table's {name} is not this instance ({why})"
            )),
            _ => None,
        }
    }
}

/// A content fingerprint of a QAP instance (FNV-1a over n and both matrices, row-major, as
/// little-endian i64): what `data/bks.csv` records per QAPLIB instance, so that a generated
/// or edited instance saved under a QAPLIB name is not given that instance's value.
pub fn qap_fingerprint(i: &crate::qap::Instance) -> u64 {
    let n = i.n();
    let cells = |m: fn(&crate::qap::Instance, usize, usize) -> i64| {
        (0..n).flat_map(move |r| (0..n).map(move |c| m(i, r, c)))
    };
    let values = std::iter::once(n as i64)
        .chain(cells(crate::qap::Instance::a))
        .chain(cells(crate::qap::Instance::b));
    crate::fnv::fnv1a(values.flat_map(i64::to_le_bytes))
}

/// A content fingerprint of a TSP instance: FNV-1a over n, the distance type and what the
/// distances come from: every coordinate as parsed (so `565` and `565.0` agree) or, for an
/// explicit matrix, every entry (one edited weight of gr17 kept its optimum when only some
/// distances were hashed). Linear in n for coordinates; a matrix is read whole anyway.
pub fn tsp_fingerprint(i: &crate::tsp::Instance) -> u64 {
    use crate::tsp::distance::EdgeWeightType;
    let n = i.n();
    // Fixed codes, not the enum's order (a table's fingerprints must outlive a reordering).
    let kind: u64 = match i.edge_weight_type {
        EdgeWeightType::Euc2d => 1,
        EdgeWeightType::Ceil2d => 2,
        EdgeWeightType::Att => 3,
        EdgeWeightType::Geo => 4,
        EdgeWeightType::Explicit => 5,
    };
    let head = [n as u64, kind];
    let body: Box<dyn Iterator<Item = u64> + '_> = match i.edge_weight_type {
        EdgeWeightType::Explicit => {
            Box::new((0..n).flat_map(move |a| (0..n).map(move |b| i.dist(a, b) as u64)))
        }
        _ => Box::new(
            i.coords()
                .iter()
                .flat_map(|&(x, y)| [x.to_bits(), y.to_bits()]),
        ),
    };
    crate::fnv::fnv1a(head.into_iter().chain(body).flat_map(u64::to_le_bytes))
}

/// The fingerprint a best-known table's `fingerprint` column holds for this instance, where
/// its family has one (QAP, TSP: instances published by name alone; PFSP's Taillard
/// instances are checked against their generator, HW/SW graphs have no published table).
pub fn fingerprint(instance: &Instance) -> Option<u64> {
    match instance {
        Instance::Qap(q) => Some(qap_fingerprint(q)),
        Instance::Tsp(t) => Some(tsp_fingerprint(t)),
        Instance::Pfsp(_) | Instance::Hwsw(_) => None,
    }
}

/// The sizes a table row can state for an instance: (n, m).
fn sizes(instance: &Instance) -> (usize, Option<usize>) {
    match instance {
        Instance::Qap(i) => (i.n(), None),
        Instance::Pfsp(i) => (i.jobs, Some(i.machines)),
        Instance::Tsp(i) => (i.n(), None),
        Instance::Hwsw(i) => (i.n(), None),
    }
}

impl Row {
    /// Why this row is not `instance`'s, if it is not.
    fn differs(&self, instance: &Instance) -> Option<String> {
        let family = instance.family();
        if let Some(f) = self.family.filter(|f| *f != family) {
            return Some(format!(
                "the table's row is a {f} instance, this is {family}"
            ));
        }
        let (n, m) = sizes(instance);
        let size = |n: Option<usize>, m: Option<usize>| match (n, m) {
            (Some(n), Some(m)) => format!("{n} x {m}"),
            (Some(n), None) => format!("n = {n}"),
            _ => "?".to_string(),
        };
        if self.n.is_some_and(|r| r != n) || matches!((self.m, m), (Some(r), Some(m)) if r != m) {
            return Some(format!(
                "the table's row is of size {}, this instance {}",
                size(self.n, self.m),
                size(Some(n), m)
            ));
        }
        if let (Some(want), Some(have)) = (self.fingerprint, fingerprint(instance)) {
            if have != want {
                let what = match instance {
                    Instance::Tsp(_) => "its distances differ",
                    _ => "its matrices differ",
                };
                return Some(format!(
                    "the table's row is another instance of the same size: {what}"
                ));
            }
        }
        None
    }
}

/// One best-known value and whether it is proven optimal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct BestKnownEntry {
    pub value: i64,
    /// `Some(true)` when the table says the value is optimal, `None` when it does not say.
    pub optimal: Option<bool>,
}

impl BestKnown {
    /// The table of the instances the project ships.
    pub fn embedded() -> Self {
        let mut table = BestKnown::default();
        table
            .add_csv(EMBEDDED, Path::new("<embedded data/bks.csv>"))
            .expect("the embedded best-known table is valid (checked by a unit test)");
        table
            .add_csv(
                EMBEDDED_HWSW,
                Path::new("<embedded data/hwsw/synthetic-bks.csv>"),
            )
            .expect("the embedded HW/SW reference table is valid (checked by a unit test)");
        table
    }

    /// Adds (or overrides) values from a CSV file.
    pub fn add_file(&mut self, path: &Path) -> Result<(), InputError> {
        let text = read_to_string(path)?;
        self.add_csv(&text, path)
    }

    /// Adds (or overrides) values from CSV text with a header naming `name` and `bks`.
    pub fn add_csv(&mut self, text: &str, origin: &Path) -> Result<(), InputError> {
        for row in rows(text, origin)? {
            let optimal = match row.optimal.as_str() {
                "yes" | "true" => Some(true),
                "no" | "false" => Some(false),
                _ => None,
            };
            let new = Row {
                entry: BestKnownEntry {
                    value: row.value,
                    optimal,
                },
                family: row.family,
                n: row.n,
                m: row.m,
                fingerprint: row.fingerprint,
            };
            // A later row overrides the earlier ones it could be the same instance as.
            let same = self.values.entry(row.name.to_lowercase()).or_default();
            same.retain(|old| matches!((old.family, new.family), (Some(a), Some(b)) if a != b));
            same.push(new);
        }
        Ok(())
    }

    /// The best-known value of a name (case-insensitive), whatever instance it belongs to:
    /// for the instances mats ships and its own benchmarks. Files users give go through
    /// [`BestKnown::lookup`].
    pub fn get(&self, name: &str) -> Option<BestKnownEntry> {
        let name = name.to_lowercase();
        self.values
            .get(&name)
            .or_else(|| self.values.get(name.strip_suffix("_gap")?))
            .and_then(|rows| rows.last())
            .map(|r| r.entry)
    }

    /// The best-known value of `instance`: the latest row with its name whose family, size
    /// and content (where the table gives them) are the instance's.
    pub fn lookup(&self, instance: &Instance) -> Lookup {
        let name = instance.name().to_lowercase();
        let rows = self.values.get(&name).or_else(|| {
            // VRF's files are `VFR10_5_1_Gap.txt`, its tables name the instance `VFR10_5_1`.
            let published = name.strip_suffix("_gap")?;
            self.values
                .get(published)
                .filter(|_| instance.family() == Family::Pfsp)
        });
        let Some(rows) = rows else {
            return Lookup::Unknown;
        };
        let mut why = None;
        for row in rows.iter().rev() {
            match row.differs(instance) {
                None => return Lookup::Found(row.entry),
                Some(w) => why = why.or(Some(w)),
            }
        }
        Lookup::Mismatch(why.unwrap_or_default())
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// One row of a best-known table as written: what [`BestKnown`] keeps of it, and what a
/// tool that rewrites tables (`mats instance reference`) must carry through unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRow {
    /// The line of the file it was read from.
    pub line: usize,
    /// As written (trimmed); lookups lower-case it.
    pub name: String,
    pub value: i64,
    /// The `optimal` column as written (trimmed), empty where the table has none.
    pub optimal: String,
    /// The `method` column as written (trimmed), empty where the table has none.
    pub method: String,
    /// The `family` column where it names a problem family (QAPLIB's table uses it for
    /// QAPLIB's own families, `bur`, `tai`...: those say nothing here).
    pub family: Option<Family>,
    /// The `family` column as written (trimmed), for a tool that writes the table back.
    pub family_text: String,
    /// `n` (or `n_jobs`): QAP and TSP n, PFSP jobs, HW/SW nodes.
    pub n: Option<usize>,
    /// `m_machines`: PFSP machines.
    pub m: Option<usize>,
    /// `fingerprint` (hex): [`qap_fingerprint`] of the instance.
    pub fingerprint: Option<u64>,
}

/// The rows of a best-known table (CSV whose header names at least `name` and `bks`; other
/// columns are ignored, rows without a name or value skipped). Errors name `origin` and the
/// line.
pub fn rows(text: &str, origin: &Path) -> Result<Vec<TableRow>, InputError> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| InputError::syntax(origin, 1, format!("cannot read the CSV header: {e}")))?
        .clone();
    let column = |name: &str| headers.iter().position(|h| h.trim() == name);
    let (Some(name_col), Some(bks_col)) = (column("name"), column("bks")) else {
        return Err(InputError::syntax(
            origin,
            1,
            "a best-known table needs the columns `name` and `bks`",
        ));
    };
    let (optimal_col, method_col) = (column("optimal"), column("method"));
    let family_col = column("family");
    let n_col = column("n").or_else(|| column("n_jobs"));
    let m_col = column("m_machines");
    let fingerprint_col = column("fingerprint");
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            InputError::syntax(origin, line, format!("bad CSV record: {e}"))
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        // No name or value spans lines, so a field that does was opened by a quote that is
        // never closed: the csv reader would swallow the rest of the table into it.
        if record.iter().any(|f| f.contains('\n')) {
            return Err(InputError::syntax(
                origin,
                line,
                "a quoted field runs to the next line or to the end of the file \
                 (an unterminated `\"`?)",
            ));
        }
        let field = |col: Option<usize>| col.and_then(|c| record.get(c)).unwrap_or("").trim();
        let (name, raw) = (field(Some(name_col)), field(Some(bks_col)));
        if name.is_empty() || raw.is_empty() {
            continue;
        }
        let value = raw.parse::<i64>().map_err(|_| {
            InputError::syntax(
                origin,
                line,
                format!("best-known value of {name} is not an integer: {raw:?}"),
            )
        })?;
        let size = |col: Option<usize>, what: &str| -> Result<Option<usize>, InputError> {
            let raw = field(col);
            if raw.is_empty() {
                return Ok(None);
            }
            raw.parse::<usize>().map(Some).map_err(|_| {
                InputError::syntax(
                    origin,
                    line,
                    format!("{what} of {name} is not a whole number: {raw:?}"),
                )
            })
        };
        let fingerprint = match field(fingerprint_col) {
            "" => None,
            raw => Some(u64::from_str_radix(raw, 16).map_err(|_| {
                InputError::syntax(
                    origin,
                    line,
                    format!("fingerprint of {name} is not a hexadecimal number: {raw:?}"),
                )
            })?),
        };
        rows.push(TableRow {
            line,
            name: name.to_string(),
            value,
            optimal: field(optimal_col).to_string(),
            method: field(method_col).to_string(),
            family: field(family_col).parse::<Family>().ok(),
            family_text: field(family_col).to_string(),
            n: size(n_col, "the size")?,
            m: size(m_col, "the machine count")?,
            fingerprint,
        });
    }
    Ok(rows)
}

/// Relative gap of `objective` above `best_known`, in percent (minimisation): positive for a
/// worse objective whatever the sign of the best known (QAP instances with negative entries
/// have negative optima), exact for any pair of i64 (the difference in i128).
pub fn gap_percent(objective: i64, best_known: i64) -> Option<f64> {
    let above = i128::from(objective) - i128::from(best_known);
    (best_known != 0).then(|| 100.0 * above as f64 / best_known.unsigned_abs() as f64)
}

/// A gap as text says it: "0.125% above" the best known, or "2.428% below" it.
pub fn above_or_below(gap_percent: f64) -> String {
    if gap_percent < 0.0 {
        format!("{:.3}% below", -gap_percent)
    } else {
        format!("{gap_percent:.3}% above")
    }
}

/// The largest objective whose gap to `best_known` is at most `gap_percent` (minimisation),
/// so that a time-to-target run stops on exact integers.
pub fn target_objective(best_known: i64, gap_percent: f64) -> i64 {
    let slack = (best_known.unsigned_abs() as f64 * gap_percent.max(0.0) / 100.0).floor();
    best_known.saturating_add(slack.min(i64::MAX as f64) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_below_the_best_known_says_below() {
        assert_eq!(above_or_below(0.125), "0.125% above");
        assert_eq!(above_or_below(0.0), "0.000% above");
        assert_eq!(above_or_below(-2.4281), "2.428% below");
    }

    #[test]
    fn embedded_table_parses_and_has_shipped_instances() {
        let table = BestKnown::embedded();
        assert_eq!(table.get("tai12a").map(|e| e.value), Some(224416));
        assert_eq!(table.get("TA001").map(|e| e.value), Some(1278));
        // The generated HW/SW graphs' reference values (not proven optimal).
        let hwsw = table
            .get("hwsw-300n-600e-ccr1-low-s1")
            .expect("a reference value");
        assert!(hwsw.value > 0);
        assert_eq!(hwsw.optimal, Some(false));
    }

    fn load(path: &str) -> Instance {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        crate::family::load(&root.join(path), None, None).expect("a shipped instance")
    }

    /// The embedded rows say which instance they are; the repository's own copies match.
    #[test]
    fn embedded_rows_match_the_shipped_instances_by_family_size_and_content() {
        let table = BestKnown::embedded();
        for path in [
            "data/qap/tai12a.dat",
            "data/qap/nug12.dat",
            "data/qap/chr12a.dat",
            "data/qap/bur26a.dat",
            "data/qap/esc16a.dat",
            "data/tsp/att48.tsp",
            "data/tsp/berlin52.tsp",
            "data/tsp/gr17.tsp",
            "data/tsplib/pr2392.tsp",
        ] {
            let instance = load(path);
            assert!(
                matches!(table.lookup(&instance), Lookup::Found(_)),
                "{path}: {:?}",
                table.lookup(&instance)
            );
        }
    }

    /// A name alone gives no value: another family, another size, or (QAP) other matrices
    /// under a QAPLIB name get none, and say why.
    #[test]
    fn a_borrowed_name_gets_no_value() {
        let table = BestKnown::embedded();
        let mut qap = match load("data/qap/tai12a.dat") {
            Instance::Qap(q) => q,
            _ => unreachable!(),
        };
        let n = qap.n();
        let mut a: Vec<i64> = (0..n * n).map(|k| qap.a(k / n, k % n)).collect();
        let b: Vec<i64> = (0..n * n).map(|k| qap.b(k / n, k % n)).collect();
        a[1] += 1;
        let edited = crate::qap::Instance::new("tai12a", n, a, b).expect("an instance");
        let why = match table.lookup(&Instance::Qap(edited)) {
            Lookup::Mismatch(why) => why,
            other => panic!("{other:?}"),
        };
        assert!(why.contains("matrices differ"), "{why}");
        // A TSPLIB file with one city moved (its name, size and layout as before).
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = std::fs::read_to_string(root.join("data/tsp/berlin52.tsp")).unwrap();
        let moved = text.replacen("\n1 565.0 575.0\n", "\n1 5.0 5.0\n", 1);
        assert_ne!(
            moved, text,
            "city 1 of berlin52 is where the test expects it"
        );
        let edited = crate::tsp::parse(&moved, Path::new("berlin52.tsp")).unwrap();
        let why = match table.lookup(&Instance::Tsp(edited)) {
            Lookup::Mismatch(why) => why,
            other => panic!("{other:?}"),
        };
        assert!(why.contains("distances differ"), "{why}");
        // An explicit matrix with one weight changed (gr17's d(1, 3): 257 -> 1).
        let text = std::fs::read_to_string(root.join("data/tsp/gr17.tsp")).unwrap();
        let edited = text.replacen(" 257 ", " 1 ", 1);
        assert_ne!(edited, text, "gr17 holds the weight the test edits");
        let edited = crate::tsp::parse(&edited, Path::new("gr17.tsp")).unwrap();
        assert!(matches!(
            table.lookup(&Instance::Tsp(edited)),
            Lookup::Mismatch(_)
        ));
        qap.name = "berlin52".into();
        let why = match table.lookup(&Instance::Qap(qap)) {
            Lookup::Mismatch(why) => why,
            other => panic!("{other:?}"),
        };
        assert!(why.contains("tsp") && why.contains("qap"), "{why}");
        let mut small = crate::pfsp::generate(3, 2, 5);
        small.name = "ta001".into();
        let why = match table.lookup(&Instance::Pfsp(small)) {
            Lookup::Mismatch(why) => why,
            other => panic!("{other:?}"),
        };
        assert!(why.contains("20 x 5") && why.contains("3 x 2"), "{why}");
        // `_Gap` is VRF's suffix: a flowshop's only.
        let mut gap = match load("data/qap/nug12.dat") {
            Instance::Qap(q) => q,
            _ => unreachable!(),
        };
        gap.name = "nug12_gap".into();
        assert_eq!(table.lookup(&Instance::Qap(gap)), Lookup::Unknown);
        // A user's table without these columns is matched by name, as before.
        let mut user = BestKnown::default();
        user.add_csv("name,bks\nta001,7\n", Path::new("u.csv"))
            .expect("a table");
        let mut tiny = crate::pfsp::generate(3, 2, 5);
        tiny.name = "ta001".into();
        assert_eq!(
            user.lookup(&Instance::Pfsp(tiny)).entry().map(|e| e.value),
            Some(7)
        );
    }

    #[test]
    fn an_unterminated_quote_is_refused_at_its_line() {
        let e = BestKnown::default()
            .add_csv("name,bks\nx,1\n\"y,2\nz,3\n", Path::new("t.csv"))
            .unwrap_err();
        assert!(e.to_string().starts_with("t.csv:3:"), "{e}");
        assert!(e.to_string().contains("unterminated"), "{e}");
        // Quoted fields that close on their line stay fine.
        let mut t = BestKnown::default();
        t.add_csv("name,bks\n\"y\",\"2\"\n", Path::new("t.csv"))
            .expect("quoted fields");
        assert_eq!(t.get("y").map(|e| e.value), Some(2));
    }

    #[test]
    fn rejects_missing_columns_and_bad_values() {
        let mut t = BestKnown::default();
        let e = t
            .add_csv("name,value\nx,1\n", Path::new("t.csv"))
            .unwrap_err();
        assert!(e.to_string().contains("t.csv:1"), "{e}");
        let e = t
            .add_csv("name,bks\nx,1\ny,abc\n", Path::new("t.csv"))
            .unwrap_err();
        assert!(e.to_string().contains("t.csv:3"), "{e}");
        assert!(e.to_string().contains("abc"), "{e}");
    }

    #[test]
    fn gap_is_relative_percent() {
        assert_eq!(gap_percent(110, 100), Some(10.0));
        assert_eq!(gap_percent(5, 0), None);
        // A worse (higher) objective is above a negative best known too.
        assert_eq!(gap_percent(-90, -100), Some(10.0));
        assert_eq!(gap_percent(-110, -100), Some(-10.0));
        // The extremes neither overflow nor flip sign.
        assert_eq!(
            gap_percent(i64::MAX, i64::MIN),
            Some(100.0 * (u64::MAX as f64) / 2f64.powi(63))
        );
        assert!(gap_percent(0, i64::MIN).is_some_and(|g| g > 0.0));
    }
}
