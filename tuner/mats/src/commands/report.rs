//! `mats report DIR`: the HTML report of a campaign.

use anyhow::Result;

use crate::cli::{ImageFormatArg, ReportArgs};

pub fn run(args: &ReportArgs) -> Result<()> {
    let (store, campaign) = super::results::open_to_read(&args.source)?;
    let unfinished = super::results::unfinished(&args.source.dir);
    if let Some(how) = &unfinished {
        eprintln!(
            "warning: campaign {:?} in {} {how}: the report shows what it has recorded",
            campaign.name,
            args.source.dir.display()
        );
    }
    let input = reports::ReportInput {
        instances: store
            .instances(campaign.id)?
            .into_iter()
            .map(|r| r.record)
            .collect(),
        runs: store.runs(campaign.id)?,
        evaluations: store.evaluations(campaign.id)?,
        trials: store.trials(campaign.id)?,
        exports: store.exports(campaign.id)?,
        unfinished,
        campaign,
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.source.dir.join("report"));
    let format = match args.format {
        ImageFormatArg::Svg => reports::ImageFormat::Svg,
        ImageFormatArg::Png => reports::ImageFormat::Png,
    };
    let summary = reports::render(&input, &out, format)?;
    // The answer first: tuned vs default per class (also out/verdicts.md).
    let verdicts = reports::verdict::class_verdicts(&input);
    println!(
        "{}",
        reports::verdict::markdown(&input.campaign.name, &verdicts)
    );
    for figure in &summary.written {
        println!("  {:<40} {}", figure.title, figure.path.display());
    }
    for figure in &summary.skipped {
        println!("  {:<40} not drawn: {}", figure.title, figure.reason);
    }
    println!("open {}", out.join("index.html").display());
    Ok(())
}
