//! `mats instance score`: the exact objective of a solution found elsewhere.
//!
//! Side-by-side comparisons with other codes (docs/qap-gpu.md runs ACOTSPQAP beside mats) are
//! only honest when every answer is scored by the same code; this command is that code for
//! answers mats did not produce itself.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use solvers::bks::{gap_percent, BestKnownEntry};
use solvers::family::{self, Family, SolutionError};

use crate::cli::ScoreArgs;

#[derive(Serialize)]
struct Score<'a> {
    file: String,
    family: &'a str,
    instance: &'a str,
    objective: i64,
    best_known: Option<BestKnownEntry>,
    gap_percent: Option<f64>,
    /// How a QAPLIB `.sln` file wrote the permutation (absent for other solutions).
    #[serde(skip_serializing_if = "Option::is_none")]
    sln_convention: Option<solvers::qap::Convention>,
}

pub fn score(args: &ScoreArgs) -> Result<()> {
    let src = &args.source;
    let bks = super::best_known(&src.bks)?;
    let instance = family::load(&src.file, src.family, src.index)?;
    let origin = args.solution.display().to_string();
    let mut convention = None;
    // The objective a `mats solve --json` answer states, checked against the re-score.
    let mut stated: Option<i64> = None;
    let permutation = instance.family() != Family::Hwsw;
    if !permutation && args.zero_based {
        bail!(
            "--zero-based does not apply to a HW/SW solution: it is one 0/1 value per node \
             (1 = software), not a permutation"
        );
    }
    let one_based = permutation && !args.zero_based;
    let solution = match &instance {
        family::Instance::Qap(qap) if is_sln(&args.solution) => {
            // QAPLIB's own solution files: `n cost`, then the permutation in one of four
            // conventions, the one whose score is the stated cost (qap::solution).
            if args.zero_based {
                bail!(
                    "--zero-based does not apply to the QAPLIB file {origin}: its convention is \
                     the one that scores its stated cost"
                );
            }
            let raw = solvers::qap::read_solution(&args.solution)?;
            let sln = raw.resolve(qap, &args.solution)?;
            convention = Some(sln.convention);
            sln.permutation
        }
        family::Instance::Tsp(_) if is_tour(&args.solution) => {
            // TSPLIB's own tour files (`TOUR_SECTION`, 1-based, ending with -1), such as the
            // optimal tours that ship beside some instances.
            if args.zero_based {
                bail!("--zero-based does not apply to the TSPLIB tour {origin}: it is 1-based");
            }
            solvers::tsp::read_tour(&args.solution)?
        }
        _ => {
            let text = read_solution_text(&args.solution)?;
            if let Some(answer) = solve_answer(&text, instance.name())
                .with_context(|| format!("solution {origin}"))?
            {
                // `mats solve --json` writes permutations 1-based whatever the flags were.
                if args.zero_based {
                    bail!(
                        "--zero-based does not apply to the `mats solve --json` answer {origin}: \
                         its solution is 1-based"
                    );
                }
                stated = answer.objective;
                if permutation {
                    to_zero_based(&answer.solution).with_context(|| format!("solution {origin}"))?
                } else {
                    answer.solution
                }
            } else {
                let values = parse_values(&text).with_context(|| format!("solution {origin}"))?;
                if one_based {
                    to_zero_based(&values).with_context(|| format!("solution {origin}"))?
                } else {
                    values
                }
            }
        }
    };
    let objective = instance.objective(&solution).map_err(|e| {
        anyhow::anyhow!(
            "solution {origin} is not a solution of {} ({}): {}",
            instance.name(),
            src.file.display(),
            describe(&e, one_based)
        )
    })?;
    if let Some(stated) = stated.filter(|&s| s != objective) {
        bail!(
            "solution {origin} states objective {stated}, but it scores {objective} on {} ({}): \
             the answer does not belong to this instance file, or was edited",
            instance.name(),
            src.file.display()
        );
    }
    let best_known = super::best_known_of(&bks, &src.bks, &instance);
    super::instance::warn_below_optimum(instance.name(), objective, best_known);
    let report = Score {
        file: src.file.display().to_string(),
        family: instance.family().name(),
        instance: instance.name(),
        objective,
        best_known,
        gap_percent: best_known.and_then(|b| gap_percent(objective, b.value)),
        sln_convention: convention,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!("instance   {} ({})", report.instance, report.file);
    println!("objective  {}", report.objective);
    if let Some(c) = report.sln_convention {
        println!("sln        the stated cost, read {}", c.describe());
    }
    match (report.best_known, report.gap_percent) {
        (Some(b), Some(gap)) => println!(
            "gap        {} the best known {}{}",
            solvers::bks::above_or_below(gap),
            b.value,
            super::instance::optimal_note(b)
        ),
        (Some(b), None) => println!("best known {}", b.value),
        (None, _) => println!("best known unknown (add a table with --bks FILE)"),
    }
    Ok(())
}

/// A QAPLIB solution file.
fn is_sln(path: &Path) -> bool {
    has_extension(path, "sln")
}

/// A TSPLIB tour file (`.tour`, `.opt.tour`).
fn is_tour(path: &Path) -> bool {
    has_extension(path, "tour")
}

fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(extension))
}

fn read_solution_text(path: &Path) -> Result<String> {
    use solvers::error::{caps, read_kind, read_stream_kind};
    let text = if path == Path::new("-") {
        read_stream_kind(
            &mut std::io::stdin().lock(),
            Path::new("<standard input>"),
            "a solution",
            caps::SOLUTION,
        )
    } else {
        read_kind(path, "a solution file", caps::SOLUTION)
    };
    Ok(text?)
}

/// What `score` takes from a `mats solve --json` answer.
struct SolveAnswer {
    solution: Vec<usize>,
    objective: Option<i64>,
}

/// The `solution` array of a `mats solve --json` answer, as written (1-based permutations, a
/// HW/SW 0/1 vector).
pub(super) fn answer_solution(report: &serde_json::Value) -> Result<Vec<usize>> {
    let Some(values) = report.get("solution").and_then(|s| s.as_array()) else {
        bail!("is a JSON object without a `solution` array (a `mats solve --json` answer has one)");
    };
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_u64()
                .and_then(|v| usize::try_from(v).ok())
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "solution value {} is {v}, not a non-negative integer",
                        i + 1
                    )
                })
        })
        .collect()
}

/// A `mats solve --json` answer (text starting with `{`): its `solution` (as written: 1-based
/// permutations, a HW/SW 0/1 vector) and stated `objective`, after checking that it answers
/// the instance named `instance`; None for text that is not JSON.
fn solve_answer(text: &str, instance: &str) -> Result<Option<SolveAnswer>> {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if !body.starts_with('{') {
        return Ok(None);
    }
    let value: serde_json::Value =
        serde_json::from_str(body).context("starts with `{` but is not valid JSON")?;
    let solution = answer_solution(&value)?;
    if let Some(name) = value.get("instance").and_then(|n| n.as_str()) {
        if name != instance {
            bail!("answers instance {name}, not {instance}");
        }
    }
    if solution.is_empty() {
        bail!("holds no values");
    }
    Ok(Some(SolveAnswer {
        solution,
        objective: value.get("objective").and_then(|o| o.as_i64()),
    }))
}

/// The values of a solution: integers separated by whitespace or commas, optionally inside
/// one pair of brackets or after the label `solution` / `solution:`.
fn parse_values(text: &str) -> Result<Vec<usize>> {
    let mut tokens = text
        .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']')
        .filter(|t| !t.is_empty())
        .peekable();
    if matches!(tokens.peek(), Some(&"solution") | Some(&"solution:")) {
        tokens.next();
    }
    let values = tokens
        .enumerate()
        .map(|(i, t)| {
            t.parse::<usize>().map_err(|_| {
                anyhow::anyhow!("value {} is '{t}', not a non-negative integer", i + 1)
            })
        })
        .collect::<Result<Vec<_>>>()?;
    if values.is_empty() {
        bail!("holds no values");
    }
    Ok(values)
}

fn to_zero_based(values: &[usize]) -> Result<Vec<usize>> {
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            v.checked_sub(1).ok_or_else(|| {
                anyhow::anyhow!(
                    "value {} is 0, but permutations are read 1-based (pass --zero-based for a \
                     0-based one)",
                    i + 1
                )
            })
        })
        .collect()
}

/// The check's complaint in the numbering the user wrote: positions count from 1, values as
/// given.
fn describe(error: &SolutionError, one_based: bool) -> String {
    match error {
        SolutionError::Permutation(e) => e.describe(usize::from(one_based)),
        SolutionError::Invalid(why) => why.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solvers::permutation::PermutationError;

    #[test]
    fn values_come_from_plain_lists_json_arrays_and_solve_lines() {
        assert_eq!(parse_values("3 1 2\n").unwrap(), vec![3, 1, 2]);
        assert_eq!(parse_values("[3,1, 2]").unwrap(), vec![3, 1, 2]);
        assert_eq!(parse_values("solution   3 1 2").unwrap(), vec![3, 1, 2]);
        assert_eq!(parse_values("solution: 3\n1\n2").unwrap(), vec![3, 1, 2]);
    }

    #[test]
    fn bad_values_are_named_by_position() {
        let e = parse_values("3 x 2").unwrap_err().to_string();
        assert!(e.contains("value 2 is 'x'"), "{e}");
        assert!(parse_values("-1 2").is_err());
        assert!(parse_values(" \n")
            .unwrap_err()
            .to_string()
            .contains("no values"));
        let e = to_zero_based(&[2, 0, 1]).unwrap_err().to_string();
        assert!(
            e.contains("value 2 is 0") && e.contains("--zero-based"),
            "{e}"
        );
    }

    #[test]
    fn permutation_errors_speak_one_based() {
        let dup = SolutionError::Permutation(PermutationError::Duplicate {
            value: 1,
            first: 0,
            second: 2,
        });
        assert_eq!(
            describe(&dup, true),
            "2 appears twice (at positions 1 and 3)"
        );
        assert_eq!(
            describe(&dup, false),
            "1 appears twice (at positions 1 and 3)"
        );
        let range = SolutionError::Permutation(PermutationError::OutOfRange {
            position: 1,
            value: 3,
            n: 3,
        });
        assert_eq!(
            describe(&range, true),
            "the value at position 2 is 4, outside 1..=3"
        );
    }
}
