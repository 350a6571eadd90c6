use super::*;

fn err(text: &str) -> String {
    match Space::from_toml_str(text, "test.toml") {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => format!("{e:#}"),
    }
}

const SMALL: &str = r#"
[constants]
max_threads = 256

[[param]]
name = "variant"
kind = "variant"
values = ["a", "dyn"]

[[param]]
name = "threads"
kind = "launch"
pow2 = { from = 32, to = 1024 }

[[param]]
name = "child"
kind = "launch"
when = 'variant == "dyn"'
values = [1, 2, 3]

[[param]]
name = "opt"
kind = "flag"
values = ["none", 1, 2]
flag = "-O{}"

[[param]]
name = "unroll"
kind = "define"
values = [1, 4]
"#;

fn small() -> Space {
    let text = format!("constraints = [\"threads <= max_threads\"]\n{SMALL}");
    Space::from_toml_str(&text, "small.toml").expect("small space loads")
}

#[test]
fn counts_conditional_parameters_without_multiplying() {
    let s = small();
    // threads 32..256 (4) x opt 3 x unroll 2, times variant a (1) + dyn (3 children).
    assert_eq!(s.count(), 4 * 3 * 2 * (1 + 3));
    assert_eq!(s.points().count() as u64, s.count());
    assert!(s.points().all(|p| s.is_valid(&p)));
    assert!(s
        .points()
        .all(|p| (p.get("variant") == Some(&"dyn".into())) == p.get("child").is_some()));
    assert_eq!(s.raw_product(), 2 * 6 * 3 * 3 * 2);
    assert_eq!(s.unconstrained_count(), Some(6 * 3 * 2 * 4));
}

#[test]
fn realises_flags_defines_and_values() {
    let s = small();
    let p: Point = [
        ("variant", Value::from("dyn")),
        ("threads", 64.into()),
        ("child", 2.into()),
        ("opt", 2.into()),
        ("unroll", 4.into()),
    ]
    .into_iter()
    .collect();
    let r = s.realise(&p).expect("valid point");
    assert_eq!(r.flags, vec!["-O2".to_string()]);
    assert_eq!(r.defines, vec![("UNROLL".to_string(), "4".to_string())]);
    assert_eq!(r.launch.get("child"), Some(&Value::Int(2)));
    assert_eq!(r.variant.get("variant"), Some(&Value::from("dyn")));
    let none = p.with("opt", "none".into());
    assert!(s.realise(&none).expect("valid").flags.is_empty());
    let bad = p.with("threads", 512.into());
    assert!(format!("{:#}", s.realise(&bad).unwrap_err()).contains("threads <= max_threads"));
    let extra = p.with("variant", "a".into());
    assert!(!s.is_valid(&extra), "child does not apply to variant a");
}

#[test]
fn random_points_are_uniform_and_valid() {
    let s = small();
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let mut hits: HashMap<Point, usize> = HashMap::new();
    for _ in 0..9600 {
        let p = s.random_point(&mut rng).expect("a point");
        assert!(s.is_valid(&p));
        *hits.entry(p).or_default() += 1;
    }
    assert_eq!(hits.len() as u64, s.count());
    // 96 points, 100 draws each expected.
    assert!(hits.values().all(|&h| (50..160).contains(&h)), "{hits:?}");
}

use rand::SeedableRng;

#[test]
fn neighbours_change_one_parameter_and_repair_conditionals() {
    let s = small();
    let p: Point = [
        ("variant", Value::from("a")),
        ("threads", 64.into()),
        ("opt", 1.into()),
        ("unroll", 1.into()),
    ]
    .into_iter()
    .collect();
    let ns = s.neighbours(&p, &[]);
    // threads 3 others, opt 2, unroll 1, variant 1 (with a child value filled in).
    assert_eq!(ns.len(), 3 + 2 + 1 + 1);
    assert!(ns.iter().all(|n| s.is_valid(n)));
    let dyn_ = ns
        .iter()
        .find(|n| n.get("variant") == Some(&"dyn".into()))
        .expect("variant neighbour");
    assert_eq!(dyn_.get("child"), Some(&Value::Int(1)));
    let only = s.neighbours(&p, &["opt".to_string()]);
    assert_eq!(only.len(), 2);
}

#[test]
fn overrides_replace_domains_and_constants_and_add_constraints() {
    let s = small();
    let o: SpaceOverrides = toml::from_str(
        r#"
constants = { max_threads = 64 }
constraints = ['opt != "none"']
[params.unroll]
values = [8]
"#,
    )
    .expect("override parses");
    let t = s.with_overrides(&o).expect("applies");
    assert_eq!(t.count(), 2 * 2 * 4);
    let unknown: SpaceOverrides = toml::from_str("constants = { nope = 1 }").expect("parses");
    assert!(format!("{:#}", s.with_overrides(&unknown).unwrap_err()).contains("nope"));
    let typo = SpaceOverrides::from_toml_str("constraint = []", "campaign.toml").unwrap_err();
    assert!(format!("{typo:#}").contains("campaign.toml"));
}

#[test]
fn unknown_key_names_file_and_line() {
    let e = err("[[param]]\nname = \"a\"\nkind = \"launch\"\nvalues = [1]\nvalue = 3\n");
    assert!(e.contains("test.toml"), "{e}");
    assert!(e.contains("test.toml:5:"), "{e}");
    assert!(e.contains("unknown field `value`"), "{e}");
}

#[test]
fn empty_domains_are_errors() {
    let e = err("[[param]]\nname = \"a\"\nkind = \"launch\"\nvalues = []\n");
    assert!(e.contains("test.toml:2") && e.contains("empty"), "{e}");
    let e = err("[[param]]\nname = \"a\"\nkind = \"launch\"\nrange = { from = 5, to = 1 }\n");
    assert!(e.contains("empty"), "{e}");
    let e = err("[[param]]\nname = \"a\"\nkind = \"launch\"\n");
    assert!(e.contains("no domain"), "{e}");
}

#[test]
fn bad_constraints_are_errors() {
    let base = "[[param]]\nname = \"a\"\nkind = \"launch\"\nvalues = [1, 2]\n";
    let e = err(&format!("constraints = [\"(a <= 2\"]\n{base}"));
    assert!(
        e.contains("test.toml:1") && e.contains("does not parse"),
        "{e}"
    );
    // evalexpr accepts a missing operand when parsing; the load-time evaluation catches it.
    let e = err(&format!("constraints = [\"a <= \"]\n{base}"));
    assert!(e.contains("cannot be evaluated"), "{e}");
    let e = err(&format!("constraints = [\"a <= b\"]\n{base}"));
    assert!(e.contains("unknown name `b`"), "{e}");
    let e = err(&format!("constraints = [\"a + 1\"]\n{base}"));
    assert!(e.contains("not boolean"), "{e}");
    let e = err(&format!("constraints = [\"a > 5\"]\n{base}"));
    assert!(e.contains("no valid point") && e.contains("a > 5"), "{e}");
    // A constraint on no parameter: not "all 0 combinations".
    let e = err(&format!("constraints = [\"false\"]\n{base}"));
    assert!(
        e.contains("names no parameter") && !e.contains("all 0"),
        "{e}"
    );
    let e = err("[[param]]\nname = \"a\"\nkind = \"flag\"\nvalues = [1]\n");
    assert!(e.contains("no `flag` template"), "{e}");
    let e = err("[[param]]\nname = \"b\"\nkind = \"launch\"\nvalues = [1]\nwhen = \"a == 1\"\n[[param]]\nname = \"a\"\nkind = \"launch\"\nvalues = [1]\n");
    assert!(e.contains("earlier parameters"), "{e}");
}

#[test]
fn one_point_space() {
    let s = Space::from_toml_str(
        "[[param]]\nname = \"a\"\nkind = \"runtime\"\nvalues = [7]\n",
        "one",
    )
    .expect("loads");
    assert_eq!(s.count(), 1);
    let p: Point = [("a", 7i64)].into_iter().collect();
    assert_eq!(s.points().collect::<Vec<_>>(), vec![p.clone()]);
    assert!(s.neighbours(&p, &[]).is_empty());
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    assert_eq!(s.random_point(&mut rng), Some(p));
}

fn shipped(name: &str) -> Space {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../spaces")
        .join(name);
    Space::load(&path).unwrap_or_else(|e| panic!("{e:#}"))
}

#[test]
fn shipped_spaces_load() {
    let qap = shipped("qap.toml");
    // 547 launch/variant combinations x 4 x 2^11 flag settings x 16 maxrregcount values.
    assert_eq!(qap.count(), 547 * 4 * 2048 * 16);
    let small = shipped("qap-small.toml");
    assert!((200..=600).contains(&small.count()), "{}", small.count());
    for f in [
        "qap-cpu.toml",
        "pfsp-cpu.toml",
        "tsp-cpu.toml",
        "tsp-focused.toml",
        "hwsw-cpu.toml",
    ] {
        assert!(shipped(f).count() > 0);
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    for _ in 0..50 {
        let p = qap.random_point(&mut rng).expect("point");
        let r = qap.realise(&p).expect("realises");
        assert!(r.flags.iter().all(|f| f.starts_with('-')));
        let v = p.get("variant").expect("variant");
        let s = p
            .get("solutions")
            .and_then(Value::as_int)
            .expect("solutions");
        let t = p.get("threads").and_then(Value::as_int).expect("threads");
        if v == &Value::from("rots-block") {
            assert!((132..=1056).contains(&s) && t >= 128);
        } else {
            assert_eq!(s % t, 0);
        }
        assert_eq!(
            p.get("child_threads").is_some(),
            v == &Value::from("2opt-dyn")
        );
    }
}

#[test]
fn pfsp_space_relinks_only_the_iterated_greedy() {
    let pfsp = shipped("pfsp.toml");
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let mut seen = [false; 2];
    for _ in 0..200 {
        let p = pfsp.random_point(&mut rng).expect("point");
        let ig = [Value::from("ig-block"), Value::from("ig-warp")]
            .contains(p.get("variant").expect("variant"));
        let relink = p.get("relink").and_then(Value::as_int);
        assert_eq!(relink.is_some(), ig, "{p:?}");
        // The pool's size is a dimension only where relinking is on.
        assert_eq!(p.get("elite").is_some(), relink == Some(1), "{p:?}");
        if let Some(r) = relink {
            seen[r as usize] = true;
        }
    }
    assert_eq!(seen, [true, true]);
}

#[test]
fn a_flag_template_without_a_placeholder_takes_one_emitting_value() {
    let space = |values: &str| {
        format!(
            "[[param]]\nname = \"fast\"\nkind = \"flag\"\nflag = \"--use_fast_math\"\n\
             values = {values}\n"
        )
    };
    let e = err(&space("[1, 2]"));
    assert!(e.contains("fast") && e.contains("no `{}`"), "{e}");
    let s = Space::from_toml_str(&space("[\"off\", \"on\"]"), "test.toml").unwrap();
    assert_eq!(s.count(), 2);
    let on = s
        .points()
        .find(|p| p.get("fast") == Some(&"on".into()))
        .unwrap();
    assert_eq!(s.realise(&on).unwrap().flags, vec!["--use_fast_math"]);
}
