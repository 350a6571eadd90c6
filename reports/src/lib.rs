//! Plots (Pareto fronts, convergence, the paper's figures) and the HTML report of a tuning
//! campaign.
//!
//! The entry point is [`render`]: it takes the campaign as plain rows ([`ReportInput`], the
//! results store's record types) and writes `index.html` plus one image per figure into a
//! folder. The page opens from disk (relative image paths, inline CSS, no scripts).
//!
//! Wiring `mats report DIR` is a matter of loading the rows from the store:
//!
//! ```ignore
//! let input = reports::ReportInput {
//!     campaign: store.campaign()?,
//!     instances: store.instances()?,
//!     runs: store.runs()?,
//!     evaluations: store.evaluations()?,
//!     trials: store.trials()?,
//!     exports: store.exports()?,
//!     unfinished: None,
//! };
//! let format: reports::ImageFormat = args.format.parse()?; // "svg" | "png"
//! let summary = reports::render(&input, &out_dir, format)?;
//! println!("{}", summary.index.display());
//! for s in &summary.skipped {
//!     eprintln!("skipped {}: {}", s.title, s.reason);
//! }
//! ```
//!
//! Text is drawn with DejaVu Sans, embedded in the binary and registered with plotters'
//! `ab_glyph` text stack, so no system font libraries are needed.

pub mod budgets;
pub mod data;
pub mod demo;
pub mod figures;
pub mod font;
pub mod html;
mod report;
pub mod settings;
pub mod verdict;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use results::{CampaignRow, EvaluationRow, ExportRow, InstanceRecord, RunRow, TrialRow};

/// Everything a report draws from, as read from the results store.
#[derive(Debug, Clone)]
pub struct ReportInput {
    pub campaign: CampaignRow,
    pub instances: Vec<InstanceRecord>,
    pub runs: Vec<RunRow>,
    /// Any order; they are grouped by run and sorted by `seq`.
    pub evaluations: Vec<EvaluationRow>,
    pub trials: Vec<TrialRow>,
    pub exports: Vec<ExportRow>,
    /// Why the campaign has not reached its end (`"was stopped by the user"`), if it has not:
    /// a class without a re-measure is then unfinished, not a class that kept its baseline.
    pub unfinished: Option<String>,
}

/// Image file format of the figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImageFormat {
    /// Vector images; text is rendered by the browser.
    #[default]
    Svg,
    /// Bitmaps, text rasterised with the embedded font.
    Png,
}

impl ImageFormat {
    /// File extension without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            ImageFormat::Svg => "svg",
            ImageFormat::Png => "png",
        }
    }
}

impl FromStr for ImageFormat {
    type Err = String;

    /// Parses "svg" or "png" (any case), as `--format` takes them.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "svg" => Ok(ImageFormat::Svg),
            "png" => Ok(ImageFormat::Png),
            other => Err(format!(
                "unknown image format `{other}` (expected svg or png)"
            )),
        }
    }
}

/// A figure that was drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFigure {
    /// Stable identifier, e.g. `pareto-power-01`; also the HTML anchor.
    pub id: String,
    pub title: String,
    /// Absolute or `out_dir`-joined path of the image.
    pub path: PathBuf,
}

/// A figure left out because the campaign has no data for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedFigure {
    pub id: String,
    pub title: String,
    /// Why, in a sentence (also shown in the report).
    pub reason: String,
}

/// What [`render`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportSummary {
    /// `out_dir/index.html`.
    pub index: PathBuf,
    pub written: Vec<WrittenFigure>,
    pub skipped: Vec<SkippedFigure>,
}

/// Why a report could not be written. Missing data is never an error: such figures are
/// skipped with a reason.
#[derive(Debug)]
pub enum ReportError {
    /// Creating the folder or writing a file failed.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// plotters failed to draw or encode a figure.
    Draw { figure: String, message: String },
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            ReportError::Draw { figure, message } => {
                write!(f, "drawing figure {figure} failed: {message}")
            }
        }
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReportError::Io { source, .. } => Some(source),
            ReportError::Draw { .. } => None,
        }
    }
}

/// Writes the report of `input` into `out_dir` (created if needed): `index.html` and one
/// image per figure in `format`, named `<id>.<ext>` beside it.
///
/// Figures: per class the Pareto fronts of time vs power and time vs energy, convergence per
/// class and optimised metric, the compiler sub-space around the baseline (Fig. 2), staged
/// vs combined search (Fig. 3), data-tuned vs tuned (Fig. 4), with and without algorithmic
/// choice (Fig. 5) and tuning for time vs power vs Pareto (Fig. 6). A figure without data is
/// not drawn; it is listed in [`ReportSummary::skipped`] and in the page with its reason.
/// Every figure has a table of its numbers; the campaign's settings and device head the
/// page. Settings keys that are missing are noted, never fatal.
///
/// Image files of an earlier report in `out_dir` are not deleted; `index.html` references
/// only the ones written by this call.
pub fn render(
    input: &ReportInput,
    out_dir: &Path,
    format: ImageFormat,
) -> Result<ReportSummary, ReportError> {
    report::render(input, out_dir, format)
}
