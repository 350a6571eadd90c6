//! The TSPLIB reader (symmetric TSP `.tsp` files and `.tour` files).
//!
//! Accepted: `KEY: VALUE` and `KEY : VALUE` header lines (split on the first `:`, keys
//! case-insensitive, values trimmed); `NODE_COORD_SECTION` with EUC_2D, CEIL_2D, ATT or GEO
//! (one `index x y` line per city, any order, coordinates in any float notation such as
//! `1.0e+03`); `EDGE_WEIGHT_SECTION` with EXPLICIT weights in FULL_MATRIX, UPPER_ROW,
//! LOWER_ROW, UPPER_DIAG_ROW, LOWER_DIAG_ROW and their column-wise twins (which for a
//! symmetric matrix are the row-wise formats transposed); `DISPLAY_DATA_SECTION` (skipped:
//! drawing coordinates only); files with or without the final `EOF`.
//!
//! Rejected with one error naming file and line: asymmetric or non-TSP types, other edge
//! weight types, `FIXED_EDGES_SECTION` (linhp318's Hamiltonian-path variant), missing or
//! duplicate cities, wrong value counts, asymmetric explicit matrices.

use std::path::Path;

use super::distance::EdgeWeightType;
use super::instance::{Instance, MAX_CITIES, MAX_EXPLICIT};
use crate::error::{quoted, read_to_string, InputError};

/// Reads a `.tsp` file; the instance is named after the file stem.
pub fn read(path: &Path) -> Result<Instance, InputError> {
    let text = read_to_string(path)?;
    parse(&text, path)
}

/// Cheap test used to detect the family: a TSPLIB header key on a `KEY: VALUE` line and a
/// distance section.
pub fn looks_like_tsplib(text: &str) -> bool {
    let mut header = false;
    let mut section = false;
    for line in text.lines().take(10_000) {
        let word = first_word(line).to_ascii_uppercase();
        if matches!(
            word.as_str(),
            "NAME" | "TYPE" | "DIMENSION" | "EDGE_WEIGHT_TYPE"
        ) && line.contains(':')
        {
            header = true;
        }
        if word == "NODE_COORD_SECTION" || word == "EDGE_WEIGHT_SECTION" {
            section = true;
            break;
        }
    }
    header && section
}

/// The first word of a line, without a trailing `:`.
fn first_word(line: &str) -> &str {
    let line = line.trim();
    let end = line
        .find(|c: char| c.is_whitespace() || c == ':')
        .unwrap_or(line.len());
    &line[..end]
}

/// A line that starts a section or ends the data: its first word is a TSPLIB keyword
/// (letters and underscores), never a number.
fn is_keyword_line(line: &str) -> bool {
    let word = first_word(line);
    !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphabetic() || c == '_')
        && word.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Full,
    UpperRow,
    LowerRow,
    UpperDiagRow,
    LowerDiagRow,
}

impl Format {
    fn parse(value: &str) -> Option<Format> {
        Some(match value.to_ascii_uppercase().as_str() {
            "FULL_MATRIX" => Format::Full,
            "UPPER_ROW" | "LOWER_COL" => Format::UpperRow,
            "LOWER_ROW" | "UPPER_COL" => Format::LowerRow,
            "UPPER_DIAG_ROW" | "LOWER_DIAG_COL" => Format::UpperDiagRow,
            "LOWER_DIAG_ROW" | "UPPER_DIAG_COL" => Format::LowerDiagRow,
            _ => return None,
        })
    }

    fn count(self, n: usize) -> usize {
        match self {
            Format::Full => n * n,
            Format::UpperRow | Format::LowerRow => n * (n - 1) / 2,
            Format::UpperDiagRow | Format::LowerDiagRow => n * (n + 1) / 2,
        }
    }

    /// The (row, column) cells in file order.
    fn cells(self, n: usize) -> Vec<(usize, usize)> {
        let mut cells = Vec::with_capacity(self.count(n));
        for i in 0..n {
            let columns = match self {
                Format::Full => 0..n,
                Format::UpperRow => i + 1..n,
                Format::LowerRow => 0..i,
                Format::UpperDiagRow => i..n,
                Format::LowerDiagRow => 0..i + 1,
            };
            cells.extend(columns.map(|j| (i, j)));
        }
        cells
    }
}

/// Parses TSPLIB text; `path` names the source in errors and gives the instance name.
pub fn parse(text: &str, path: &Path) -> Result<Instance, InputError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut parsed = Parsed::default();
    let mut k = 0;
    while k < lines.len() {
        let line_no = k + 1;
        let line = lines[k].trim();
        k += 1;
        if line.is_empty() {
            continue;
        }
        let word = first_word(line).to_ascii_uppercase();
        match word.as_str() {
            "EOF" => break,
            "NODE_COORD_SECTION"
            | "EDGE_WEIGHT_SECTION"
            | "DISPLAY_DATA_SECTION"
            | "FIXED_EDGES_SECTION"
            | "TOUR_SECTION"
            | "DEMAND_SECTION"
            | "DEPOT_SECTION" => {
                let start = k;
                while k < lines.len() && !is_keyword_line(lines[k]) {
                    k += 1;
                }
                parsed.section(&word, &lines[start..k], start, line_no, path)?;
            }
            _ => parsed
                .specification(line, line_no)
                .map_err(|message| InputError::syntax(path, line_no, message))?,
        }
    }
    parsed.build(path, lines.len().max(1))
}

/// What a file's lines said, before the instance is built; each with the line that said it.
#[derive(Default)]
struct Parsed {
    dimension: Option<(usize, usize)>,
    weight_type: Option<(EdgeWeightType, usize)>,
    /// With its name as written.
    format: Option<(Format, usize, String)>,
    /// The line of an `EDGE_WEIGHT_FORMAT: FUNCTION` (coordinates, not a matrix).
    function_format: Option<usize>,
    /// Coordinates and the section's line.
    coords: Option<(Vec<(f64, f64)>, usize)>,
    /// Values and the section's line.
    weights: Option<(Vec<i64>, usize)>,
}

/// A key or section said a second time: which one counts is a guess no parser should make.
fn twice(what: &str, first: usize, again: usize) -> String {
    format!("{what} appears twice (lines {first} and {again}); keep one")
}

impl Parsed {
    /// A data section (`body` starts at line `start` + 1; its keyword is on `line_no`).
    fn section(
        &mut self,
        word: &str,
        body: &[&str],
        start: usize,
        line_no: usize,
        path: &Path,
    ) -> Result<(), InputError> {
        let err = |message: String| InputError::syntax(path, line_no, message);
        let Some((n, _)) = self.dimension else {
            return Err(err(format!("{word} comes before the DIMENSION line")));
        };
        match word {
            "NODE_COORD_SECTION" => {
                if let Some((_, first)) = self.coords {
                    return Err(err(twice(word, first, line_no)));
                }
                self.coords = Some((read_coords(body, start, n, line_no, path)?, line_no));
            }
            "EDGE_WEIGHT_SECTION" => {
                if let Some((_, first)) = self.weights {
                    return Err(err(twice(word, first, line_no)));
                }
                self.weights = Some((read_weights(body, start, path)?, line_no));
            }
            "DISPLAY_DATA_SECTION" => {}
            "FIXED_EDGES_SECTION" => {
                return Err(err(
                    "FIXED_EDGES_SECTION is not supported (fixed edges make a \
                     Hamiltonian-path variant, not a plain TSP)"
                        .into(),
                ))
            }
            _ => {
                return Err(err(format!(
                    "{word} does not belong in a symmetric TSP file"
                )))
            }
        }
        Ok(())
    }

    /// A `KEY: VALUE` line on `line_no`; keys the distances do not depend on are skipped.
    fn specification(&mut self, line: &str, line_no: usize) -> Result<(), String> {
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!(
                "expected `KEY: VALUE` or a section name, found {}",
                quoted(line)
            ));
        };
        let key = key.trim().to_ascii_uppercase();
        let value = value.trim();
        let first = match key.as_str() {
            "DIMENSION" => self.dimension.map(|(_, l)| l),
            "EDGE_WEIGHT_TYPE" => self.weight_type.map(|(_, l)| l),
            "EDGE_WEIGHT_FORMAT" => self.format.as_ref().map(|(_, l, _)| *l),
            _ => None,
        };
        if let Some(first) = first {
            return Err(twice(&key, first, line_no));
        }
        match key.as_str() {
            "TYPE" => {
                let upper = value.to_ascii_uppercase();
                if upper.starts_with("ATSP") {
                    return Err("TYPE ATSP: asymmetric TSP is not supported".into());
                }
                if !upper.starts_with("TSP") {
                    return Err(format!("TYPE {value:?} is not a symmetric TSP (TYPE: TSP)"));
                }
            }
            "DIMENSION" => {
                let n = value
                    .parse::<usize>()
                    .map_err(|_| format!("DIMENSION must be an integer, found {value:?}"))?;
                if !(2..=MAX_CITIES).contains(&n) {
                    return Err(format!(
                        "DIMENSION must be between 2 and {MAX_CITIES}, found {n}"
                    ));
                }
                self.dimension = Some((n, line_no));
            }
            "EDGE_WEIGHT_TYPE" => {
                let t = match value.to_ascii_uppercase().as_str() {
                    "EUC_2D" => EdgeWeightType::Euc2d,
                    "CEIL_2D" => EdgeWeightType::Ceil2d,
                    "ATT" => EdgeWeightType::Att,
                    "GEO" => EdgeWeightType::Geo,
                    "EXPLICIT" => EdgeWeightType::Explicit,
                    _ => {
                        return Err(format!(
                            "EDGE_WEIGHT_TYPE {value:?} is not supported (EUC_2D, CEIL_2D, ATT, \
                             GEO, EXPLICIT)"
                        ))
                    }
                };
                self.weight_type = Some((t, line_no));
            }
            "EDGE_WEIGHT_FORMAT" if value.eq_ignore_ascii_case("FUNCTION") => {
                self.function_format = Some(line_no);
            }
            "EDGE_WEIGHT_FORMAT" => {
                let f = Format::parse(value).ok_or_else(|| {
                    format!(
                        "EDGE_WEIGHT_FORMAT {value:?} is not supported (FUNCTION, FULL_MATRIX, \
                         UPPER_ROW, LOWER_ROW, UPPER_DIAG_ROW, LOWER_DIAG_ROW, or their _COL \
                         twins)"
                    )
                })?;
                self.format = Some((f, line_no, value.to_ascii_uppercase()));
            }
            // NAME, COMMENT, NODE_COORD_TYPE, DISPLAY_DATA_TYPE, ... carry nothing the
            // distances depend on.
            _ => {}
        }
        Ok(())
    }

    /// The instance the lines describe; a missing line is reported at `last_line`.
    fn build(self, path: &Path, last_line: usize) -> Result<Instance, InputError> {
        let err = |line: usize, message: String| InputError::syntax(path, line, message);
        let Some((n, dim_line)) = self.dimension else {
            return Err(err(last_line, "no DIMENSION line".into()));
        };
        let Some((weight_type, type_line)) = self.weight_type else {
            return Err(err(last_line, "no EDGE_WEIGHT_TYPE line".into()));
        };
        let name = file_stem(path);
        if weight_type != EdgeWeightType::Explicit {
            if let Some((_, section_line)) = self.weights {
                return Err(err(
                    section_line,
                    format!(
                        "an EDGE_WEIGHT_SECTION with EDGE_WEIGHT_TYPE {} (line {type_line}): \
                         the distances come from the coordinates, so the weights would be \
                         ignored; use EDGE_WEIGHT_TYPE: EXPLICIT or drop the section",
                        weight_type.name()
                    ),
                ));
            }
            let Some((coords, _)) = self.coords else {
                return Err(err(
                    last_line,
                    format!(
                        "EDGE_WEIGHT_TYPE {} needs a NODE_COORD_SECTION",
                        weight_type.name()
                    ),
                ));
            };
            return Instance::from_coords(name, weight_type, coords)
                .map_err(|m| InputError::invalid(path, m));
        }
        let Some((format, _, format_name)) = self.format else {
            if let Some(line) = self.function_format {
                return Err(err(
                    line,
                    "EDGE_WEIGHT_FORMAT FUNCTION means weights computed from coordinates, but \
                     EDGE_WEIGHT_TYPE is EXPLICIT: give the matrix's format (FULL_MATRIX, \
                     UPPER_ROW, LOWER_DIAG_ROW, ...)"
                        .into(),
                ));
            }
            return Err(err(
                type_line,
                "EDGE_WEIGHT_TYPE EXPLICIT needs an EDGE_WEIGHT_FORMAT line".into(),
            ));
        };
        let Some((values, section_line)) = self.weights else {
            return Err(err(
                last_line,
                "EXPLICIT weights but no EDGE_WEIGHT_SECTION".into(),
            ));
        };
        if n > MAX_EXPLICIT {
            return Err(err(
                dim_line,
                format!("DIMENSION {n} exceeds {MAX_EXPLICIT}, the maximum for explicit matrices"),
            ));
        }
        let expected = format.count(n);
        if values.len() != expected {
            return Err(err(
                section_line,
                format!(
                    "EDGE_WEIGHT_SECTION holds {} values; {format_name} for DIMENSION {n} needs \
                     {expected}",
                    values.len()
                ),
            ));
        }
        let mut matrix = vec![-1i64; n * n];
        for ((i, j), v) in format.cells(n).into_iter().zip(values) {
            matrix[i * n + j] = v;
            if format != Format::Full {
                matrix[j * n + i] = v;
            }
        }
        for i in 0..n {
            if matrix[i * n + i] < 0 {
                matrix[i * n + i] = 0; // formats without the diagonal
            }
        }
        Instance::from_matrix(name, n, matrix).map_err(|message| err(section_line, message))
    }
}

/// `index x y` lines, indices 1..=n each exactly once.
fn read_coords(
    body: &[&str],
    first_line_index: usize,
    n: usize,
    section_line: usize,
    path: &Path,
) -> Result<Vec<(f64, f64)>, InputError> {
    let mut coords = vec![(f64::NAN, f64::NAN); n.min(body.len())];
    let mut seen = 0usize;
    for (offset, line) in body.iter().enumerate() {
        let line_no = first_line_index + offset + 1;
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        if fields.len() != 3 {
            return Err(InputError::syntax(
                path,
                line_no,
                format!("expected `index x y`, found {} fields", fields.len()),
            ));
        }
        let index = fields[0]
            .parse::<usize>()
            .ok()
            .filter(|&i| (1..=n).contains(&i));
        let Some(index) = index else {
            return Err(InputError::syntax(
                path,
                line_no,
                format!(
                    "city index must be an integer in 1..={n}, found {:?}",
                    fields[0]
                ),
            ));
        };
        let value = |s: &str| {
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    InputError::syntax(path, line_no, format!("coordinate {s:?} is not a number"))
                })
        };
        let (x, y) = (value(fields[1])?, value(fields[2])?);
        if index > coords.len() {
            return Err(InputError::syntax(
                path,
                line_no,
                format!("NODE_COORD_SECTION holds fewer lines than DIMENSION {n}"),
            ));
        }
        let slot = &mut coords[index - 1];
        if !slot.0.is_nan() {
            return Err(InputError::syntax(
                path,
                line_no,
                format!("city {index} appears twice"),
            ));
        }
        *slot = (x, y);
        seen += 1;
    }
    if seen != n {
        return Err(InputError::syntax(
            path,
            section_line,
            format!("NODE_COORD_SECTION holds {seen} cities, DIMENSION says {n}"),
        ));
    }
    Ok(coords)
}

fn read_weights(
    body: &[&str],
    first_line_index: usize,
    path: &Path,
) -> Result<Vec<i64>, InputError> {
    let mut values = Vec::new();
    for (offset, line) in body.iter().enumerate() {
        let line_no = first_line_index + offset + 1;
        for token in line.split_whitespace() {
            let v = token
                .parse::<i64>()
                .ok()
                .or_else(|| {
                    token
                        .parse::<f64>()
                        .ok()
                        .filter(|v| v.fract() == 0.0 && v.abs() < 9e15)
                        .map(|v| v as i64)
                })
                .ok_or_else(|| {
                    InputError::syntax(
                        path,
                        line_no,
                        format!("edge weight must be an integer, found {token:?}"),
                    )
                })?;
            values.push(v);
        }
    }
    Ok(values)
}

/// Reads a `.tour` file (`TOUR_SECTION`, 1-based cities ending with `-1`); returns the tour
/// 0-based after checking it visits every city of 1..=DIMENSION exactly once (the number of
/// cities read when there is no DIMENSION line).
pub fn read_tour(path: &Path) -> Result<Vec<usize>, InputError> {
    let text = read_to_string(path)?;
    parse_tour(&text, path)
}

/// See [`read_tour`].
pub fn parse_tour(text: &str, path: &Path) -> Result<Vec<usize>, InputError> {
    let mut dimension: Option<usize> = None;
    let mut tour: Option<Vec<usize>> = None;
    let mut section_line = 0;
    let mut lines = text.lines().enumerate();
    while let Some((index, line)) = lines.next() {
        let line_no = index + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let word = first_word(trimmed).to_ascii_uppercase();
        if word == "EOF" {
            break;
        }
        if word == "TOUR_SECTION" {
            section_line = line_no;
            let mut cities = Vec::new();
            let mut ended = false;
            for (index, line) in lines.by_ref() {
                let line_no = index + 1;
                if is_keyword_line(line) {
                    break;
                }
                let mut tokens = line.split_whitespace();
                for token in tokens.by_ref() {
                    let v = token.parse::<i64>().map_err(|_| {
                        InputError::syntax(
                            path,
                            line_no,
                            format!("expected a city number, found {token:?}"),
                        )
                    })?;
                    if v == -1 {
                        ended = true;
                        break;
                    }
                    let limit = dimension.unwrap_or(MAX_CITIES) as i64;
                    if !(1..=limit).contains(&v) {
                        return Err(InputError::syntax(
                            path,
                            line_no,
                            format!("city {v} is outside 1..={limit}"),
                        ));
                    }
                    cities.push(v as usize - 1);
                }
                if ended {
                    // A second tour, or numbers after the end, would be ignored: refused.
                    let rest: Vec<(usize, &str)> = tokens
                        .map(|t| (line_no, t))
                        .chain(
                            lines
                                .by_ref()
                                .flat_map(|(i, l)| l.split_whitespace().map(move |t| (i + 1, t))),
                        )
                        .take_while(|(_, t)| !t.eq_ignore_ascii_case("EOF"))
                        .collect();
                    if let Some((at, token)) = rest.first() {
                        return Err(InputError::syntax(
                            path,
                            *at,
                            format!(
                                "{token:?} after the tour's end (-1): a tour file holds one \
                                 tour, then EOF"
                            ),
                        ));
                    }
                    break;
                }
            }
            tour = Some(cities);
            break;
        }
        if let Some((key, value)) = trimmed.split_once(':') {
            let key = key.trim().to_ascii_uppercase();
            if key == "DIMENSION" {
                let n = value
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| (1..=MAX_CITIES).contains(&n));
                dimension = Some(n.ok_or_else(|| {
                    InputError::syntax(path, line_no, format!("bad DIMENSION {:?}", value.trim()))
                })?);
            }
            if key == "TYPE" && !value.trim().eq_ignore_ascii_case("TOUR") {
                return Err(InputError::syntax(
                    path,
                    line_no,
                    format!("TYPE {:?} is not a tour (TYPE: TOUR)", value.trim()),
                ));
            }
        } else {
            return Err(InputError::syntax(
                path,
                line_no,
                format!("expected `KEY: VALUE` or TOUR_SECTION, found {trimmed:?}"),
            ));
        }
    }
    let Some(tour) = tour else {
        return Err(InputError::invalid(path, "no TOUR_SECTION"));
    };
    let n = dimension.unwrap_or(tour.len());
    crate::permutation::check(&tour, n).map_err(|e| {
        InputError::syntax(
            path,
            section_line,
            format!(
                "the tour is not a permutation of 1..={n}: {}",
                e.describe(1)
            ),
        )
    })?;
    Ok(tour)
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tsp".to_string())
}
