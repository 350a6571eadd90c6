//! `mats results DIR [--csv|--json]`.

use std::path::Path;

use anyhow::{bail, Result};
use results::{CampaignRow, Store};

use crate::cli::{CampaignDir, ResultsArgs};
use engine::tune::STORE_FILE;

/// Opens a campaign folder's store to write (export records what it exported), checks it
/// whole, and picks its campaign.
pub fn open(source: &CampaignDir) -> Result<(Store, CampaignRow)> {
    let store = match open_store(&source.dir, false) {
        // Readable but not writable (an archived or a colleague's campaign): say so, rather
        // than SQLite's "unable to open database file".
        Err(e) if open_store(&source.dir, true).is_ok() => bail!(
            "{}: cannot open it for writing ({e:#}); `mats export` records its exports in \
             the store: copy the campaign folder somewhere writable and export from there",
            source.dir.join(STORE_FILE).display()
        ),
        store => store?,
    };
    // A damaged store would export verdicts read from broken pages.
    store.integrity_check()?;
    let campaign = pick_campaign(&store, source.campaign.as_deref(), &source.dir)?;
    Ok((store, campaign))
}

/// Opens a campaign folder's store (`read_only`: also without write access to it).
fn open_store(dir: &Path, read_only: bool) -> Result<Store> {
    let path = dir.join(STORE_FILE);
    if !path.is_file() {
        bail!(
            "{} is not a campaign folder: {} not found (run `mats tune CAMPAIGN.toml` first)",
            dir.display(),
            path.display()
        );
    }
    Ok(if read_only {
        Store::open_read_only(&path)?
    } else {
        Store::open(&path)?
    })
}

/// [`open`] for commands that only read (`results`, `report`): works without write access
/// to the folder (an archived or a colleague's campaign).
pub fn open_to_read(source: &CampaignDir) -> Result<(Store, CampaignRow)> {
    let store = open_store(&source.dir, true)?;
    let campaign = pick_campaign(&store, source.campaign.as_deref(), &source.dir)?;
    Ok((store, campaign))
}

/// The campaign to show: the named one, or the only one.
fn pick_campaign(store: &Store, name: Option<&str>, dir: &Path) -> Result<CampaignRow> {
    let campaigns = store.campaigns()?;
    match name {
        Some(name) => campaigns
            .into_iter()
            .find(|c| c.name == name)
            .ok_or_else(|| anyhow::anyhow!("{} holds no campaign named {name:?}", dir.display())),
        None => match campaigns.len() {
            0 => bail!("{} holds no campaign yet", dir.display()),
            1 => Ok(campaigns.into_iter().next().expect("one")),
            _ => bail!(
                "{} holds several campaigns ({}); pick one with --campaign",
                dir.display(),
                campaigns
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
    }
}

pub fn run(args: &ResultsArgs) -> Result<()> {
    let (store, campaign) = open_to_read(&args.source)?;
    let mut out: Vec<u8> = Vec::new();
    if args.json {
        let dump = results::StoreDump::load(&store, &campaign)?;
        results::write_json(&dump, &mut out)?;
    } else {
        let trials = store.trials(campaign.id)?;
        results::export::write_csv(&trials, &mut out)?;
    }
    super::write_output(args.output.as_deref(), &String::from_utf8_lossy(&out))
}

/// Why the campaign in `dir` has not reached its end, if it has not: no `summary.json` (the
/// process was killed), a summary that says the user stopped it, or a merge of shards not all
/// of which finished.
pub fn unfinished(dir: &std::path::Path) -> Option<String> {
    if let Some(holder) = results::FolderLock::holder(dir) {
        return Some(format!("is still being tuned ({holder})"));
    }
    let path = dir.join("summary.json");
    let summary = path.exists().then(|| engine::tune::read_summary(&path));
    match summary {
        Some(Ok(summary)) => unfinished_by(Some(&summary)),
        // Without its summary, how the campaign ended is unknown: never read as finished.
        Some(Err(e)) => Some(format!(
            "has a summary.json that cannot be read ({e:#}), so how it ended is unknown"
        )),
        None => unfinished_by(None),
    }
}

/// [`unfinished`] for a summary already read (`None`: the folder has none).
pub fn unfinished_by(summary: Option<&results::TuneSummary>) -> Option<String> {
    match summary {
        None => Some("was killed (it has no summary.json)".into()),
        Some(s) if engine::tune::budget::stopped_by_user(s) => {
            Some(format!("was {}", engine::tune::budget::STOPPED_BY_USER))
        }
        Some(s) if !s.unfinished_shards.is_empty() => Some(format!(
            "was merged from shards not all of which finished ({})",
            s.unfinished_shards.join("; ")
        )),
        // The [budget] ended it: what it searched is verified, but classes it never reached
        // are not tuned at all.
        Some(s) => {
            let reason = s.stopped.as_deref()?;
            let never: Vec<&str> = s
                .classes
                .iter()
                .filter(|c| c.evaluations == 0)
                .map(|c| c.class.as_str())
                .collect();
            Some(format!(
                "was stopped by its [budget] ({reason}){}",
                if never.is_empty() {
                    String::new()
                } else {
                    format!(", with class(es) {} never searched", never.join(", "))
                }
            ))
        }
    }
}
