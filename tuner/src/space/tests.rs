use super::*;

#[test]
fn evalexpr_short_circuit() {
    let r = evalexpr::eval(r#"m = "none"; m == "none" || m * 2 <= 4"#);
    eprintln!("or: {r:?}");
    let r = evalexpr::eval(r#"m = "none"; if(m == "none", true, m * 2 <= 4)"#);
    eprintln!("if: {r:?}");
    let r = evalexpr::eval(r#"m = 3; if(m == "none", true, m * 2 <= 4)"#);
    eprintln!("if: {r:?}");
    let r = evalexpr::eval(r#"m = 3; m == "none""#);
    eprintln!("cmp: {r:?}");
}
