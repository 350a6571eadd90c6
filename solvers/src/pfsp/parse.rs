//! Reading and writing instance files.
//!
//! Three formats are accepted; [`parse`] tells them apart by content, not by file name:
//!
//! - **Taillard** (the first token is a word): one or more blocks, each
//!   ```text
//!   number of jobs, number of machines, initial seed, upper bound and lower bound :
//!             20           5   873654221        1278        1232
//!   processing times :
//!    54 83 15 ...            <- m lines, one per MACHINE, n values each
//!   ```
//!   The seed is kept as `time_seed`; the bounds are 1993 values and are ignored (use a
//!   best-known table instead).
//! - **Plain**: `n m` (jobs, machines), then n rows of m processing times, one row per JOB.
//! - **VRF** (Vallada, Ruiz & Framinan 2015; also OR-Library's flowshop files): `n m`, then
//!   per job m pairs `machine_index time` with 0-based machine indices, each machine once.
//!
//! Plain and VRF are told apart by the number of values after `n m`: n*m for plain, 2*n*m
//! for VRF. Line breaks carry no meaning in any format (the VRF files have CRLF endings).
//!
//! Every error is one [`InputError`] naming the file and, where one exists, the line. Sizes
//! are checked against the number of values actually present before anything of size n*m
//! is allocated, so a huge declared size with little data fails fast.

use std::fmt::Write as _;
use std::path::Path;

use super::instance::Instance;
use super::neh::neh;
use crate::error::{read_to_string, InputError};
use crate::tokens::Tokens;

/// Largest number of jobs or machines a file may declare; far above any benchmark, low
/// enough that n * m cannot overflow.
const MAX_DIMENSION: usize = 100_000_000;

/// The 12 files of Taillard's benchmark in the order that numbers the instances:
/// block k of file f (0-based) is `ta{10 f + k}`.
pub const TAILLARD_FILES: [&str; 12] = [
    "tai20_5",
    "tai20_10",
    "tai20_20",
    "tai50_5",
    "tai50_10",
    "tai50_20",
    "tai100_5",
    "tai100_10",
    "tai100_20",
    "tai200_10",
    "tai200_20",
    "tai500_20",
];

/// Taillard's published instances by what their headers say: (jobs, machines, the initial
/// seed of each of the file's ten blocks), in the order of [`TAILLARD_FILES`]. A block is
/// named `ta0NN` (and so finds its best-known value) only when its header matches one of
/// these: a file generated with another seed under the same file name is not his.
#[rustfmt::skip]
const TAILLARD_SEEDS: [(usize, usize, [i64; 10]); 12] = [
    (20, 5, [873654221, 379008056, 1866992158, 216771124, 495070989, 402959317, 1369363414, 2021925980, 573109518, 88325120]),
    (20, 10, [587595453, 1401007982, 873136276, 268827376, 1634173168, 691823909, 73807235, 1273398721, 2065119309, 1672900551]),
    (20, 20, [479340445, 268827376, 1958948863, 918272953, 555010963, 2010851491, 1519833303, 1748670931, 1923497586, 1829909967]),
    (50, 5, [1328042058, 200382020, 496319842, 1203030903, 1730708564, 450926852, 1303135678, 1273398721, 587288402, 248421594]),
    (50, 10, [1958948863, 575633267, 655816003, 1977864101, 93805469, 1803345551, 49612559, 1899802599, 2013025619, 578962478]),
    (50, 20, [1539989115, 691823909, 655816003, 1315102446, 1949668355, 1923497586, 1805594913, 1861070898, 715643788, 464843328]),
    (100, 5, [896678084, 1179439976, 1122278347, 416756875, 267829958, 1835213917, 1328833962, 1418570761, 161033112, 304212574]),
    (100, 10, [1539989115, 655816003, 960914243, 1915696806, 2013025619, 1168140026, 1923497586, 167698528, 1528387973, 993794175]),
    (100, 20, [450926852, 1462772409, 1021685265, 83696007, 508154254, 1861070898, 26482542, 444956424, 2115448041, 118254244]),
    (200, 10, [471503978, 1215892992, 135346136, 1602504050, 160037322, 551454346, 519485142, 383947510, 1968171878, 540872513]),
    (200, 20, [2013025619, 475051709, 914834335, 810642687, 1019331795, 2056065863, 1342855162, 1325809384, 1988803007, 765656702]),
    (500, 20, [1368624604, 450181436, 1927888393, 1759567256, 606425239, 19268348, 1298201670, 2041736264, 379756761, 28837162]),
];

/// `ta0NN` for a block whose header is that of Taillard's instance NN, whatever the file
/// is called.
fn taillard_name(jobs: usize, machines: usize, seed: i64) -> Option<String> {
    TAILLARD_SEEDS
        .iter()
        .enumerate()
        .find_map(|(f, (j, m, seeds))| {
            let k = seeds.iter().position(|&s| s == seed)?;
            (*j == jobs && *m == machines).then(|| format!("ta{:03}", 10 * f + k + 1))
        })
}

/// The name an instance read from a file takes when its file has no better one: the file's
/// stem, unless the stem names a published Taillard instance (`ta001`..`ta120`) that this is
/// not (another seed, size or times): a file must not borrow a published instance's name,
/// and with it that instance's best-known value.
fn stem_name(stem: &str, inst: &Instance) -> String {
    let lower = stem.to_ascii_lowercase();
    let published = lower
        .strip_prefix("ta")
        .filter(|k| k.len() == 3)
        .and_then(|k| k.parse::<usize>().ok())
        .filter(|k| (1..=120).contains(k))
        .map(|k| {
            let (jobs, machines, seeds) = TAILLARD_SEEDS[(k - 1) / 10];
            (jobs, machines, seeds[(k - 1) % 10])
        });
    match published {
        Some((jobs, machines, seed))
            if jobs != inst.jobs
                || machines != inst.machines
                || super::generate(jobs, machines, seed).times_machine_major()
                    != inst.times_machine_major() =>
        {
            format!("{stem}-custom")
        }
        _ => stem.to_string(),
    }
}

/// Reads an instance file; `index` (1-based) picks a block of a multi-instance file.
pub fn read(path: &Path, index: Option<usize>) -> Result<Instance, InputError> {
    let text = read_to_string(path)?;
    parse(&text, path, index)
}

/// Parses an instance in any of the accepted formats (see the module documentation).
///
/// `index` is 1-based within the file. `None` takes the only instance, and is an error for
/// a file that holds several.
pub fn parse(text: &str, path: &Path, index: Option<usize>) -> Result<Instance, InputError> {
    let first_is_number = text
        .split_whitespace()
        .next()
        .is_some_and(|t| t.parse::<i64>().is_ok());
    let mut instances = if first_is_number || text.trim().is_empty() {
        vec![parse_plain(text, path)?]
    } else {
        parse_taillard(text, path)?
    };
    let count = instances.len();
    let plural = if count == 1 { "instance" } else { "instances" };
    let chosen = match index {
        None if count == 1 => 0,
        None => {
            return Err(InputError::Several {
                path: path.to_path_buf(),
                count,
            })
        }
        Some(k) if (1..=count).contains(&k) => k - 1,
        Some(k) => {
            return Err(InputError::invalid(
                path,
                format!("file holds {count} {plural}; index {k} is outside 1..{count}"),
            ))
        }
    };
    Ok(instances.swap_remove(chosen))
}

/// Parses every block of a file in Taillard's format.
pub fn parse_taillard(text: &str, path: &Path) -> Result<Vec<Instance>, InputError> {
    let mut tokens = Tokens::new(text, path);
    let stem = file_stem(path);
    let mut blocks = Vec::new();
    while tokens.remaining() > 0 {
        let block = blocks.len() + 1;
        let header_line = tokens.line();
        let words = skip_words(&mut tokens);
        if words.is_empty()
            || !words
                .iter()
                .any(|w| w.to_ascii_lowercase().starts_with("job"))
        {
            let found = if words.is_empty() {
                tokens.next_str("")?.1.to_string()
            } else {
                words.join(" ")
            };
            let hint = if block > 1 && words.is_empty() {
                format!(
                    " (does block {} hold more processing times than its header declares?)",
                    block - 1
                )
            } else {
                String::new()
            };
            return Err(InputError::syntax(
                path,
                header_line,
                format!(
                    "expected the header of block {block} (\"number of jobs, number of \
                     machines, initial seed, upper bound and lower bound :\"), found \
                     {found:?}{hint}"
                ),
            ));
        }
        let (jobs, machines) = read_dimensions(&mut tokens)?;
        let seed = tokens.next_i64("the initial seed")?;
        tokens.next_i64("the upper bound")?;
        tokens.next_i64("the lower bound")?;
        let times_line = tokens.line();
        let words = skip_words(&mut tokens);
        // `processing times:` (no space before the colon) is the same header.
        if !words
            .iter()
            .any(|w| w.trim_end_matches(':').eq_ignore_ascii_case("times"))
        {
            return Err(InputError::syntax(
                path,
                times_line,
                format!("expected \"processing times :\" in block {block}"),
            ));
        }
        ensure_values(&mut tokens, jobs, machines)?;
        let mut times = Vec::with_capacity(jobs * machines);
        for machine in 0..machines {
            for job in 0..jobs {
                times.push(read_time(&mut tokens, job, machine)?);
            }
        }
        let mut inst = Instance::new(String::new(), jobs, machines, times)
            .map_err(|message| InputError::syntax(path, header_line, message))?;
        inst.time_seed = Some(seed);
        blocks.push(inst);
    }
    if blocks.is_empty() {
        return Err(InputError::syntax(path, 1, "the file holds no instance"));
    }
    let count = blocks.len();
    for (k, inst) in blocks.iter_mut().enumerate() {
        // A header's seed names a published instance only if the times are that instance's
        // (a block with edited times must not take its name and best-known value).
        let published = inst.time_seed.and_then(|seed| {
            taillard_name(inst.jobs, inst.machines, seed).filter(|_| {
                super::generate(inst.jobs, inst.machines, seed).times_machine_major()
                    == inst.times_machine_major()
            })
        });
        inst.name = match published {
            Some(name) => name,
            None if count == 1 => stem_name(&stem, inst),
            None => format!("{stem}-{}", k + 1),
        };
    }
    Ok(blocks)
}

/// The plain (job-major) and VRF formats, told apart by their value counts.
fn parse_plain(text: &str, path: &Path) -> Result<Instance, InputError> {
    let mut tokens = Tokens::new(text, path);
    let (jobs, machines) = read_dimensions(&mut tokens)?;
    let cells = jobs * machines;
    let present = tokens.remaining();
    let mut times = vec![];
    if present == 2 * cells {
        times.resize(cells, -1);
        for job in 0..jobs {
            for _ in 0..machines {
                let line = tokens.line();
                let machine = tokens.next_i64("a machine index")?;
                if machine < 0 || machine as u64 >= machines as u64 {
                    return Err(InputError::syntax(
                        path,
                        line,
                        format!(
                            "machine index {machine} of job {} is outside 0..{}",
                            job + 1,
                            machines - 1
                        ),
                    ));
                }
                let machine = machine as usize;
                let time = read_time(&mut tokens, job, machine)?;
                let slot = &mut times[machine * jobs + job];
                if *slot >= 0 {
                    return Err(InputError::syntax(
                        path,
                        line,
                        format!("machine index {machine} appears twice for job {}", job + 1),
                    ));
                }
                *slot = time;
            }
        }
    } else {
        ensure_values(&mut tokens, jobs, machines)?;
        times.resize(cells, 0);
        for job in 0..jobs {
            for machine in 0..machines {
                times[machine * jobs + job] = read_time(&mut tokens, job, machine)?;
            }
        }
        tokens.expect_end(&format!(
            "the {jobs} x {machines} processing times the header declares (plain format: \
             {jobs} rows of {machines} times; VRF format: {jobs} rows of {machines} \
             `machine time` pairs)"
        ))?;
    }
    let mut inst = Instance::new(String::new(), jobs, machines, times)
        .map_err(|message| InputError::invalid(path, message))?;
    inst.name = stem_name(&file_stem(path), &inst);
    Ok(inst)
}

/// `n m`, each at least 1.
fn read_dimensions(tokens: &mut Tokens) -> Result<(usize, usize), InputError> {
    let jobs = tokens.next_usize("the number of jobs", 1..=MAX_DIMENSION)?;
    let machines = tokens.next_usize("the number of machines", 1..=MAX_DIMENSION)?;
    Ok((jobs, machines))
}

fn read_time(tokens: &mut Tokens, job: usize, machine: usize) -> Result<i64, InputError> {
    let line = tokens.line();
    let time = tokens.next_i64("a processing time")?;
    if time < 0 {
        return Err(InputError::syntax(
            tokens.path(),
            line,
            format!(
                "processing time of job {} on machine {} is negative ({time})",
                job + 1,
                machine + 1
            ),
        ));
    }
    Ok(time)
}

/// Fails (at the last line, where the data stops) when fewer than `jobs * machines` values
/// remain. `Tokens::next_i64_vec` checks the count before it allocates anything.
fn ensure_values(tokens: &mut Tokens, jobs: usize, machines: usize) -> Result<(), InputError> {
    let cells = jobs * machines;
    if cells > tokens.remaining() {
        tokens.next_i64_vec(
            cells,
            &format!("the {jobs} jobs x {machines} machines the header declares"),
        )?;
    }
    Ok(())
}

/// Consumes the non-numeric tokens up to the next integer (header words).
fn skip_words<'a>(tokens: &mut Tokens<'a>) -> Vec<&'a str> {
    let mut words = Vec::new();
    while let Some(word) = tokens.peek() {
        if word.parse::<i64>().is_ok() {
            break;
        }
        words.push(word);
        let _ = tokens.next_str("a word");
    }
    words
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "pfsp".to_string())
}

/// Cheap test for "this text is a flowshop instance", used to pick the problem family of a
/// file: a Taillard block header, or `n m` followed by exactly n*m (plain) or 2*n*m (VRF)
/// integers.
///
/// QAPLIB files (`n`, then 2 n^2 integers) never pass: 1 + 2n^2 tokens would need
/// 2 + n*a = 1 + 2n^2 (n divides 1, so n = 1) or 2 + 2na = 1 + 2n^2 (even = odd).
pub fn looks_like_pfsp(text: &str) -> bool {
    let first_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if first_line.to_ascii_lowercase().contains("number of jobs") {
        return true;
    }
    let mut values = text.split_whitespace();
    let mut dimension = || values.next().and_then(|t| t.parse::<u64>().ok());
    let (Some(jobs), Some(machines)) = (dimension(), dimension()) else {
        return false;
    };
    if jobs == 0 || machines == 0 {
        return false;
    }
    let Some(cells) = jobs.checked_mul(machines) else {
        return false;
    };
    let mut count = 0u64;
    for token in values {
        // An integer too large for i64 is still one: the parser then names it.
        let digits = token.strip_prefix(['-', '+']).unwrap_or(token);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        count += 1;
    }
    count == cells || Some(count) == cells.checked_mul(2)
}

/// The instance in Taillard's format (one block), which [`parse`] reads back.
///
/// The header's seed is `time_seed` (0 when unknown); its bounds are recomputed: the upper
/// bound is the NEH makespan, the lower bound Taillard's machine-based bound.
pub fn to_taillard_text(inst: &Instance) -> String {
    let upper = inst.makespan(&neh(inst));
    let lower = lower_bound(inst);
    let mut text = String::new();
    text.push_str(
        "number of jobs, number of machines, initial seed, upper bound and lower bound :\n",
    );
    for value in [
        inst.jobs as i64,
        inst.machines as i64,
        inst.time_seed.unwrap_or(0),
        upper,
        lower,
    ] {
        let _ = write!(text, " {value:>11}");
    }
    text.push_str("\nprocessing times :\n");
    for machine in 0..inst.machines {
        for job in 0..inst.jobs {
            let _ = write!(text, " {:>2}", inst.time(machine, job));
        }
        text.push('\n');
    }
    text
}

/// Taillard's lower bound: the larger of the longest job and, for each machine, its load
/// plus the shortest head before it and the shortest tail after it.
pub fn lower_bound(inst: &Instance) -> i64 {
    let (n, m) = (inst.jobs, inst.machines);
    let longest_job = (0..n).map(|j| inst.job_total(j)).max().unwrap_or(0);
    let mut best = longest_job;
    for k in 0..m {
        let load: i64 = (0..n).map(|j| inst.time(k, j)).sum();
        let head = (0..n)
            .map(|j| (0..k).map(|h| inst.time(h, j)).sum::<i64>())
            .min()
            .unwrap_or(0);
        let tail = (0..n)
            .map(|j| (k + 1..m).map(|h| inst.time(h, j)).sum::<i64>())
            .min()
            .unwrap_or(0);
        best = best.max(head + load + tail);
    }
    best
}
