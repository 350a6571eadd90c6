//! Search spaces: named parameters with finite domains, conditions (`when`) and constraints,
//! loaded from TOML (`spaces/README.md` documents the format).
//!
//! A parameter may be declared more than once with different `when` conditions (for example
//! `solutions` as start solutions for the thread-per-solution variants and as blocks for
//! `rots-block`): the first declaration whose condition holds gives the domain, and a point
//! where none holds does not carry the parameter at all. Constraints that read a parameter a
//! point does not carry hold vacuously for that point.

mod expr;
mod spec;
mod walk;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use anyhow::{bail, Result};
use evalexpr::DefaultNumericTypes;
use rand::Rng as _;
use results::{Point, Value};

pub use spec::{DomainSpec, SpaceOverrides};

use crate::{ParamKind, SearchSpace};
use expr::{to_evalexpr, Env, Expr, ExprError};
use spec::SpaceFile;
use walk::Walk;

type EValue = evalexpr::Value<DefaultNumericTypes>;

/// Expressions are type-checked at load on at most this many combinations of the values of
/// the parameters they read.
const TYPE_CHECK_COMBINATIONS: usize = 4096;

/// One declaration of a parameter.
#[derive(Debug, Clone)]
pub(crate) struct Decl {
    /// Index into `Space::names`.
    name: usize,
    kind: ParamKind,
    domain: Vec<Value>,
    edomain: Vec<EValue>,
    when: Option<Expr>,
    flag: Option<String>,
    define: Option<String>,
    omit: Vec<String>,
    doc: Option<String>,
}

/// A loaded, checked search space.
#[derive(Debug, Clone)]
pub struct Space {
    origin: String,
    text: String,
    file: SpaceFile,
    overrides: SpaceOverrides,
    decls: Vec<Decl>,
    /// Distinct parameter names, in order of first declaration.
    names: Vec<String>,
    index: HashMap<String, usize>,
    constants: BTreeMap<String, Value>,
    constants_eval: HashMap<String, EValue>,
    constraints: Vec<Expr>,
    /// False when a constraint that reads only constants fails.
    constants_ok: bool,
    count: u64,
}

/// How a point reaches the code and the solver.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Realisation {
    /// NVRTC/ptxas options, in the space's parameter order.
    pub flags: Vec<String>,
    /// `#define NAME VALUE` pairs, in the space's parameter order.
    pub defines: Vec<(String, String)>,
    /// `launch` parameters by name (solutions, threads, child_threads, ...).
    pub launch: BTreeMap<String, Value>,
    /// `runtime` parameters by name (iterations, tenure, starts, threads on the CPU, ...).
    pub runtime: BTreeMap<String, Value>,
    /// `variant` parameters by name (usually one: `variant` or `algorithm`).
    pub variant: BTreeMap<String, Value>,
    /// `class` parameters by name.
    pub class: BTreeMap<String, Value>,
}

/// One declaration as `mats space show` prints it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ParamInfo {
    pub name: String,
    pub kind: ParamKind,
    pub domain: Vec<Value>,
    /// The `when` expression, if any.
    pub when: Option<String>,
    /// The flag template or define name.
    pub emits: Option<String>,
    pub doc: Option<String>,
}

impl Space {
    /// Reads and checks a space file.
    pub fn load(path: &Path) -> Result<Space> {
        let text = crate::errors::read_text_capped(path, 16 << 20, "space file")?;
        Space::from_toml_str(&text, &path.display().to_string())
    }

    /// Parses and checks a space; `origin` (usually the file name) starts every error message.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Space> {
        let file: SpaceFile = toml::from_str(text)
            .map_err(|e| anyhow::anyhow!(crate::errors::toml_line(origin, text, &e)))?;
        Space::build(text, origin, file, SpaceOverrides::default())
    }

    /// The space with a campaign's overrides applied (see [`SpaceOverrides`]): constants and
    /// domains replaced, constraints added. Every name must exist in the space.
    pub fn with_overrides(&self, overrides: &SpaceOverrides) -> Result<Space> {
        let mut merged = self.overrides.clone();
        merged.constants.extend(overrides.constants.clone());
        merged.params.extend(overrides.params.clone());
        merged
            .constraints
            .extend(overrides.constraints.iter().cloned());
        Space::build(&self.text, &self.origin, self.file.clone(), merged)
    }

    fn build(
        text: &str,
        origin: &str,
        file: SpaceFile,
        overrides: SpaceOverrides,
    ) -> Result<Space> {
        let at = |offset: usize| format!("{origin}:{}", line_of(text, offset));
        let constants = merged_constants(&file, &overrides, origin, &at)?;
        let constants_eval: HashMap<String, EValue> = constants
            .iter()
            .map(|(k, v)| (k.clone(), to_evalexpr(v)))
            .collect();
        let (names, index) = parameter_names(&file, &overrides, &constants, origin, &at)?;

        let mut decls: Vec<Decl> = Vec::new();
        let mut domain_values = 0usize;
        for d in 0..file.params.len() {
            let scope = DeclScope {
                file: &file,
                overrides: &overrides,
                names: &names,
                index: &index,
                constants_eval: &constants_eval,
            };
            let decl = scope.declaration(d, &decls, &mut domain_values, &at)?;
            decls.push(decl);
        }

        let mut constraints = Vec::new();
        let sources = file
            .constraints
            .iter()
            .map(|c| (c.get_ref().clone(), at(c.span().start)))
            .chain(
                overrides
                    .constraints
                    .iter()
                    .map(|c| (c.clone(), format!("{origin} (campaign override)"))),
            );
        let mut space_where = Vec::new();
        for (text, where_) in sources {
            let expr = parse_expr(&text, &index, &constants_eval)
                .map_err(|e| anyhow::anyhow!("{where_}: constraint `{}`: {e}", shorten(&text)))?;
            constraints.push(expr);
            space_where.push(where_);
        }

        let mut space = Space {
            origin: origin.to_string(),
            text: text.to_string(),
            file,
            overrides,
            decls,
            names,
            index,
            constants,
            constants_eval,
            constraints,
            constants_ok: true,
            count: 0,
        };
        space.type_check_all(&space_where, &at)?;
        space.count_valid()?;
        Ok(space)
    }

    /// Every `when` and constraint must give a boolean on every combination it reads.
    fn type_check_all(&self, space_where: &[String], at: &dyn Fn(usize) -> String) -> Result<()> {
        for (d, decl) in self.decls.iter().enumerate() {
            if let Some(w) = &decl.when {
                self.type_check(w).map_err(|e| {
                    anyhow::anyhow!(
                        "{}: `when` of parameter `{}` {e}",
                        at(self.file.params[d].name.span().start),
                        self.names[decl.name]
                    )
                })?;
            }
        }
        for (c, where_) in self.constraints.iter().zip(space_where) {
            self.type_check(c)
                .map_err(|e| anyhow::anyhow!("{where_}: constraint `{}` {e}", shorten(&c.text)))?;
        }
        Ok(())
    }

    /// Counts the valid points (and whether the constant-only constraints hold); a space with
    /// none is an error that lists the constraints.
    fn count_valid(&mut self) -> Result<()> {
        let origin = &self.origin;
        let empty = vec![None; self.names.len()];
        let env = Env {
            names: &self.index,
            values: &empty,
            constants: &self.constants_eval,
        };
        self.constants_ok = self
            .constraints
            .iter()
            .filter(|c| c.params.is_empty())
            .all(|c| c.eval(&env).unwrap_or(false));

        self.count = self.count_points(true).ok_or_else(|| {
            anyhow::anyhow!(
                "{origin}: counting the valid points would try more than {MAX_WALK_WORK} \
                 combinations of the parameters that constraints and `when` conditions tie \
                 together; narrow those domains or split the constraints"
            )
        })?;
        if self.count == 0 && !self.constants_ok {
            bail!(
                "{origin}: the space has no valid point: a constraint that names no parameter \
                 (constants only, or none) is false, so it rejects every point"
            );
        }
        if self.count == 0 {
            let list: Vec<String> = self
                .constraints
                .iter()
                .map(|c| format!("`{}`", shorten(&c.text)))
                .collect();
            bail!(
                "{origin}: the space has no valid point: the constraints {} reject all {} combinations of the domains",
                if list.is_empty() { "(none)".to_string() } else { list.join(", ") },
                self.count_points(false).map_or("the".to_string(), |n| n.to_string())
            );
        }
        Ok(())
    }

    /// Evaluates `expr` on combinations of the domains of the parameters it reads (ignoring
    /// `when`): every one must give a boolean.
    fn type_check(&self, expr: &Expr) -> std::result::Result<(), String> {
        let domains: Vec<Vec<EValue>> = expr
            .params
            .iter()
            .map(|&n| {
                // Deduplicated through a set: domains reach 10^5 values, and a linear
                // `contains` per value made that quadratic.
                let mut seen = std::collections::HashSet::new();
                let mut all: Vec<EValue> = Vec::new();
                for d in self.decls.iter().filter(|d| d.name == n) {
                    for (v, ev) in d.domain.iter().zip(&d.edomain) {
                        if seen.insert(v) {
                            all.push(ev.clone());
                        }
                    }
                }
                all
            })
            .collect();
        let mut values: Vec<Option<EValue>> = vec![None; self.names.len()];
        let mut odometer = vec![0usize; domains.len()];
        for _ in 0..TYPE_CHECK_COMBINATIONS {
            for (k, &n) in expr.params.iter().enumerate() {
                values[n] = Some(domains[k][odometer[k]].clone());
            }
            let env = Env {
                names: &self.index,
                values: &values,
                constants: &self.constants_eval,
            };
            if let Err(e) = expr.eval(&env) {
                let at: Vec<String> = expr
                    .params
                    .iter()
                    .map(|&n| format!("{} = {}", self.names[n], show_evalue(values[n].as_ref())))
                    .collect();
                return Err(if at.is_empty() {
                    e
                } else {
                    format!("{e} (at {})", at.join(", "))
                });
            }
            // Next combination; stop after the last.
            let mut k = 0;
            loop {
                if k == odometer.len() {
                    return Ok(());
                }
                odometer[k] += 1;
                if odometer[k] < domains[k].len() {
                    break;
                }
                odometer[k] = 0;
                k += 1;
            }
        }
        Ok(())
    }

    /// Declarations independent of everything else: one declaration, no `when`, read by no
    /// expression. Their domains multiply the count of the rest.
    fn free_decls(&self) -> Vec<bool> {
        let mut read: HashSet<usize> = HashSet::new();
        for e in self
            .constraints
            .iter()
            .chain(self.decls.iter().filter_map(|d| d.when.as_ref()))
        {
            read.extend(e.params.iter().copied());
        }
        self.decls
            .iter()
            .map(|d| {
                d.when.is_none()
                    && !read.contains(&d.name)
                    && self.decls.iter().filter(|e| e.name == d.name).count() == 1
            })
            .collect()
    }

    /// Counts by walking the declarations that `when` or constraints tie together, or `None`
    /// when that walk would try more than [`MAX_WALK_WORK`] options.
    fn count_points(&self, constrained: bool) -> Option<u64> {
        let free = self.free_decls();
        let factor = self
            .decls
            .iter()
            .zip(&free)
            .filter(|(_, f)| **f)
            .fold(1u64, |acc, (d, _)| {
                acc.saturating_mul(d.domain.len() as u64)
            });
        let levels: Vec<usize> = (0..self.decls.len()).filter(|&d| !free[d]).collect();
        Walk::new(self, levels, constrained)
            .count_within(MAX_WALK_WORK)
            .map(|n| n.saturating_mul(factor))
    }

    /// The number of valid points.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Points with every `when` applied but no constraint: what the constraints cut from
    /// (`None` when too many to walk).
    pub fn unconstrained_count(&self) -> Option<u64> {
        self.count_points(false)
    }

    /// The product of every parameter's domain size, ignoring `when` and constraints.
    pub fn raw_product(&self) -> u64 {
        (0..self.names.len()).fold(1u64, |acc, n| {
            let mut all: std::collections::HashSet<&Value> = std::collections::HashSet::new();
            for d in self.decls.iter().filter(|d| d.name == n) {
                all.extend(&d.domain);
            }
            acc.saturating_mul(all.len() as u64)
        })
    }

    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The space file's text as loaded (before overrides).
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn description(&self) -> Option<&str> {
        self.file.description.as_deref()
    }

    pub fn family(&self) -> Option<&str> {
        self.file.family.as_deref()
    }

    /// Every declaration, in file order.
    pub fn param_info(&self) -> Vec<ParamInfo> {
        self.decls
            .iter()
            .map(|d| ParamInfo {
                name: self.names[d.name].clone(),
                kind: d.kind,
                domain: d.domain.clone(),
                when: d.when.as_ref().map(|w| w.text.clone()),
                emits: d
                    .flag
                    .clone()
                    .or_else(|| d.define.as_ref().map(|n| format!("#define {n} {{}}"))),
                doc: d.doc.clone(),
            })
            .collect()
    }

    /// Distinct parameter names, in order of first declaration.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The kind of a parameter.
    pub fn kind(&self, name: &str) -> Option<ParamKind> {
        let n = *self.index.get(name)?;
        self.decls.iter().find(|d| d.name == n).map(|d| d.kind)
    }

    pub fn constants(&self) -> &BTreeMap<String, Value> {
        &self.constants
    }

    /// Constraint texts, the file's first, then the campaign's.
    pub fn constraints(&self) -> Vec<&str> {
        self.constraints.iter().map(|c| c.text.as_str()).collect()
    }

    /// Which declaration gives each name its value in `point` (by name index), or why the
    /// point is not in the space.
    fn assign(&self, point: &Point) -> std::result::Result<Vec<Option<usize>>, String> {
        let mut values: Vec<Option<EValue>> = vec![None; self.names.len()];
        let mut assigned: Vec<Option<usize>> = vec![None; self.names.len()];
        for (d, decl) in self.decls.iter().enumerate() {
            let n = decl.name;
            if assigned[n].is_some() {
                continue;
            }
            let applies = decl.when.as_ref().is_none_or(|w| {
                !w.params.iter().any(|&p| values[p].is_none())
                    && w.eval(&Env {
                        names: &self.index,
                        values: &values,
                        constants: &self.constants_eval,
                    })
                    .unwrap_or(false)
            });
            if !applies {
                continue;
            }
            let name = &self.names[n];
            let Some(v) = point.get(name) else {
                return Err(format!("it lacks parameter `{name}`"));
            };
            if !decl.domain.contains(v) {
                // Quoted where it is text: `threads = 1.0` read as the text "1.0" must not
                // print as `threads = 1`, which looks like a value of the domain.
                let shown = |v: &Value| match v {
                    Value::Int(i) => i.to_string(),
                    Value::Text(t) => format!("{t:?}"),
                };
                let mut domain: Vec<String> = decl.domain.iter().take(8).map(shown).collect();
                if decl.domain.len() > 8 {
                    domain.push(format!("... ({} values)", decl.domain.len()));
                }
                return Err(format!(
                    "{name} = {} is outside its domain ({})",
                    shown(v),
                    domain.join(", ")
                ));
            }
            values[n] = Some(to_evalexpr(v));
            assigned[n] = Some(d);
        }
        for name in point.0.keys() {
            match self.index.get(name) {
                None => return Err(format!("`{name}` is not a parameter of the space")),
                Some(&n) if assigned[n].is_none() => {
                    return Err(format!("`{name}` does not apply to this point"))
                }
                _ => {}
            }
        }
        if !self.constants_ok {
            return Err("a constraint on constants fails".into());
        }
        let env = Env {
            names: &self.index,
            values: &values,
            constants: &self.constants_eval,
        };
        for c in &self.constraints {
            if c.params.iter().any(|&p| values[p].is_none()) {
                continue;
            }
            if !c.eval(&env).unwrap_or(false) {
                return Err(format!("it violates `{}`", c.text));
            }
        }
        Ok(assigned)
    }

    /// Why `point` is not a valid point of the space (None when it is).
    pub fn why_invalid(&self, point: &Point) -> Option<String> {
        self.assign(point).err()
    }

    /// How a valid point reaches the code: flags, defines and the other values by kind.
    pub fn realise(&self, point: &Point) -> Result<Realisation> {
        let assigned = self
            .assign(point)
            .map_err(|e| anyhow::anyhow!("point {point} is not in space {}: {e}", self.origin))?;
        let mut r = Realisation::default();
        // Declaration order, so that flags come out in the file's order.
        let mut by_decl: Vec<(usize, usize)> = assigned
            .iter()
            .enumerate()
            .filter_map(|(n, d)| d.map(|d| (d, n)))
            .collect();
        by_decl.sort_unstable();
        for (d, n) in by_decl {
            let decl = &self.decls[d];
            let name = &self.names[n];
            let Some(value) = point.get(name) else {
                continue;
            };
            let text = value.to_string();
            let omitted = decl.omit.contains(&text);
            match decl.kind {
                ParamKind::Flag => {
                    if !omitted {
                        if let Some(t) = &decl.flag {
                            r.flags.push(t.replace("{}", &text));
                        }
                    }
                }
                ParamKind::Define => {
                    if !omitted {
                        if let Some(m) = &decl.define {
                            r.defines.push((m.clone(), text));
                        }
                    }
                }
                ParamKind::Launch => {
                    r.launch.insert(name.clone(), value.clone());
                }
                ParamKind::Runtime => {
                    r.runtime.insert(name.clone(), value.clone());
                }
                ParamKind::Variant => {
                    r.variant.insert(name.clone(), value.clone());
                }
                ParamKind::Class => {
                    r.class.insert(name.clone(), value.clone());
                }
            }
        }
        Ok(r)
    }

    fn point_of(&self, walk: &Walk<'_>) -> Point {
        let mut p = Point::new();
        for (d, choice) in walk.choices() {
            if let Some(i) = choice {
                let decl = &self.decls[d];
                p.set(self.names[decl.name].clone(), decl.domain[i].clone());
            }
        }
        p
    }

    /// Draws uniformly by rejection from a padded product (each name drawn from an index
    /// range as wide as its widest declaration; absent names must draw 0), so each valid point
    /// has exactly one accepted draw.
    fn draw(&self, rng: &mut dyn rand::RngCore) -> Option<Point> {
        let widths: Vec<usize> = (0..self.names.len())
            .map(|n| {
                self.decls
                    .iter()
                    .filter(|d| d.name == n)
                    .map(|d| d.domain.len())
                    .max()
                    .unwrap_or(1)
            })
            .collect();
        let mut values: Vec<Option<EValue>> = vec![None; self.names.len()];
        let mut point = Point::new();
        'attempt: for _ in 0..10_000 {
            let r: Vec<usize> = widths.iter().map(|&w| rng.random_range(0..w)).collect();
            values.iter_mut().for_each(|v| *v = None);
            point.0.clear();
            for decl in &self.decls {
                let n = decl.name;
                if values[n].is_some() {
                    continue;
                }
                let env = Env {
                    names: &self.index,
                    values: &values,
                    constants: &self.constants_eval,
                };
                let applies = decl.when.as_ref().is_none_or(|w| {
                    !w.params.iter().any(|&p| values[p].is_none()) && w.eval(&env).unwrap_or(false)
                });
                if !applies {
                    continue;
                }
                if r[n] >= decl.domain.len() {
                    continue 'attempt;
                }
                values[n] = Some(decl.edomain[r[n]].clone());
                point.set(self.names[n].clone(), decl.domain[r[n]].clone());
            }
            if (0..self.names.len()).any(|n| values[n].is_none() && r[n] != 0) {
                continue;
            }
            let env = Env {
                names: &self.index,
                values: &values,
                constants: &self.constants_eval,
            };
            let ok = self.constraints.iter().all(|c| {
                c.params.iter().any(|&p| values[p].is_none()) || c.eval(&env).unwrap_or(false)
            });
            if ok {
                return Some(point);
            }
        }
        None
    }
}

impl SearchSpace for Space {
    fn parameters(&self) -> Vec<(String, ParamKind)> {
        self.names
            .iter()
            .filter_map(|n| self.kind(n).map(|k| (n.clone(), k)))
            .collect()
    }

    fn points(&self) -> Box<dyn Iterator<Item = Point> + '_> {
        let mut walk = Walk::all(self);
        Box::new(std::iter::from_fn(move || {
            if walk.step() {
                Some(self.point_of(&walk))
            } else {
                None
            }
        }))
    }

    fn random_point(&self, rng: &mut dyn rand::RngCore) -> Option<Point> {
        if self.count == 0 {
            return None;
        }
        if let Some(p) = self.draw(rng) {
            return Some(p);
        }
        // Rejection failed (a tightly constrained space): index into the enumeration instead.
        let k = rng.random_range(0..self.count);
        self.points().nth(usize::try_from(k).ok()?)
    }

    /// Valid points that take another value of one parameter in `params` (all when empty).
    /// Where that change alters which parameters apply (a `when` reads it), parameters that
    /// appear or whose old value left their domain are filled with the valid completion
    /// closest to the point, so a neighbour may differ in those too.
    fn neighbours(&self, point: &Point, params: &[String]) -> Vec<Point> {
        let Ok(assigned) = self.assign(point) else {
            return Vec::new();
        };
        let base: Vec<Option<EValue>> = self
            .names
            .iter()
            .map(|n| point.get(n).map(to_evalexpr))
            .collect();
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for (n, name) in self.names.iter().enumerate() {
            if !params.is_empty() && !params.contains(name) {
                continue;
            }
            let Some(d) = assigned[n] else { continue };
            let Some(current) = point.get(name) else {
                continue;
            };
            for v in &self.decls[d].domain {
                if v == current {
                    continue;
                }
                let mut pins = base.clone();
                pins[n] = Some(to_evalexpr(v));
                let mut walk = Walk::all(self).with_pins(pins);
                let mut best: Option<((usize, usize), Point)> = None;
                // Completions beyond the first few are rarely closer; the cap bounds the work.
                for _ in 0..256 {
                    if !walk.step() {
                        break;
                    }
                    let candidate = self.point_of(&walk);
                    let distance = self.distance(point, &candidate);
                    if best.as_ref().is_none_or(|(b, _)| distance < *b) {
                        best = Some((distance, candidate));
                    }
                }
                if let Some((_, p)) = best {
                    if seen.insert(p.clone()) {
                        out.push(p);
                    }
                }
            }
        }
        out
    }

    fn is_valid(&self, point: &Point) -> bool {
        self.assign(point).is_ok()
    }
}

impl Space {
    /// (parameters that differ, summed domain-index distance of those): how far a repaired
    /// neighbour strayed.
    fn distance(&self, a: &Point, b: &Point) -> (usize, usize) {
        let mut differ = 0;
        let mut steps = 0;
        for (n, name) in self.names.iter().enumerate() {
            let (x, y) = (a.get(name), b.get(name));
            if x == y {
                continue;
            }
            differ += 1;
            if let (Some(x), Some(y)) = (x, y) {
                let pos = |v: &Value| {
                    self.decls
                        .iter()
                        .filter(|d| d.name == n)
                        .find_map(|d| d.domain.iter().position(|w| w == v))
                };
                if let (Some(i), Some(j)) = (pos(x), pos(y)) {
                    steps += i.abs_diff(j);
                }
            }
        }
        (differ, steps)
    }
}

fn parse_expr(
    text: &str,
    index: &HashMap<String, usize>,
    constants: &HashMap<String, EValue>,
) -> std::result::Result<Expr, String> {
    Expr::parse(text, index, constants).map_err(|e| match e {
        ExprError::Parse(m) => format!("does not parse: {m}"),
        ExprError::Unknown(name) => {
            let mut known: Vec<&String> = index.keys().chain(constants.keys()).collect();
            known.sort();
            format!(
                "refers to unknown name `{name}` (parameters and constants: {})",
                list_or_none(known.into_iter())
            )
        }
    })
}

/// An expression as error messages quote it: long ones cut to their head.
fn shorten(text: &str) -> String {
    if text.chars().count() <= 80 {
        text.to_string()
    } else {
        let head: String = text.chars().take(60).collect();
        format!("{head}... ({} bytes)", text.len())
    }
}

fn show_evalue(v: Option<&EValue>) -> String {
    match v {
        Some(EValue::String(s)) => format!("{s:?}"),
        Some(v) => v.to_string(),
        None => "-".into(),
    }
}

fn list_or_none<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let v: Vec<&str> = names.map(String::as_str).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// The most options the walk that counts a space may try (about a second of evaluation);
/// constraints that tie many large domains together would otherwise make it endless.
pub const MAX_WALK_WORK: u64 = 3_000_000;

/// The most values one domain, and all domains of a space together, may hold. A tuner
/// measures a few thousand points at most; each value costs about 100 bytes, and a line of
/// TOML (`range = { from = 0, to = 1000000 }`) must not ask for 100 MB.
pub const MAX_DOMAIN_VALUES: usize = 100_000;

/// The longest parameter or constant name: names become preprocessor defines and table
/// columns, and nobody types more.
pub const MAX_NAME_LEN: usize = 64;

fn check_identifier(name: &str) -> std::result::Result<(), String> {
    if name.len() > MAX_NAME_LEN {
        let head: String = name.chars().take(20).collect();
        return Err(format!(
            "name {head:?}... is {} bytes long; names have at most {MAX_NAME_LEN}",
            name.len()
        ));
    }
    let mut chars = name.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "name {name:?} is not an identifier (letters, digits and _, not starting with a digit)"
        ))
    }
}

/// The kind as written in TOML.
pub fn kind_name(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::Flag => "flag",
        ParamKind::Define => "define",
        ParamKind::Launch => "launch",
        ParamKind::Variant => "variant",
        ParamKind::Runtime => "runtime",
        ParamKind::Class => "class",
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The space's constants with the campaign's overrides applied (an override must name a
/// declared constant).
fn merged_constants(
    file: &SpaceFile,
    overrides: &SpaceOverrides,
    origin: &str,
    at: &dyn Fn(usize) -> String,
) -> Result<BTreeMap<String, Value>> {
    let mut constants = BTreeMap::new();
    for (name, value) in &file.constants {
        check_identifier(name)
            .map_err(|e| anyhow::anyhow!("{}: constant {e}", at(value.span().start)))?;
        constants.insert(name.clone(), value.get_ref().clone());
    }
    for (name, value) in &overrides.constants {
        if !constants.contains_key(name) {
            bail!(
                "{origin}: the campaign overrides constant `{name}`, which the space does not declare (constants: {})",
                list_or_none(constants.keys())
            );
        }
        constants.insert(name.clone(), value.clone());
    }
    Ok(constants)
}

/// The parameters' names in order of first declaration, and their index.
fn parameter_names(
    file: &SpaceFile,
    overrides: &SpaceOverrides,
    constants: &BTreeMap<String, Value>,
    origin: &str,
    at: &dyn Fn(usize) -> String,
) -> Result<(Vec<String>, HashMap<String, usize>)> {
    if file.params.is_empty() {
        bail!("{origin}: the space declares no parameter (add [[param]] tables)");
    }
    for name in overrides.params.keys() {
        if !file.params.iter().any(|p| p.name.get_ref() == name) {
            bail!("{origin}: the campaign overrides the domain of `{name}`, which the space does not declare");
        }
    }
    let mut names: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for p in &file.params {
        let name = p.name.get_ref();
        let where_ = at(p.name.span().start);
        check_identifier(name).map_err(|e| anyhow::anyhow!("{where_}: parameter {e}"))?;
        if constants.contains_key(name) {
            bail!("{where_}: `{name}` is both a constant and a parameter");
        }
        if !index.contains_key(name) {
            index.insert(name.clone(), names.len());
            names.push(name.clone());
        }
    }
    Ok((names, index))
}

/// What a parameter's declaration is checked against.
struct DeclScope<'a> {
    file: &'a SpaceFile,
    overrides: &'a SpaceOverrides,
    names: &'a [String],
    index: &'a HashMap<String, usize>,
    constants_eval: &'a HashMap<String, EValue>,
}

impl DeclScope<'_> {
    /// The `d`-th `[[param]]` table as a declaration, after the `earlier` ones; `domain_values`
    /// counts the values of every domain so far (they cost memory several times over).
    fn declaration(
        &self,
        d: usize,
        earlier_decls: &[Decl],
        domain_values: &mut usize,
        at: &dyn Fn(usize) -> String,
    ) -> Result<Decl> {
        let p = &self.file.params[d];
        let name = p.name.get_ref();
        let where_ = at(p.name.span().start);
        let domain_spec = self
            .overrides
            .params
            .get(name)
            .cloned()
            .unwrap_or_else(|| p.domain());
        if !domain_spec.is_given() {
            bail!("{where_}: parameter `{name}` has no domain: give `values`, `range` or `pow2`");
        }
        let domain = domain_spec
            .expand()
            .map_err(|e| anyhow::anyhow!("{where_}: parameter `{name}`: {e}"))?;
        *domain_values += domain.len();
        if *domain_values > MAX_DOMAIN_VALUES {
            bail!(
                "{where_}: parameter `{name}`: the domains hold more than {MAX_DOMAIN_VALUES} \
                 values in all (each costs memory several times over)"
            );
        }
        check_kind(p, name, &where_)?;
        let name_idx = self.index[name];
        let earlier: Vec<&Decl> = earlier_decls
            .iter()
            .filter(|e| e.name == name_idx)
            .collect();
        if let Some(first) = earlier.first() {
            if first.kind != p.kind {
                bail!("{where_}: parameter `{name}` is declared again with another kind ({} after {})", kind_name(p.kind), kind_name(first.kind));
            }
            if earlier.iter().any(|e| e.when.is_none()) {
                bail!("{where_}: parameter `{name}` is declared again after a declaration without `when`, which always wins");
            }
        }
        let when = p
            .when
            .as_ref()
            .map(|text| self.when(d, text, name, &where_))
            .transpose()?;
        let omit = p
            .omit
            .clone()
            .unwrap_or_else(|| vec!["none".to_string(), "off".to_string()]);
        // A template without `{}` emits the same flag for every value it does not omit, so
        // two such values would be two points that build the same kernel.
        if let (ParamKind::Flag, Some(template)) = (p.kind, &p.flag) {
            let emitting: Vec<String> = domain
                .iter()
                .map(|v| v.to_string())
                .filter(|v| !omit.contains(v))
                .collect();
            if !template.contains("{}") && emitting.len() > 1 {
                bail!(
                    "{where_}: flag `{name}`'s template {template:?} has no `{{}}`, so its values \
                     {} would all emit the same flag; give it values = [\"off\", \"on\"] (off \
                     omits it) or put `{{}}` where the value goes",
                    emitting.join(", ")
                );
            }
        }
        Ok(Decl {
            name: name_idx,
            kind: p.kind,
            edomain: domain.iter().map(to_evalexpr).collect(),
            domain,
            when,
            flag: p.flag.clone(),
            define: match p.kind {
                ParamKind::Define => Some(p.define.clone().unwrap_or_else(|| name.to_uppercase())),
                _ => None,
            },
            omit,
            doc: p.doc.clone(),
        })
    }

    /// A `when` condition, which may read constants and parameters declared entirely before.
    fn when(&self, d: usize, text: &str, name: &str, where_: &str) -> Result<Expr> {
        let expr = parse_expr(text, self.index, self.constants_eval)
            .map_err(|e| anyhow::anyhow!("{where_}: `when` of parameter `{name}`: {e}"))?;
        for &r in &expr.params {
            let last_decl = self
                .file
                .params
                .iter()
                .rposition(|q| q.name.get_ref() == &self.names[r]);
            if last_decl.is_none_or(|l| l >= d) {
                bail!(
                    "{where_}: `when` of parameter `{name}` reads `{}`, which is not declared entirely before it; `when` may read constants and earlier parameters only",
                    self.names[r]
                );
            }
        }
        Ok(expr)
    }
}

/// A parameter's kind agrees with its `flag`, `define` and `omit` keys.
fn check_kind(p: &spec::ParamSpec, name: &str, where_: &str) -> Result<()> {
    match (p.kind, &p.flag, &p.define) {
        (ParamKind::Flag, None, _) => bail!(
            "{where_}: parameter `{name}` is a flag but has no `flag` template (e.g. flag = \"--fmad={{}}\")"
        ),
        (ParamKind::Flag, _, Some(_)) | (ParamKind::Define, Some(_), _) => {
            bail!("{where_}: parameter `{name}` may not have both `flag` and `define`")
        }
        (k, Some(_), _) if k != ParamKind::Flag => {
            bail!("{where_}: parameter `{name}` has a `flag` template but kind {}", kind_name(k))
        }
        (k, _, Some(_)) if k != ParamKind::Define => {
            bail!("{where_}: parameter `{name}` has a `define` name but kind {}", kind_name(k))
        }
        _ => {}
    }
    if p.omit.is_some() && !matches!(p.kind, ParamKind::Flag | ParamKind::Define) {
        bail!("{where_}: parameter `{name}`: `omit` applies to flag and define kinds only");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
