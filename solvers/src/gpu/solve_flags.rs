//! `mats solve --backend gpu`'s flags as a tuner point: each family declares, next to its
//! [`GpuWorkload::from_point`](super::GpuWorkload::from_point), which `mats solve` flags set
//! which of its point parameters ([`SolveFlag`]) and what a solve starts from
//! ([`GpuWorkload::SOLVE_DEFAULTS`](super::GpuWorkload::SOLVE_DEFAULTS)). A command-line run
//! thus goes through the very conversion a tuned point goes through, and a family's GPU
//! parameters are declared once: the binary lists the flags it parsed and never names a
//! family's types.

use std::collections::BTreeMap;

use kernels::gpu::DeviceInfo;

use super::workload::{PointValues, SolveFlag};
use super::GpuConfig;
use crate::family::{Family, Instance};

/// A flag's value as parsed by the command line.
#[derive(Debug, Clone, PartialEq)]
pub enum FlagValue {
    Int(i64),
    Float(f64),
    Text(String),
    List(Vec<f64>),
}

/// A flag the user gave.
#[derive(Debug, Clone, PartialEq)]
pub struct GivenFlag {
    pub flag: &'static str,
    pub value: FlagValue,
}

/// The point parameters that choose the variant: checked before anything that depends on it.
const VARIANT_PARAMS: [&str; 2] = ["variant", "algorithm"];

/// A point built from defaults and flags.
#[derive(Debug, Clone, Default)]
struct FlagPoint {
    values: BTreeMap<&'static str, FlagValue>,
    flags: Vec<String>,
}

impl PointValues for FlagPoint {
    fn int(&self, name: &str) -> Result<Option<i64>, String> {
        match self.values.get(name) {
            None => Ok(None),
            Some(FlagValue::Int(v)) => Ok(Some(*v)),
            Some(FlagValue::Float(v)) if v.fract() == 0.0 && v.abs() < 9e15 => Ok(Some(*v as i64)),
            Some(FlagValue::Text(t)) => t
                .parse()
                .map(Some)
                .map_err(|_| format!("parameter `{name}` must be an integer, found {t:?}")),
            Some(other) => Err(format!(
                "parameter `{name}` must be an integer, found {other:?}"
            )),
        }
    }

    fn float(&self, name: &str) -> Result<Option<f64>, String> {
        match self.values.get(name) {
            None => Ok(None),
            Some(FlagValue::Int(v)) => Ok(Some(*v as f64)),
            Some(FlagValue::Float(v)) => Ok(Some(*v)),
            Some(FlagValue::Text(t)) => t
                .parse()
                .map(Some)
                .map_err(|_| format!("parameter `{name}` must be a number, found {t:?}")),
            Some(other) => Err(format!(
                "parameter `{name}` must be a number, found {other:?}"
            )),
        }
    }

    fn text(&self, name: &str) -> Option<String> {
        match self.values.get(name)? {
            FlagValue::Int(v) => Some(v.to_string()),
            FlagValue::Float(v) => Some(v.to_string()),
            FlagValue::Text(t) => Some(t.clone()),
            FlagValue::List(_) => None,
        }
    }

    fn flags(&self) -> &[String] {
        &self.flags
    }

    fn defines(&self) -> &[(String, String)] {
        &[]
    }
}

/// The configuration `mats solve --backend gpu` runs, before a device is known.
#[derive(Debug, Clone)]
pub struct SolveConfig {
    pub config: GpuConfig,
    given: Vec<GivenFlag>,
    /// The family's defaults and every flag given, for building another variant's
    /// configuration where the instance asks for one ([`SolveConfig::fit`]).
    point: FlagPoint,
    family: Family,
    /// Whether a flag named the variant.
    chose_variant: bool,
}

impl SolveConfig {
    /// Turns the flags a user gave into `family`'s GPU configuration; every error names the
    /// flag. `nvrtc_flags` are the extra compiler flags. Where no flag names the variant, a
    /// flag that applies to a variant the instance may choose
    /// ([`GpuWorkload::INSTANCE_VARIANTS`](super::GpuWorkload::INSTANCE_VARIANTS)) is checked
    /// by [`fit`], which knows the instance.
    ///
    /// [`fit`]: SolveConfig::fit
    pub fn from_flags(
        family: Family,
        given: &[GivenFlag],
        nvrtc_flags: &[String],
    ) -> Result<SolveConfig, String> {
        let table = GpuConfig::solve_flags(family)?;
        let mut point = FlagPoint {
            flags: nvrtc_flags.to_vec(),
            ..FlagPoint::default()
        };
        for (param, value) in GpuConfig::solve_defaults(family)? {
            point.values.insert(param, FlagValue::Text((*value).into()));
        }
        let mut declared = Vec::with_capacity(given.len());
        for g in given {
            let Some(decl) = table.iter().find(|d| d.flag == g.flag) else {
                return Err(not_taken(g, table, family));
            };
            declared.push((decl, g));
        }
        // The variant first, so that a misspelt one is reported as such rather than as a
        // flag that does not apply to it.
        let (choosing, rest): (Vec<_>, Vec<_>) = declared
            .into_iter()
            .partition(|(d, _)| d.params.iter().any(|p| VARIANT_PARAMS.contains(p)));
        for (decl, g) in &choosing {
            set(&mut point, decl, g)?;
        }
        let variant_only =
            GpuConfig::from_point(family, &point).map_err(|e| name_flag(e, given, table))?;
        let variant = variant_only.variant_name();
        let chose_variant = !choosing.is_empty();
        let by_instance = GpuConfig::instance_variants(family)?;
        // A flag that chooses part of the variant (TSP's `--construction`) may still belong to
        // other variants than the one chosen.
        for (decl, g) in choosing.iter().chain(&rest) {
            let deferred = !chose_variant && by_instance.iter().any(|v| applies(decl, v));
            if !decl.variants.is_empty() && !applies(decl, variant) && !deferred {
                return Err(not_for(g, decl, family, variant));
            }
        }
        for (decl, g) in &rest {
            set(&mut point, decl, g)?;
        }
        let config =
            GpuConfig::from_point(family, &point).map_err(|e| name_flag(e, given, table))?;
        Ok(SolveConfig {
            config,
            given: given.to_vec(),
            point,
            family,
            chose_variant,
        })
    }

    /// Where the instance would run another variant by default (ig-grid for a flowshop whose
    /// walk tables do not fit ig-block's shared memory) but a flag given applies only to the
    /// default variant, [`fit`](SolveConfig::fit) keeps the default one; this says so, naming
    /// the flags, so that a user comparing runs with and without them knows the variant
    /// differs. `None` where the instance's variant runs, or no flag kept it from running.
    pub fn passed_over(&self, inst: &Instance, device: &DeviceInfo) -> Option<String> {
        if self.chose_variant {
            return None;
        }
        let variant = self.config.instance_variant(inst, device)?;
        let table = GpuConfig::solve_flags(inst.family()).ok()?;
        let keeping: Vec<&str> = self
            .given
            .iter()
            .filter(|g| {
                table
                    .iter()
                    .find(|d| d.flag == g.flag)
                    .is_some_and(|d| !d.variants.is_empty() && !applies(d, variant))
            })
            .map(|g| g.flag)
            .collect();
        if keeping.is_empty() {
            return None;
        }
        Some(format!(
            "{} runs this instance although `{variant}` would by default: {} {} not apply to \
             `{variant}` (omit {} to run it)",
            self.config.variant_name(),
            keeping.join(", "),
            if keeping.len() == 1 { "does" } else { "do" },
            if keeping.len() == 1 { "it" } else { "them" },
        ))
    }

    /// Checks the configuration against the instance and the device; the error names the
    /// flag that set the parameter at fault, or a flag the variant that runs does not take.
    pub fn fit(mut self, inst: &Instance, device: &DeviceInfo) -> Result<GpuConfig, String> {
        let table = GpuConfig::solve_flags(inst.family())?;
        let declared = |g: &GivenFlag| table.iter().find(|d| d.flag == g.flag);
        let takes = |g: &GivenFlag, variant: &str| {
            declared(g).is_some_and(|d| d.variants.is_empty() || applies(d, variant))
        };
        // The family's default variant may have a better sibling for this instance; it takes
        // over only where every flag given applies to it and it can run the instance.
        // Why the instance's own variant did not run, for the error below.
        let mut refused = None;
        if !self.chose_variant {
            if let Some(variant) = self.config.instance_variant(inst, device) {
                let mut point = self.point.clone();
                point
                    .values
                    .insert("variant", FlagValue::Text(variant.into()));
                let other = GpuConfig::from_point(self.family, &point)
                    .and_then(|other| other.check(inst, device).map(|()| other));
                match other {
                    Ok(other) if self.given.iter().all(|g| takes(g, variant)) => {
                        self.config = other;
                    }
                    Ok(_) => {}
                    Err(why) => refused = Some((variant, name_flag(why, &self.given, table))),
                }
            }
        }
        let variant = self.config.variant_name();
        if let Some(g) = self.given.iter().find(|g| !takes(g, variant)) {
            let decl = declared(g).ok_or_else(|| format!("{} is not a GPU flag", g.flag))?;
            let mut message = not_for(g, decl, inst.family(), variant);
            if let Some((other, why)) = refused {
                message += &format!(" (this instance would run `{other}`, which refuses: {why})");
            }
            return Err(message);
        }
        self.config
            .check(inst, device)
            .map_err(|why| name_flag(why, &self.given, table))?;
        Ok(self.config)
    }
}

/// A flag no variant of `family` takes, with the flags it does take.
fn not_taken(given: &GivenFlag, table: &[SolveFlag], family: Family) -> String {
    let takes: Vec<&str> = table.iter().map(|d| d.flag).collect();
    format!(
        "{} does not apply to {family} on the GPU (it takes {})",
        given.flag,
        takes.join(", ")
    )
}

fn not_for(given: &GivenFlag, decl: &SolveFlag, family: Family, variant: &str) -> String {
    format!(
        "{} does not apply to {family} `{variant}` on the GPU: it applies to `{}` only",
        given.flag,
        decl.variants.join("`, `")
    )
}

/// Whether `decl` applies to `variant` (the variant name, or its first part where a family
/// reports `algorithm/variant`).
fn applies(decl: &SolveFlag, variant: &str) -> bool {
    decl.variants
        .iter()
        .any(|v| *v == variant || variant.split('/').any(|part| part == *v))
}

fn set(point: &mut FlagPoint, decl: &SolveFlag, given: &GivenFlag) -> Result<(), String> {
    match &given.value {
        FlagValue::List(values) => {
            if values.len() != decl.params.len() {
                return Err(format!(
                    "{} takes {} comma-separated values ({}), found {}",
                    given.flag,
                    decl.params.len(),
                    decl.params.join(","),
                    values.len()
                ));
            }
            for (param, v) in decl.params.iter().zip(values) {
                point.values.insert(param, FlagValue::Float(*v));
            }
        }
        value => {
            for param in decl.params {
                point.values.insert(param, value.clone());
            }
        }
    }
    Ok(())
}

/// Names the flag in a parameter's error: the user typed the flag, not the name the family
/// gives the parameter. The longest parameter name found wins (`perturbation_max` over
/// `perturbation`). A message that opens with the parameters' names (the shared checks of
/// `qap::tabu`: "parameter `aspiration` must ...") has them replaced by the flag; any other
/// gets the flag in front.
fn name_flag(message: String, given: &[GivenFlag], table: &[SolveFlag]) -> String {
    let culprit = given
        .iter()
        .filter_map(|g| table.iter().find(|d| d.flag == g.flag))
        .flat_map(|d| d.params.iter().map(move |p| (d, *p)))
        .filter(|(_, p)| mentions(&message, p))
        .max_by_key(|(_, p)| p.len());
    let Some((decl, _)) = culprit else {
        return message;
    };
    let names: Vec<String> = decl.params.iter().map(|p| format!("`{p}`")).collect();
    let opening = match names.len() {
        1 => format!("parameter {}", names[0]),
        _ => format!("parameters {}", names.join(", ")),
    };
    match message.strip_prefix(&opening) {
        Some(rest) => format!("{}{rest}", decl.flag),
        None => format!("{}: {message}", decl.flag),
    }
}

/// Whether `message` names `param` as a word (`tenure` is not named by `tenure_min`).
fn mentions(message: &str, param: &str) -> bool {
    let words = message.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
    let spaced = param.replace('_', " ");
    words.clone().any(|w| w == param) || (param.contains('_') && message.contains(&spaced))
}

/// Whether `flag` applies to `family`'s GPU `variant`, with the error `from_flags` gives where
/// it does not (a tuned run checks `--adapt` against its bundle's variant this way).
pub fn check_applies(family: Family, flag: &GivenFlag, variant: &str) -> Result<(), String> {
    let table = GpuConfig::solve_flags(family)?;
    let Some(decl) = table.iter().find(|d| d.flag == flag.flag) else {
        return Err(not_taken(flag, table, family));
    };
    if decl.variants.is_empty() || applies(decl, variant) {
        Ok(())
    } else {
        Err(not_for(flag, decl, family, variant))
    }
}

/// The `mats solve` flags a family's GPU solver takes (for help and errors).
pub fn flags_of(family: Family) -> Result<Vec<&'static str>, String> {
    Ok(GpuConfig::solve_flags(family)?
        .iter()
        .map(|d| d.flag)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(flag: &'static str, value: FlagValue) -> GivenFlag {
        GivenFlag { flag, value }
    }

    fn text(s: &str) -> FlagValue {
        FlagValue::Text(s.into())
    }

    #[test]
    fn every_family_default_is_a_valid_configuration() {
        for family in super::super::GPU_FAMILIES {
            let c = SolveConfig::from_flags(*family, &[], &[]).unwrap();
            assert_eq!(c.config.family(), *family);
        }
        let c = SolveConfig::from_flags(Family::Hwsw, &[], &[]).unwrap();
        assert_eq!(
            c.config.variant_name(),
            crate::hwsw::gpu::GpuAlgorithm::DEFAULT.name()
        );
    }

    #[test]
    fn restart_from_picks_gpts_multis_restart_rule() {
        let params = |from: &str| {
            SolveConfig::from_flags(Family::Hwsw, &[given("--restart-from", text(from))], &[]).map(
                |c| match c.config {
                    GpuConfig::Hwsw(p) => p.restart_from_own,
                    other => panic!("not hwsw: {other:?}"),
                },
            )
        };
        assert_eq!(params("own"), Ok(true));
        assert_eq!(params("elite"), Ok(false));
        let e = params("best").unwrap_err();
        assert!(
            e.contains("--restart-from") && e.contains("elite or own") && e.contains("\"best\""),
            "{e}"
        );
        let e = SolveConfig::from_flags(
            Family::Hwsw,
            &[
                given("--algo", text("fused")),
                given("--restart-from", text("own")),
            ],
            &[],
        )
        .unwrap_err();
        assert!(e.contains("--restart-from does not apply"), "{e}");
    }

    #[test]
    fn flags_set_the_point_parameters_their_family_declares() {
        let c = SolveConfig::from_flags(
            Family::Qap,
            &[
                given("--tenure-range", FlagValue::List(vec![0.3, 0.7])),
                given("--aspiration", FlagValue::Float(2.5)),
                given("--solutions", FlagValue::Int(96)),
                given("--relink", FlagValue::Int(1)),
            ],
            &["-O3".into()],
        )
        .unwrap();
        let GpuConfig::Qap(p) = &c.config else {
            panic!("not qap: {:?}", c.config)
        };
        assert_eq!(p.algorithm.name(), "rots-block");
        assert_eq!((p.tenure_min_factor, p.tenure_max_factor), (0.3, 0.7));
        assert_eq!(p.aspiration_factor, 2.5);
        assert_eq!(p.solutions, 96);
        assert!(p.relink);
        assert_eq!(p.crossover, None, "the default decides per instance");
        assert_eq!(p.flags, vec!["-O3".to_string()]);

        // Crossover is the other restart rule; asking for both names both.
        let c =
            SolveConfig::from_flags(Family::Qap, &[given("--crossover", FlagValue::Int(1))], &[])
                .unwrap();
        let GpuConfig::Qap(p) = &c.config else {
            panic!("not qap")
        };
        assert!(p.crossover == Some(true) && !p.relink && !p.adapt);
        // The restart stall: a number is kept; `auto` (a space's or campaign's value) leaves
        // it to the restart rule, as no flag does; anything else names the flag.
        let stall = |v: FlagValue| {
            SolveConfig::from_flags(Family::Qap, &[given("--restart-stall", v)], &[]).map(|c| {
                match c.config {
                    GpuConfig::Qap(p) => p.restart_stall,
                    other => panic!("not qap: {other:?}"),
                }
            })
        };
        assert_eq!(stall(FlagValue::Int(8)), Ok(Some(8)));
        assert_eq!(stall(text("auto")), Ok(None));
        let err = stall(text("often")).unwrap_err();
        assert!(err.contains("--restart-stall"), "{err}");
        let c = SolveConfig::from_flags(Family::Qap, &[given("--adapt", FlagValue::Int(1))], &[])
            .unwrap();
        let GpuConfig::Qap(p) = &c.config else {
            panic!("not qap")
        };
        assert!(p.adapt);
        let c = SolveConfig::from_flags(Family::Pfsp, &[given("--adapt", FlagValue::Int(1))], &[])
            .unwrap();
        let GpuConfig::Pfsp(p) = &c.config else {
            panic!("not pfsp")
        };
        assert!(p.adapt, "ig-block, the default variant, takes it");
        let c = SolveConfig::from_flags(Family::Tsp, &[given("--adapt", FlagValue::Int(1))], &[])
            .unwrap();
        let GpuConfig::Tsp(p) = &c.config else {
            panic!("not tsp")
        };
        assert!(p.focused.adapt, "focused, the default colony, takes it");
        let err = SolveConfig::from_flags(
            Family::Tsp,
            &[
                given("--algo", text("mmas")),
                given("--adapt", FlagValue::Int(1)),
            ],
            &[],
        )
        .unwrap_err();
        assert!(
            err.contains("--adapt does not apply to tsp `mmas/data`") && err.contains("`focused`"),
            "{err}"
        );
        let both = [
            given("--crossover", FlagValue::Int(1)),
            given("--relink", FlagValue::Int(1)),
        ];
        let err = SolveConfig::from_flags(Family::Qap, &both, &[]).unwrap_err();
        assert!(
            err.to_string().contains("`relink` and `crossover`"),
            "{err}"
        );

        // One value, two parameters: --destruction fixes ig-warp's adaptive range.
        let c = SolveConfig::from_flags(
            Family::Pfsp,
            &[
                given("--algo", text("ig-warp")),
                given("--destruction", FlagValue::Int(5)),
                given("--threads", FlagValue::Int(64)),
            ],
            &[],
        )
        .unwrap();
        let GpuConfig::Pfsp(p) = &c.config else {
            panic!("not pfsp")
        };
        assert_eq!((p.destruction, p.destruction_max, p.warps), (5, 5, 2));

        let c = SolveConfig::from_flags(
            Family::Tsp,
            &[
                given("--algo", text("as")),
                given("--construction", text("task")),
                given("--ants", FlagValue::Int(64)),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(c.config.variant_name(), "as/task");

        // Focused: its own flags, and --threads as ants per block (a warp each).
        let c = SolveConfig::from_flags(
            Family::Tsp,
            &[
                given("--algo", text("focused")),
                given("--min-new-edges", FlagValue::Int(12)),
                given("--source-tour", text("iteration")),
                given("--or-opt", text("off")),
                given("--ls-neighbours", FlagValue::Int(8)),
                given("--threads", FlagValue::Int(256)),
                given("--ants", FlagValue::Int(640)),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(c.config.variant_name(), "focused");
        let GpuConfig::Tsp(p) = &c.config else {
            panic!("not tsp")
        };
        assert_eq!(p.focused.min_new_edges, 12);
        assert_eq!(p.focused.source.name(), "iteration");
        assert!(!p.focused.or_opt);
        assert_eq!((p.local_search.neighbours, p.local_search.warps), (8, 8));
        assert_eq!(p.ants, Some(640));
        // Focused is the default; MAX-MIN AS does not take its flags.
        let c = SolveConfig::from_flags(
            Family::Tsp,
            &[given("--min-new-edges", FlagValue::Int(12))],
            &[],
        )
        .unwrap();
        assert_eq!(c.config.variant_name(), "focused");
        let e = SolveConfig::from_flags(
            Family::Tsp,
            &[
                given("--algo", text("mmas")),
                given("--min-new-edges", FlagValue::Int(12)),
            ],
            &[],
        )
        .unwrap_err();
        assert!(e.contains("`focused` only"), "{e}");
        // Flags the chosen colony would ignore are refused, not dropped.
        let e = SolveConfig::from_flags(Family::Tsp, &[given("--construction", text("task"))], &[])
            .unwrap_err();
        assert!(e.starts_with("--construction"), "{e}");
        let e = SolveConfig::from_flags(
            Family::Tsp,
            &[
                given("--algo", text("as")),
                given("--ls-neighbours", FlagValue::Int(8)),
            ],
            &[],
        )
        .unwrap_err();
        assert!(e.starts_with("--ls-neighbours"), "{e}");
    }

    #[test]
    fn errors_name_the_flag_and_the_variants_it_applies_to() {
        let e = SolveConfig::from_flags(
            Family::Qap,
            &[
                given("--algo", text("2opt")),
                given("--aspiration", FlagValue::Float(2.0)),
            ],
            &[],
        )
        .unwrap_err();
        assert!(
            e.contains("--aspiration does not apply to qap `2opt`")
                && e.contains("`rots-block` only"),
            "{e}"
        );
        let e = SolveConfig::from_flags(Family::Hwsw, &[given("--ants", FlagValue::Int(8))], &[])
            .unwrap_err();
        assert!(
            e.contains("--ants does not apply to hwsw on the GPU"),
            "{e}"
        );
        let e = SolveConfig::from_flags(Family::Qap, &[given("--algo", text("nope"))], &[])
            .unwrap_err();
        assert!(e.contains("rots-block"), "{e}");
        let e = SolveConfig::from_flags(
            Family::Qap,
            &[given("--perturbation-max", FlagValue::Float(3.0))],
            &[],
        )
        .unwrap_err();
        assert!(e.starts_with("--perturbation-max: "), "{e}");
        let e = SolveConfig::from_flags(
            Family::Qap,
            &[given("--tenure-range", FlagValue::List(vec![0.4]))],
            &[],
        )
        .unwrap_err();
        assert!(
            e.contains("--tenure-range takes 2 comma-separated values"),
            "{e}"
        );
        let e = SolveConfig::from_flags(
            Family::Pfsp,
            &[
                given("--algo", text("ig-warp")),
                given("--threads", FlagValue::Int(48)),
            ],
            &[],
        )
        .unwrap_err();
        assert!(
            e.starts_with("--threads of ig-warp must be a multiple of 32"),
            "{e}"
        );
        let e = SolveConfig::from_flags(Family::Tsp, &[given("--merge", text("maybe"))], &[])
            .unwrap_err();
        assert!(e.starts_with("--merge takes on or off"), "{e}");
    }

    #[test]
    fn a_tuned_runs_adapt_is_checked_against_the_bundles_variant() {
        let adapt = given("--adapt", FlagValue::Int(1));
        assert!(check_applies(Family::Qap, &adapt, "rots-block").is_ok());
        let e = check_applies(Family::Qap, &adapt, "2opt").unwrap_err();
        assert!(
            e.contains("--adapt does not apply to qap `2opt`") && e.contains("rots-block"),
            "{e}"
        );
        assert!(check_applies(Family::Tsp, &adapt, "focused").is_ok());
        let e = check_applies(Family::Tsp, &adapt, "as/data").unwrap_err();
        assert!(
            e.contains("--adapt does not apply to tsp `as/data`") && e.contains("focused"),
            "{e}"
        );
    }

    #[test]
    fn a_parameter_is_named_as_a_whole_word() {
        assert!(mentions("parameter `tenure_min` is bad", "tenure_min"));
        assert!(!mentions("parameter `tenure_min` is bad", "tenure"));
        assert!(mentions("rots-block tenure factors need 0 < min", "tenure"));
    }
}
