//! Kernel Tuner cache files (the format of the FAIR Benchmark Hub's brute-forced spaces) as a
//! table: `tune_params` gives the parameters and their domains, the keys of `cache` the valid
//! configurations (so the constraints are implied by which keys exist), and each entry's
//! `time` in milliseconds the objective, or an error string for a configuration that failed
//! to compile or run. Read as `.json` or gzip-compressed `.json.gz`.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use anyhow::{bail, Context, Result};
use results::{Point, Value};
use serde_json::Value as Json;

use super::table_space::TableSpace;
use super::{Objectives, ParamKind, TableEvaluator};

/// A brute-forced space read from a file.
pub struct CacheTable {
    /// The file name without `.json`/`.json.gz`.
    pub name: String,
    pub kernel: String,
    pub device: String,
    pub space: TableSpace,
    pub table: TableEvaluator,
    /// Listed configurations without a time (failed to compile or run).
    pub failed: usize,
}

/// The file's name without the cache-file extensions.
pub fn cache_name(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default();
    let file = file.strip_suffix(".gz").unwrap_or(&file);
    file.strip_suffix(".json").unwrap_or(file).to_string()
}

/// True for a file name that looks like a cache file.
pub fn is_cache_file(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.ends_with(".json") || name.ends_with(".json.gz")
}

/// The largest cache mats reads, compressed or not: the published brute-forced spaces are
/// 5-12 MB of JSON; a gzip bomb must stop here instead of filling memory.
pub const MAX_CACHE_BYTES: u64 = 256 << 20;

pub fn load(path: &Path) -> Result<CacheTable> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_CACHE_BYTES + 1).read_to_end(&mut bytes))
        .with_context(|| format!("cannot read cache file {}", path.display()))?;
    let too_large = || {
        anyhow::anyhow!(
            "{}: cache larger than {} MiB (uncompressed), the limit for a tuning cache",
            path.display(),
            MAX_CACHE_BYTES >> 20
        )
    };
    if bytes.len() as u64 > MAX_CACHE_BYTES {
        return Err(too_large());
    }
    let text = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut unpacked = Vec::new();
        flate2::read::GzDecoder::new(bytes.as_slice())
            .take(MAX_CACHE_BYTES + 1)
            .read_to_end(&mut unpacked)
            .with_context(|| format!("{}: not a valid gzip file", path.display()))?;
        if unpacked.len() as u64 > MAX_CACHE_BYTES {
            return Err(too_large());
        }
        String::from_utf8(unpacked)
            .with_context(|| format!("{}: not UTF-8 text", path.display()))?
    } else {
        String::from_utf8(bytes).with_context(|| format!("{}: not UTF-8 text", path.display()))?
    };
    parse(&text, &cache_name(path)).with_context(|| format!("cache file {}", path.display()))
}

fn value_of(v: &Json) -> Option<Value> {
    match v {
        Json::Number(n) => match n.as_i64() {
            Some(i) => Some(Value::Int(i)),
            None => {
                let f = n.as_f64()?;
                if f.fract() == 0.0 && f.abs() < 9.0e15 {
                    Some(Value::Int(f as i64))
                } else {
                    Some(Value::Text(n.to_string()))
                }
            }
        },
        Json::String(s) => Some(Value::Text(s.clone())),
        Json::Bool(b) => Some(Value::Text(b.to_string())),
        _ => None,
    }
}

/// Kernel Tuner passes every parameter as a `#define`; the block sizes also set the launch.
fn kind_of(name: &str) -> ParamKind {
    if name.starts_with("block_size_") {
        ParamKind::Launch
    } else {
        ParamKind::Define
    }
}

/// Parses the JSON text of a cache file (`name` labels the table).
pub fn parse(text: &str, name: &str) -> Result<CacheTable> {
    let doc: Json = serde_json::from_str(text).context("not valid JSON")?;
    let keys: Vec<String> = doc
        .get("tune_params_keys")
        .and_then(Json::as_array)
        .context("no `tune_params_keys` list: not a Kernel Tuner cache file")?
        .iter()
        .map(|k| {
            k.as_str()
                .map(str::to_string)
                .context("a `tune_params_keys` entry is not a string")
        })
        .collect::<Result<_>>()?;
    let tune_params = doc
        .get("tune_params")
        .and_then(Json::as_object)
        .context("no `tune_params` object")?;
    let mut params = Vec::with_capacity(keys.len());
    for k in &keys {
        let domain: Vec<Value> = tune_params
            .get(k)
            .and_then(Json::as_array)
            .with_context(|| format!("`tune_params` has no list for `{k}`"))?
            .iter()
            .map(|v| {
                value_of(v)
                    .with_context(|| format!("`tune_params.{k}` holds {v}, not a number or text"))
            })
            .collect::<Result<_>>()?;
        params.push((k.clone(), kind_of(k), domain));
    }
    if let Some(objective) = doc.get("objective").and_then(Json::as_str) {
        if objective != "time" {
            bail!("the objective is {objective:?}; only \"time\" caches are supported");
        }
    }
    let cache = doc
        .get("cache")
        .and_then(Json::as_object)
        .context("no `cache` object")?;
    let mut points = Vec::with_capacity(cache.len());
    let mut table: HashMap<Point, Option<Objectives>> = HashMap::with_capacity(cache.len());
    let mut failed = 0;
    for (key, entry) in cache {
        let mut p = Point::new();
        for (k, (_, _, domain)) in keys.iter().zip(&params) {
            let v = entry
                .get(k)
                .and_then(value_of)
                .with_context(|| format!("entry {key:?} has no value for `{k}`"))?;
            if !domain.contains(&v) {
                bail!("entry {key:?}: `{k}` = {v} is not among `tune_params.{k}`");
            }
            p.set(k.clone(), v);
        }
        let time = entry
            .get("time")
            .and_then(Json::as_f64)
            .filter(|t| t.is_finite() && *t > 0.0);
        if time.is_none() {
            failed += 1;
        }
        let o = time.map(|ms| Objectives {
            time_s: ms / 1e3,
            ..Objectives::default()
        });
        points.push(p.clone());
        table.insert(p, o);
    }
    if points.is_empty() {
        bail!("the cache lists no configuration");
    }
    let text_of = |k: &str| doc.get(k).and_then(Json::as_str).unwrap_or("?").to_string();
    Ok(CacheTable {
        name: name.to_string(),
        kernel: text_of("kernel_name"),
        device: text_of("device_name"),
        space: TableSpace::new(params, points),
        table: TableEvaluator::new(table),
        failed,
    })
}
