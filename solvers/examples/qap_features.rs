//! Prints the features and class of every QAP instance given on the command line, as CSV
//! (the class label contains commas, so it is quoted).
//! Used to choose the class thresholds: `cargo run -p mats-solvers --example qap_features --
//! ../shared/data/qaplib/instances/*.dat`.

fn main() {
    println!("name,n,density,symmetry,dominance,class");
    for arg in std::env::args().skip(1) {
        match solvers::qap::read(std::path::Path::new(&arg)) {
            Ok(inst) => {
                let f = inst.features();
                println!(
                    "{},{},{:.3},{:.3},{:.1},\"{}\"",
                    inst.name,
                    f.n,
                    f.density,
                    f.symmetry,
                    f.dominance,
                    f.class()
                );
            }
            Err(e) => eprintln!("{e}"),
        }
    }
}
