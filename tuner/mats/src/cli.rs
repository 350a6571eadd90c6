//! The command line: what users can type, with its help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use solvers::family::Family;

#[derive(Debug, Parser)]
#[command(
    name = "mats",
    version,
    about = "Autotuning of GPU metaheuristic solvers (QAP, flowshop, TSP, HW/SW partitioning)",
    long_about = "mats solves QAP, permutation flowshop, TSP and HW/SW partitioning instances \
                  with CUDA kernels compiled at run time (NVRTC) or, without a GPU, with CPU \
                  reference solvers on all cores; it tunes kernel variants, launch settings and \
                  solver parameters per dataset class (campaigns in TOML, trials in SQLite) and \
                  exports one tuned bundle or executable per class."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process
pub enum Command {
    /// Solve one instance and print the objective, gap to the best known value, time and solution.
    Solve(SolveArgs),
    /// Inspect or generate instances.
    #[command(subcommand)]
    Instance(InstanceCommand),
    /// List the GPUs: name, architecture, memory, driver/CUDA/NVRTC versions, power sensors.
    Devices(DevicesArgs),
    /// Benchmarks that print ratios measured side by side in one run.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Run a tuning campaign (TOML): search the space per dataset class, measure, store trials.
    Tune(TuneArgs),
    /// Write one tuned bundle per dataset class (kernels + manifest) and an index.
    Export(ExportArgs),
    /// Export a campaign's trials as CSV or JSON.
    Results(ResultsArgs),
    /// Draw a campaign's Pareto fronts, convergence and the paper's figures into an HTML page.
    Report(ReportArgs),
    /// Inspect search spaces (TOML files under spaces/).
    #[command(subcommand)]
    Space(SpaceCommand),
    /// Measuring worker process (JSON lines on stdin/stdout); started by mats itself.
    #[command(hide = true)]
    Worker,
    // ---- campaigns beyond one process: shards, the daemon and its clients (docs/daemon.md)
    /// Merge the stores of a campaign's shards (`mats tune --shard K/N`) into one folder.
    Merge(MergeArgs),
    /// Run the tuner daemon: queue campaigns, run them, share the GPUs among them.
    Daemon(DaemonArgs),
    /// Queue a campaign with the daemon (validated first; prints its id).
    Submit(SubmitArgs),
    /// The daemon's queue, or one campaign: state, trials done, best so far, ETA.
    Status(StatusArgs),
    /// Cancel a queued or running campaign of the daemon.
    Cancel(CancelArgs),
    /// Print a daemon campaign's log (its `mats tune` output).
    Logs(LogsArgs),
}

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Campaign file (e.g. campaigns/quickstart.toml; format in campaigns/README.md).
    pub campaign: PathBuf,
    /// Continue an interrupted campaign: finished trials are reused, interrupted ones are
    /// recorded as crashed and measured again (up to the campaign's max_attempts).
    #[arg(long, conflicts_with = "fresh")]
    pub resume: bool,
    /// Delete the output folder's results of earlier runs and start over.
    #[arg(long)]
    pub fresh: bool,
    /// Output folder (default: the campaign's `output`, else runs/<name>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Fail at once when another process (a `mats tune`, the daemon) holds one of the
    /// campaign's GPUs, instead of taking turns with it trial by trial.
    #[arg(long)]
    pub no_wait: bool,
    /// Tune only a deterministic share of the classes: K of N (1-based; class i in name
    /// order goes to shard i mod N + 1), into its own folder: without --out the campaign's
    /// folder's `shard-K-of-N`, with --out that folder itself (give each shard its own);
    /// `mats merge` joins the shards. The cross-class step is left out.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<engine::tune::Shard>,
    /// Only check the campaign (objectives, budgets, backend table, space, baseline and
    /// default points, instances and classes) and exit; a GPU campaign is checked as for a
    /// GPU also on a machine without one. Measures and writes nothing.
    #[arg(long)]
    pub check: bool,
}

/// A campaign's output folder, and which campaign of its store.
#[derive(Debug, Args)]
pub struct CampaignDir {
    /// Campaign output folder (holds results.sqlite).
    pub dir: PathBuf,
    /// Campaign name, when the folder's store holds several.
    #[arg(long)]
    pub campaign: Option<String>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub source: CampaignDir,
    /// Where the bundles go.
    #[arg(long, value_name = "DIR", default_value = "tuned")]
    pub out: PathBuf,
    /// Also write one standalone executable per class into this folder, named after the
    /// class: `OUT/NAME INSTANCE [--time-limit S] [--seed N] [--index K] [--json]` runs that class's
    /// bundle with no mats install or export folder (docs/standalone.md).
    #[arg(long, value_name = "OUT")]
    pub binaries: Option<PathBuf>,
    /// Replace an export of another campaign in --out (refused otherwise: its bundles would
    /// be removed).
    #[arg(long)]
    pub replace: bool,
}

#[derive(Debug, Args)]
pub struct ResultsArgs {
    #[command(flatten)]
    pub source: CampaignDir,
    /// One row per trial, CSV (the default).
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Everything (campaign, instances, runs, trials, evaluations, exports) as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write to a file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub source: CampaignDir,
    /// Report folder (default DIR/report).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Image format of the figures.
    #[arg(long, value_enum, default_value_t = ImageFormatArg::Svg)]
    pub format: ImageFormatArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImageFormatArg {
    Svg,
    Png,
}

/// Which of a tuned class's bundles `solve --tuned` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Prefer {
    /// The bundle of the campaign's own objective (the default): the best gap at the budget
    /// for quality campaigns, the fastest for fixed-work ones.
    Tuned,
    Quality,
    Time,
    Energy,
    Power,
}

impl Prefer {
    pub fn name(self) -> &'static str {
        match self {
            Prefer::Tuned => "tuned",
            Prefer::Quality => "quality",
            Prefer::Time => "time",
            Prefer::Energy => "energy",
            Prefer::Power => "power",
        }
    }
}

#[derive(Debug, Args)]
pub struct DevicesArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// The GPU runtime: compile times (cold, warm, disk cache), repeatability of time and
    /// power, the kernel's share of the energy window, and fault isolation.
    Measure(BenchMeasureArgs),
    /// QAP: moves evaluated per second for every GPU variant against the CPU reference on all
    /// cores, the paper's baseline configuration against hand-tuned ones, the 2opt kernel's
    /// share of the chip's integer peak, and (with --quality) rots-block's gap after 1 s and 10 s.
    Qap(BenchQapArgs),
    /// PFSP: swap neighbours evaluated per second by tabu-full, tabu-prefix and the CPU tabu
    /// (all cores, one core) at the paper's Table 2 sizes, with the prefix/full ratio; and (with
    /// --quality) ig-block against the CPU iterated greedy on all cores at equal wall time on
    /// Taillard's instances.
    Pfsp(BenchPfspArgs),
    /// HW/SW partitioning: time per iteration and for 2000 iterations of the GPTS variants
    /// (separate, compact, fused; zero-copy and device tabu status) and the CPU `sts` (one core,
    /// all cores) on generated graphs of the paper's sizes in the six CCR x R cases, with the
    /// mean hardware cost; and (with --quality) gpts-multi against GPTS at equal wall time.
    Hwsw(BenchHwswArgs),
    /// TSP: milliseconds per Ant System iteration (m = n ants: construction, pheromone update,
    /// choice information) of the GPU construction variants (task, data, data-compressed) and
    /// pheromone updates (atomic, gather) against the CPU `as` on all cores, with the pheromone
    /// stage's share of the DRAM bandwidth.
    Tsp(BenchTspArgs),
    /// Strategies replayed on brute-forced spaces (Kernel Tuner cache files of the FAIR
    /// benchmark hub, or campaigns measured exhaustively): the community's score against random
    /// search and the optimum at budgets from 2% to 50% of each space, one table per space and
    /// an aggregate.
    Strategies(BenchStrategiesArgs),
    /// The daemon (CPU campaigns, no GPU needed): submit-to-first-trial, `status` latency
    /// with many campaigns queued, and a fake device's busy share with one and two campaigns.
    Daemon(BenchDaemonArgs),
}

#[derive(Debug, Args)]
pub struct BenchStrategiesArgs {
    /// Campaign folders (a store with an exhaustive run), Kernel Tuner cache files (.json or
    /// .json.gz), or folders of cache files.
    #[arg(required = true)]
    pub sources: Vec<PathBuf>,
    /// Campaign name, when a folder's store holds several.
    #[arg(long)]
    pub campaign: Option<String>,
    /// The class searched exhaustively (when there are several).
    #[arg(long)]
    pub class: Option<String>,
    /// Seeds per strategy (at most 10,000).
    #[arg(allow_negative_numbers = true, long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub seeds: u64,
    /// The first seed: runs use FIRST-SEED .. FIRST-SEED + SEEDS, so that a choice made on
    /// one set of seeds can be checked on another.
    #[arg(allow_negative_numbers = true, long, default_value_t = 0)]
    pub first_seed: u64,
    /// Budgets as percentages of each space, comma-separated (`--budgets 5,10`; default
    /// 2,5,10,15,20,25,30,40,50); the aggregate score averages every budget from the smallest
    /// to the largest.
    #[arg(long, value_delimiter = ',', hide_default_value = true, default_values_t = vec![2.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0])]
    pub budgets: Vec<f64>,
    /// Only these strategies, comma-separated (labels as printed; default: all).
    #[arg(long, value_delimiter = ',')]
    pub strategies: Vec<String>,
    /// Curves of another tool's strategies on the same spaces (scripts/kt-strategies.py),
    /// scored the same way and printed beside mats' own.
    #[arg(long, value_name = "FILE")]
    pub external: Option<PathBuf>,
    /// Also write the study as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BenchQapArgs {
    /// GPU ordinal.
    #[arg(allow_negative_numbers = true, long, default_value_t = 0)]
    pub gpu: usize,
    /// Instance sizes for the throughput table (uniform random instances like Taillard's taiXXa).
    #[arg(long, value_delimiter = ',', default_values_t = vec![50usize, 100])]
    pub sizes: Vec<usize>,
    /// Also run rots-block on tai20a..tai100a for 1 s and 10 s each and report the gaps.
    #[arg(long)]
    pub quality: bool,
    /// Folder with the QAPLIB .dat files for --quality.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "../shared/data/qaplib/instances"
    )]
    pub qaplib: PathBuf,
    /// Compare rots-block (default configuration) with the CPU Ro-TS on all cores at equal
    /// wall time on these QAPLIB instances (names in --qaplib, or .dat paths): gap mean ± sd
    /// over --seeds seeds of --seconds each, for Taillard's Ro-TS and for the iterated Ro-TS
    /// each GPU block runs (the same search on both sides); three runs per seed, one at a time.
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub compare: Vec<String>,
    /// --compare: seeds 1..=K (1..=100).
    #[arg(
        allow_negative_numbers = true,
        long,
        default_value_t = 5,
        value_name = "K"
    )]
    pub seeds: u64,
    /// --compare: wall seconds per run (0.1..=3600).
    #[arg(
        allow_negative_numbers = true,
        long,
        default_value_t = 10.0,
        value_name = "S"
    )]
    pub seconds: f64,
    /// --compare: skip the throughput and configuration tables.
    #[arg(long)]
    pub compare_only: bool,
    /// Write the full results as JSON to this file as well.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BenchPfspArgs {
    /// GPU ordinal.
    #[arg(allow_negative_numbers = true, long, default_value_t = 0)]
    pub gpu: usize,
    /// Sizes of the throughput table as MACHINESxJOBS (default: the paper's Table 2, 15x100 ..
    /// 40x900); random instances from Taillard's generator.
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<String>,
    /// Timed GPU runs per size (mean and spread are printed).
    #[arg(allow_negative_numbers = true, long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub repeats: u64,
    /// Skip the throughput table (with --quality).
    #[arg(long)]
    pub no_throughput: bool,
    /// Also compare ig-block and ig-grid with the CPU iterated greedy on the other cores on
    /// Taillard's instances.
    #[arg(long)]
    pub quality: bool,
    /// Folder with Taillard's bks.csv and the instance files it names.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "../shared/data/taillard-pfsp"
    )]
    pub taillard: PathBuf,
    /// Instances for --quality: Taillard's (ta051-ta060,ta081) and the VRF benchmark's by name
    /// (VFR800_60_1, from DIR/vrf/bks.csv).
    #[arg(long, default_value = "ta001-ta120")]
    pub instances: String,
    /// Wall time per instance is n m / 2 x this many milliseconds (the literature's 30).
    #[arg(allow_negative_numbers = true, long, default_value_t = 30.0)]
    pub time_factor: f64,
    /// A fixed wall time per instance in seconds instead of --time-factor's (e.g. 60 for
    /// VFR800_60_1, where n m / 2 x 30 ms is 12 minutes).
    #[arg(allow_negative_numbers = true, long)]
    pub seconds: Option<f64>,
    /// Seeds per instance (1..=SEEDS) for --quality.
    #[arg(allow_negative_numbers = true, long, default_value_t = 1)]
    pub seeds: u64,
    /// GPU variants for --quality (defaults of each), the first run beside the CPU.
    #[arg(long, value_delimiter = ',', default_values_t = vec!["ig-block".to_string(), "ig-grid".to_string()])]
    pub variants: Vec<String>,
    /// --quality: the beam search ig-block's and ig-grid's walks start from, as `mats solve
    /// --beam` (default `auto`, what `mats solve` runs; 0 for NEH starts).
    #[arg(long, default_value = "auto", value_name = "W|auto")]
    pub beam: String,
    /// Write the full results as JSON to this file as well.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BenchTspArgs {
    /// TSPLIB files, or folders holding d198, pcb442, rat783, pr2392, rl11849 (default: those
    /// in ../shared/data/tsplib/instances).
    pub instances: Vec<PathBuf>,
    /// GPU ordinal.
    #[arg(allow_negative_numbers = true, long, default_value_t = 0)]
    pub gpu: usize,
    /// Seeds per configuration (mean and spread are printed).
    #[arg(allow_negative_numbers = true, long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub seeds: u64,
    /// GPU iterations per seed (fewer where one iteration takes more than a second).
    #[arg(allow_negative_numbers = true, long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub iterations: u64,
    /// CPU `as` iterations per seed.
    #[arg(allow_negative_numbers = true, long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    pub cpu_iterations: u64,
    /// Skip the CPU `as`.
    #[arg(long)]
    pub no_cpu: bool,
    /// Instead of the iteration times: solution quality at equal wall time of the GPU MAX-MIN
    /// Ant System with 2-opt (`mats solve --backend gpu --algo mmas` defaults) against the CPU
    /// `mmas` on all cores, gap to the best known value per seed (default instances rat783,
    /// pr2392, rl11849).
    #[arg(long)]
    pub quality: bool,
    /// Wall-time budget per run of --quality, seconds.
    #[arg(
        allow_negative_numbers = true,
        long,
        default_value_t = 10.0,
        value_name = "SECONDS"
    )]
    pub time_limit: f64,
    /// --quality: a budget of its own for one instance, NAME=SECONDS (repeatable; e.g.
    /// pla33810=60).
    #[arg(long = "budget", value_name = "NAME=SECONDS")]
    pub budgets: Vec<String>,
    /// --quality: seeds of their own for one instance, NAME=K (repeatable; e.g. pr2392=5).
    #[arg(long = "instance-seeds", value_name = "NAME=K")]
    pub instance_seeds: Vec<String>,
    /// --quality: the CPU side, `mmas` (MAX-MIN AS + 2-opt, default) or `focused` (focused
    /// ACO), on all cores.
    #[arg(long, default_value = "mmas", value_name = "ALGO")]
    pub cpu_algo: String,
    /// --quality: the GPU side, `mmas` (default) or `focused` (focused ACO, a warp per ant).
    #[arg(long, default_value = "mmas", value_name = "ALGO")]
    pub gpu_algo: String,
    /// Write the full results as JSON to this file as well.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BenchHwswArgs {
    /// GPU ordinal.
    #[arg(allow_negative_numbers = true, long, default_value_t = 0)]
    pub gpu: usize,
    /// Graph sizes as NODESxEDGES (default: the paper's Tables 1-2, 25x34 .. 2000x6000).
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<String>,
    /// Graphs per size and CCR x R case (the paper: 30), seeds 1..=K.
    #[arg(allow_negative_numbers = true, long, default_value_t = 30)]
    pub graphs: u64,
    /// Iterations of every run (the paper's M; no early stop, so all run equal work).
    #[arg(allow_negative_numbers = true, long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    pub iterations: u64,
    /// CPU `sts` iterations per graph where fewer than --iterations suffice to time one
    /// iteration (its totals are then per-iteration time x --iterations, marked `*`).
    #[arg(allow_negative_numbers = true, long, value_parser = clap::value_parser!(u64).range(1..))]
    pub cpu_iterations: Option<u64>,
    /// Skip the CPU `sts` on all cores.
    #[arg(long)]
    pub no_cpu_parallel: bool,
    /// Skip the timing table (with --quality).
    #[arg(long)]
    pub no_timing: bool,
    /// Also compare gpts-multi with GPTS (fused) at equal wall time in every CCR x R case.
    #[arg(long)]
    pub quality: bool,
    /// Sizes for --quality (default 1000x3000,2000x6000).
    #[arg(long, value_delimiter = ',')]
    pub quality_sizes: Vec<String>,
    /// Write the full results as JSON to this file as well.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BenchMeasureArgs {
    /// GPU ordinal.
    #[arg(allow_negative_numbers = true, long, default_value_t = 0)]
    pub gpu: usize,
    /// Measurements of the same kernel in one worker, for the repeatability figure.
    #[arg(allow_negative_numbers = true, long, default_value_t = 5)]
    pub repeats: u32,
    /// Energy window per measurement, seconds (at least 1 s gives stable energy readings).
    #[arg(allow_negative_numbers = true, long, default_value_t = 1.0)]
    pub window: f64,
    /// Iterations of the busy probe per thread (sets the kernel's run time).
    #[arg(allow_negative_numbers = true, long, default_value_t = 20000)]
    pub iterations: u32,
    /// Write the full results as JSON to this file as well.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// Which file, and which instance in it.
#[derive(Debug, Clone, Args)]
pub struct InstanceSource {
    /// Instance file (QAPLIB .dat; Taillard, plain `n m` or VRF flowshop file; TSPLIB .tsp;
    /// HW/SW task graph).
    pub file: PathBuf,
    /// Problem family; detected from the file when omitted.
    #[arg(long)]
    pub family: Option<Family>,
    /// Which instance of a multi-instance Taillard file (1-based).
    #[arg(allow_negative_numbers = true, long, value_name = "K")]
    pub index: Option<usize>,
    /// Extra best-known table(s), CSV with columns `name` and `bks` (e.g. ../shared/data/qaplib/bks.csv).
    #[arg(long, value_name = "FILE")]
    pub bks: Vec<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct SolveArgs {
    #[command(flatten)]
    pub source: InstanceSource,
    /// Algorithm. CPU: qap `tabu` (robust tabu search, default) or `2opt`; pfsp `ig` (iterated
    /// greedy, default) or `tabu`; tsp `as` (Ant System), `mmas` (MAX-MIN AS with 2-opt) or `focused` (focused ACO: bounded
    /// changes of a source tour, 2-opt + Or-opt around them);
    /// hwsw `sts` (tabu search). GPU (qap):
    /// `2opt`, `2opt-shared`, `2opt-dyn`, `tabu`, `rots-block` (default); GPU (pfsp):
    /// `ig-block` (default where a walk's tables fit in shared memory), `ig-grid` (default where
    /// they do not, e.g. 800 x 60: a few walks, each local-search step over the whole GPU),
    /// `ig-warp`, `tabu-full`, `tabu-prefix`;
    /// GPU (tsp): `focused` (default; a warp per ant), `mmas` or `as`; GPU (hwsw):
    /// `gpts-multi` (default), the paper's GPTS as `separate`, `compact` or `fused`.
    #[arg(long, value_name = "NAME")]
    pub algo: Option<String>,
    /// Run the tuned configuration for this instance's class from an export folder
    /// (`mats export`); the backend, --algo and the tuning parameters then come from the bundle
    /// (--backend may only name the bundle's own; other search or launch flags are refused;
    /// --adapt races restarts around a GPU bundle's point, --threads sets a CPU bundle's worker
    /// threads).
    #[arg(long, value_name = "DIR")]
    pub tuned: Option<PathBuf>,
    /// With --tuned: the bundle of the campaign's objective (default), or the one tuned for
    /// quality (gap at the budget), time, energy or power.
    #[arg(long, value_enum, default_value_t = Prefer::Tuned, requires = "tuned")]
    pub prefer: Prefer,
    /// With --tuned: run the best point (in --prefer's objective) of the class's front whose
    /// mean NVML power over a run, as the campaign measured it, is at most W watts.
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "W",
        requires = "tuned"
    )]
    pub max_power: Option<f64>,
    /// With --tuned: as --max-power, for the energy of one run at the tuned budget (joules).
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "J",
        requires = "tuned"
    )]
    pub max_energy: Option<f64>,
    /// With --tuned: an instance of an untuned class runs the nearest tuned class's bundle
    /// when its normalised feature distance is at most this, else the family's default
    /// (0 = only the instance's own class; docs/json.md defines the distance).
    #[arg(allow_negative_numbers = true, long, value_name = "D", default_value_t = engine::bundle::DEFAULT_MAX_CLASS_DISTANCE, requires = "tuned")]
    pub max_class_distance: f64,
    /// With --tuned: run this tuned class's bundle whatever the instance's nearest class (a
    /// warning names the nearest when it is another; what standalone executables run).
    #[arg(long, value_name = "CLASS", requires = "tuned")]
    pub tuned_class: Option<String>,
    /// Where to solve: `cpu` (reference solvers, the default) or `gpu` (CUDA kernels; QAP,
    /// PFSP, TSP, HW/SW). With --tuned the bundle's backend runs; naming another is refused.
    #[arg(long, value_enum)]
    pub backend: Option<Backend>,
    /// GPU ordinal (with --backend gpu).
    #[arg(allow_negative_numbers = true, long, default_value_t = 0)]
    pub gpu: usize,
    /// Island solve (with --backend gpu and --time-limit): `all` or GPU ordinals `0,1,...`;
    /// each GPU runs the solver as an island and they exchange their best solutions every
    /// --exchange-interval seconds. One GPU listed runs as --gpu does; a GPU listed twice runs
    /// two islands on it.
    #[arg(long, value_name = "all|LIST", conflicts_with = "gpu")]
    pub gpus: Option<String>,
    /// Seconds between the islands' exchanges (default: a tenth of --time-limit, 0.5 to 30 s).
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "S",
        requires = "gpus"
    )]
    pub exchange_interval: Option<f64>,
    /// GPU: start solutions per launch (blocks for rots-block; walks for pfsp ig-block;
    /// searches for hwsw gpts-multi; default as many as are resident at once; pfsp ig-grid:
    /// walks 1..=64, default about 1024 / n, one block per job of each).
    #[arg(allow_negative_numbers = true, long, value_name = "P")]
    pub solutions: Option<u32>,
    /// GPU 2opt-dyn: threads of each child grid.
    #[arg(allow_negative_numbers = true, long, value_name = "N")]
    pub child_threads: Option<u32>,
    /// GPU rots-block: at most this many iterations x n per launch (restart checks run between
    /// launches; default 10). GPU pfsp ig-block, hwsw gpts-multi: at most this many iterations
    /// per launch (gpts-multi: per search, default 1000).
    #[arg(allow_negative_numbers = true, long, value_name = "K")]
    pub launch_iterations: Option<u32>,
    /// GPU rots-block: restart a block whose best has not improved for this many launches
    /// (0 never; default 5); CPU qap `tabu`: the same in launches of 10 n iterations. GPU pfsp ig-block: likewise from an elite walk (default 20);
    /// hwsw gpts-multi: from an elite search (default 3).
    #[arg(allow_negative_numbers = true, long, value_name = "L")]
    pub restart_stall: Option<u32>,
    /// GPU hwsw gpts-multi: where a stalled search continues: `elite` (default: one of the
    /// four best searches' bests) or `own` (its own best, with a cleared tabu list; the rule
    /// `--adapt`'s race chose on most graphs measured, docs/hwsw-gpu.md).
    #[arg(long, value_name = "elite|own")]
    pub restart_from: Option<String>,
    /// GPU rots-block (and CPU qap `tabu`): random swaps applied to a restarted block's best,
    /// as a factor of n (default 0.25).
    #[arg(allow_negative_numbers = true, long, value_name = "F")]
    pub perturbation: Option<f64>,
    /// GPU rots-block: adaptive (breakout) perturbation: a block that restarts without having
    /// improved since its last restart takes one swap more each time, up to this factor of n
    /// (default 0: fixed at --perturbation).
    #[arg(allow_negative_numbers = true, long, value_name = "F")]
    pub perturbation_max: Option<f64>,
    /// GPU rots-block: restart a stalled block from the best point on the swap path from its
    /// best toward the best block's best (path relinking) instead of random swaps. GPU pfsp
    /// ig-block, ig-warp: restart a stalled walk from the best sequence on the insertion path
    /// from its best toward a random member of an elite pool (--elite) instead of copying an
    /// elite walk's best.
    #[arg(long, conflicts_with = "no_relink")]
    pub relink: bool,
    /// GPU rots-block, pfsp ig-block, ig-warp: restarts without relinking (ig-block relinks by
    /// default).
    #[arg(long)]
    pub no_relink: bool,
    /// GPU rots-block: restart a stalled block from the crossover of its best and another
    /// block's best (a memetic algorithm over the blocks' bests) instead of random swaps.
    /// Default: on where the instance's flow dominance is high (>= 200), else off.
    #[arg(long, value_name = "on|off", conflicts_with = "relink", hide_possible_values = true,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub crossover: Option<bool>,
    /// GPU pfsp ig-block, ig-warp with --relink: distinct sequences the elite pool keeps
    /// (default 8).
    #[arg(allow_negative_numbers = true, long, value_name = "E")]
    pub elite: Option<usize>,
    /// GPU pfsp ig-block with its tables in global memory (e.g. 800 x 60): walks per block,
    /// sharing one staged copy of the processing times (1..=8, default 1). Experimental: not
    /// yet measured on a GPU. `--json`'s `gpu.threads_per_block` (and `gpu.solutions` where
    /// --solutions is unset) then count the block, `gpu.layout` says the walks per block.
    #[arg(allow_negative_numbers = true, long, value_name = "W")]
    pub walks_per_block: Option<u32>,
    /// GPU rots-block, pfsp ig-block and ig-warp, hwsw gpts-multi: race run-time
    /// configurations across the independent searches during the run (the configured one and
    /// its neighbours: restart rules and stalls, rots-block's swaps, ig-block's destruction
    /// size, gpts-multi's tabu tenure); searches move to the arm whose bests improve most
    /// beyond where their restarts started.
    #[arg(long)]
    pub adapt: bool,
    /// GPU rots-block: where a block keeps its working set: `auto` (default: the fastest that
    /// fits), `shared` (all in shared memory), `global-tabu` (deltas in shared memory, tabu
    /// and matrices in global), `global` (deltas too in global memory; any n <= 512). GPU
    /// pfsp ig-block, ig-warp: where each walk's heads and tails live: `auto` (default:
    /// shared memory where they fit), `shared`, `global`.
    #[arg(long, value_name = "LAYOUT")]
    pub layout: Option<String>,
    /// GPU rots-block (and CPU qap `tabu`): tabu tenure range as factors of n, MIN,MAX
    /// (default 0.4,0.8; CPU with --restarts off: Taillard's 0.9,1.1).
    #[arg(long, value_name = "MIN,MAX", value_delimiter = ',')]
    pub tenure_range: Option<Vec<f64>>,
    /// GPU rots-block (and CPU qap `tabu`): long-term aspiration as a factor of n^2 (Taillard:
    /// 2; default 0, off; CPU with --restarts off: 2).
    #[arg(allow_negative_numbers = true, long, value_name = "F")]
    pub aspiration: Option<f64>,
    /// GPU: extra NVRTC/ptxas flag, repeatable (e.g. -maxrregcount=32, --ptxas-options=-O2).
    #[arg(long = "nvrtc-flag", value_name = "FLAG", allow_hyphen_values = true)]
    pub nvrtc_flags: Vec<String>,
    /// Iteration budget (per start for multistart algorithms); default depends on the algorithm.
    #[arg(allow_negative_numbers = true, long, value_name = "N")]
    pub iterations: Option<u64>,
    /// Wall-clock limit in seconds; with --iterations, whichever ends first.
    #[arg(allow_negative_numbers = true, long, value_name = "S")]
    pub time_limit: Option<f64>,
    /// Stop as soon as the best is within this many percent of the instance's best-known
    /// value (time to target; needs a best-known value: the embedded table or --bks). The
    /// run still ends at --time-limit or --iterations where it never gets there.
    #[arg(allow_negative_numbers = true, long, value_name = "PCT", conflicts_with_all = ["target", "gpus"])]
    pub target_gap: Option<f64>,
    /// Stop as soon as the best objective is at most this (time to target).
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "OBJECTIVE",
        conflicts_with = "gpus"
    )]
    pub target: Option<i64>,
    /// Record every improvement of the best and when it was found (seconds from the
    /// solver's start): the run's anytime curve, printed at 1-2-5 checkpoints and written in
    /// full to --json's `trace`.
    #[arg(long, conflicts_with = "gpus")]
    pub trace: bool,
    /// Random seed; the same seed gives the same result when no time limit is set.
    #[arg(allow_negative_numbers = true, long, default_value_t = 1)]
    pub seed: u64,
    /// CPU: worker threads (0 = all cores, or with --tuned the bundle's tuned count; does not
    /// change the result of an iteration budget). GPU: threads per block (default 128, or 512
    /// for rots-block).
    #[arg(
        allow_negative_numbers = true,
        long,
        default_value_t = 0,
        value_name = "N"
    )]
    pub threads: usize,
    /// Independent starts (qap `2opt` default 64, qap `tabu` default 1), or walks (pfsp `ig`,
    /// hwsw `sts`, default 1), run in parallel on --threads; the best is kept. Under
    /// --time-limit alone (no --iterations) the default is one per worker thread where that is
    /// more.
    #[arg(allow_negative_numbers = true, long, value_name = "N")]
    pub starts: Option<usize>,
    /// Tabu tenure in iterations (pfsp `tabu`; qap GPU `tabu`); tabu list length (hwsw `sts`
    /// and its GPU variants, default 20); GPU pfsp ig-grid: tabu steps a moved job stays tabu
    /// (default 7).
    #[arg(allow_negative_numbers = true, long, value_name = "N")]
    pub tenure: Option<usize>,
    /// GPU pfsp ig-grid: after each local optimum, keep taking the best non-tabu move
    /// (improving or not) until N steps in a row find no better sequence (default 0: none).
    #[arg(allow_negative_numbers = true, long, value_name = "N")]
    pub tabu_steps: Option<usize>,
    /// GPU pfsp ig-block, ig-grid: start the walks from the best sequences of an iterative
    /// bidirectional beam search of widths 1024, 2048, ... up to W, run before the walks within
    /// a fifth of the time limit; 0: from NEH. Default `auto`: under a time limit up to 2^20
    /// nodes (fewer where a quarter of the GPU's memory does not hold them), else from NEH.
    #[arg(long, value_name = "W|auto")]
    pub beam: Option<String>,
    /// GPU pfsp with --beam: weight of the machines' idle time in the beam's guide, in tenths
    /// of the bound's (default 0).
    #[arg(allow_negative_numbers = true, long, value_name = "W10")]
    pub beam_idle_weight: Option<usize>,
    /// Jobs removed per destruction step (pfsp `ig`, default 4).
    #[arg(allow_negative_numbers = true, long, value_name = "D")]
    pub destruction: Option<usize>,
    /// Temperature factor T of the acceptance rule (pfsp `ig`, default 0.4).
    #[arg(allow_negative_numbers = true, long, value_name = "T")]
    pub temperature: Option<f64>,
    /// Ants per iteration (tsp `as`, default one per city; `mmas` 25 on the CPU, 256 on the GPU;
    /// `focused` 32 on the CPU, 1024 on the GPU).
    #[arg(allow_negative_numbers = true, long, value_name = "M")]
    pub ants: Option<usize>,
    /// Pheromone exponent alpha (tsp `as`/`mmas`/`focused`, default 1).
    #[arg(allow_negative_numbers = true, long, value_name = "A")]
    pub alpha: Option<f64>,
    /// Heuristic exponent beta (tsp `as`/`mmas`/`focused`, default 2).
    #[arg(allow_negative_numbers = true, long, value_name = "B")]
    pub beta: Option<f64>,
    /// Evaporation rate rho (tsp `as` default 0.5, `mmas` 0.2, `focused` 0.1).
    #[arg(allow_negative_numbers = true, long, value_name = "R")]
    pub rho: Option<f64>,
    /// Candidate list length (tsp `as` default 32, `mmas` 20, `focused` 16).
    #[arg(allow_negative_numbers = true, long, value_name = "K")]
    pub candidates: Option<usize>,
    /// List entries the local search tries per city (tsp `focused`, default 10).
    #[arg(allow_negative_numbers = true, long, value_name = "K")]
    pub ls_neighbours: Option<usize>,
    /// New edges each ant makes before it copies the rest of its source tour (tsp `focused`,
    /// default 8).
    #[arg(allow_negative_numbers = true, long, value_name = "E")]
    pub min_new_edges: Option<usize>,
    /// Each ant's source tour (tsp `focused`): `iteration` (the tour that deposited last,
    /// default), `best` (the best so far) or `own` (the ant's previous tour).
    #[arg(long, value_name = "RULE")]
    pub source_tour: Option<String>,
    /// Or-opt after 2-opt (tsp `focused`): `on` (default) or `off`.
    #[arg(long, value_name = "on|off")]
    pub or_opt: Option<String>,
    /// Candidate lists (tsp `focused`, CPU and GPU): `nearest` (the k nearest cities),
    /// `quadrant` (the k / 4 nearest in each quadrant around the city, then the nearest) or
    /// `auto` (default: quadrant lists where the instance's layout is clustered).
    #[arg(long, value_name = "RULE")]
    pub lists: Option<String>,
    /// Restarts of the CPU robust tabu search (qap `tabu`): `on` (iterated, what each GPU
    /// rots-block block runs: tenure 0.4-0.8 n, no long-term aspiration, a restart from the
    /// best after 50 n iterations without improving; the default where the flow dominance is
    /// below 200, e.g. tai*a) or `off` (Taillard's settings: tenure 0.9-1.1 n, aspiration
    /// 2 n^2, one trajectory; the default at 200 and above, e.g. tai*b).
    #[arg(long, value_name = "on|off")]
    pub restarts: Option<String>,
    /// Merge the changes of every improving ant whose stretch of the source tour no better
    /// ant touched, instead of keeping only the iteration's best (tsp `focused` on the GPU):
    /// `on` or `off` (default).
    #[arg(long, value_name = "on|off")]
    pub merge: Option<String>,
    /// Tour construction on the GPU (tsp `as` with --backend gpu): task (one ant per
    /// thread), data (one ant per warp; default) or data-compressed.
    #[arg(long, value_name = "VARIANT")]
    pub construction: Option<String>,
    /// Pheromone update on the GPU (tsp `as` with --backend gpu): atomic (default) or gather.
    #[arg(long, value_name = "VARIANT")]
    pub pheromone: Option<String>,
    /// Print one JSON object instead of text (fields documented in docs/json.md).
    #[arg(long)]
    pub json: bool,
}

/// Where `mats solve` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    Cpu,
    Gpu,
}

impl Backend {
    /// As bundles and `--json` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
        }
    }
}

impl SolveArgs {
    /// `--backend`, or the CPU where it was not given.
    pub fn backend(&self) -> Backend {
        self.backend.unwrap_or(Backend::Cpu)
    }
}

#[derive(Debug, Subcommand)]
pub enum InstanceCommand {
    /// Print an instance's family, size, features, dataset class and best-known value.
    Info(InfoArgs),
    /// Generate an instance (Taillard-style uniform QAP; Taillard's 1993 flowshop generator;
    /// Hou et al.'s HW/SW task graphs; uniform random TSP).
    #[command(subcommand)]
    Generate(GenerateCommand),
    /// Reference values (best-known costs) of HW/SW task graphs, which have no published ones:
    /// the best over seeds of a long 1-flip and swap tabu search, an earlier table's value, or
    /// a re-scored `mats solve --json` answer, whichever is lowest, as a best-known table (CSV).
    Reference(ReferenceArgs),
    /// Check a solution found elsewhere (another solver, a paper, `mats solve`) and print its
    /// exact objective and gap to the best known value.
    Score(ScoreArgs),
}

#[derive(Debug, Args)]
pub struct ScoreArgs {
    #[command(flatten)]
    pub source: InstanceSource,
    /// File holding the solution, `-` for standard input: the values separated by spaces,
    /// commas or newlines, optionally in brackets (a `--json` array) or after the word
    /// `solution` (the line `mats solve` prints). Permutations are 1-based unless
    /// --zero-based; HW/SW solutions are the 0/1 values x_i (1 = software). A QAPLIB `.sln`
    /// file (`n cost`, then the permutation) is read in the convention that scores its cost;
    /// a TSPLIB `.tour` file (`TOUR_SECTION`) as TSPLIB writes it; a whole `mats solve
    /// --json` answer by its `solution` (refused where it names another instance or states an
    /// objective its solution does not score).
    #[arg(long, value_name = "FILE")]
    pub solution: PathBuf,
    /// The permutation is 0-based (QAP, PFSP, TSP).
    #[arg(long)]
    pub zero_based: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReferenceArgs {
    /// HW/SW instance files.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Also every HW/SW graph a campaign generates (`generate`, `holdout_generate`) or lists.
    #[arg(long, value_name = "CAMPAIGN")]
    pub campaign: Option<PathBuf>,
    /// Independent searches per graph (seeds 1..=K); the best counts. 0 runs no search: the
    /// table then comes from --previous and --answers.
    #[arg(
        allow_negative_numbers = true,
        long,
        default_value_t = 4,
        value_name = "K"
    )]
    pub seeds: u64,
    /// Iterations of each search.
    #[arg(
        allow_negative_numbers = true,
        long,
        default_value_t = 200_000,
        value_name = "N"
    )]
    pub iterations: u64,
    /// An earlier reference table (`name,family,bks,optimal,method`): its value of a graph
    /// stands unless something here is lower, and its rows of other graphs are kept.
    #[arg(long, value_name = "TABLE")]
    pub previous: Option<PathBuf>,
    /// Answers of `mats solve --json` (files, or folders of `*.json` files) for the graphs
    /// given: each solution is re-scored here and counts where it beats the other sources (a
    /// GPU solver can find lower costs than the reference search). Repeatable.
    #[arg(long, value_name = "PATH")]
    pub answers: Vec<PathBuf>,
    /// Write the table to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub source: InstanceSource,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum GenerateCommand {
    /// A flowshop instance in Taillard's format; seeds of ta001-ta120 reproduce them exactly.
    Pfsp(GeneratePfspArgs),
    /// A synthetic HW/SW partitioning task graph (Hou et al., after Arato et al.).
    Hwsw(GenerateHwswArgs),
    /// A Taillard-style QAP instance (flows and distances uniform in 0..=99, symmetric, like
    /// tai*a) in QAPLIB's .dat format; the same seed gives the same instance.
    Qap(GenerateQapArgs),
    /// A uniform random TSP (TSPLIB EUC_2D, integer coordinates in a 10^6 x 10^6 square).
    Tsp(GenerateTspArgs),
}

#[derive(Debug, Args)]
pub struct GenerateQapArgs {
    /// Instance size n (2..=4096; the GPU solves up to 512).
    #[arg(allow_negative_numbers = true, long, value_name = "N")]
    pub n: usize,
    /// Random seed.
    #[arg(allow_negative_numbers = true, long, value_name = "S")]
    pub seed: u64,
    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct GenerateTspArgs {
    /// Number of cities (3 ..= 1,000,000).
    #[arg(allow_negative_numbers = true, long, value_name = "N")]
    pub n: usize,
    /// Random seed (the same seed gives the same file).
    #[arg(allow_negative_numbers = true, long, value_name = "S")]
    pub seed: u64,
    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct GenerateHwswArgs {
    /// Number of nodes n (at least 2).
    #[arg(allow_negative_numbers = true, long, value_name = "N")]
    pub nodes: usize,
    /// Number of edges m (at most n (n - 1) / 2).
    #[arg(allow_negative_numbers = true, long, value_name = "M")]
    pub edges: usize,
    /// Communication-to-computation ratio rho (the paper: 0.1, 1, 10).
    #[arg(allow_negative_numbers = true, long, value_name = "R")]
    pub ccr: f64,
    /// Constraint level: `low` (R in [0, sum s / 2]) or `high` (R in [sum s / 2, sum s]).
    #[arg(long, value_name = "LEVEL")]
    pub r_level: solvers::hwsw::RLevel,
    /// Random seed.
    #[arg(allow_negative_numbers = true, long, value_name = "S")]
    pub seed: u64,
    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct GeneratePfspArgs {
    /// Number of jobs.
    #[arg(allow_negative_numbers = true, long, value_name = "N")]
    pub jobs: usize,
    /// Number of machines.
    #[arg(allow_negative_numbers = true, long, value_name = "M")]
    pub machines: usize,
    /// Taillard time seed (1 ..= 2^31-2), e.g. 873654221 for ta001.
    #[arg(allow_negative_numbers = true, long, value_name = "S")]
    pub seed: i64,
    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum SpaceCommand {
    /// Print a space's parameters, constants, constraints and number of valid points.
    Show(SpaceShowArgs),
}

#[derive(Debug, Args)]
pub struct SpaceShowArgs {
    /// Space file (e.g. spaces/qap.toml).
    pub file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

// ---- shards, the daemon and its clients

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Output campaign folder (created; may already hold results of the same campaign).
    pub out: PathBuf,
    /// Shard folders (each holds results.sqlite).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Print what was merged as JSON.
    #[arg(long)]
    pub json: bool,
}

/// How a client reaches the daemon.
#[derive(Debug, Clone, Args)]
pub struct DaemonAddress {
    /// The daemon's Unix socket (default: $MATS_DAEMON_SOCKET, else
    /// $XDG_RUNTIME_DIR/mats/daemon.sock, else ~/.cache/mats/daemon.sock).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Reach a daemon started with `--listen` at HOST:PORT instead (needs --token-file).
    #[arg(long, value_name = "HOST:PORT", requires = "token_file")]
    pub connect: Option<String>,
    /// File holding the daemon's token (with --connect).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}

impl DaemonAddress {
    pub fn to_address(&self) -> daemon::client::DaemonAddress {
        daemon::client::DaemonAddress {
            socket: self.socket.clone(),
            connect: self.connect.clone(),
            token_file: self.token_file.clone(),
        }
    }
}

#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// Unix socket to listen on (default as for the clients' --socket).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Folder of the queue (queue.sqlite) and the campaigns' logs (default: $MATS_STATE_DIR,
    /// else ~/.cache/mats/daemon).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Campaigns run at once; they share the GPUs trial by trial.
    #[arg(allow_negative_numbers = true, long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: u32,
    /// Also listen on TCP (e.g. 127.0.0.1:7878); every request must carry the token.
    #[arg(long, value_name = "ADDR", requires = "token_file")]
    pub listen: Option<String>,
    /// File holding the token for --listen (at least 16 characters).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}

impl DaemonArgs {
    pub fn to_options(&self) -> daemon::ServeOptions {
        daemon::ServeOptions {
            socket: self.socket.clone(),
            state_dir: self.state_dir.clone(),
            jobs: self.jobs as usize,
            listen: self.listen.clone(),
            token_file: self.token_file.clone(),
        }
    }
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// Campaign file.
    pub campaign: PathBuf,
    /// Output folder (default: the campaign's `output`, else runs/<name>, relative to here).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Higher runs first (ties: first submitted first).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub priority: i64,
    /// Continue the campaign in an output folder that already holds its results (one that
    /// was cancelled, failed, or ran in the foreground) instead of refusing the folder.
    #[arg(long)]
    pub resume: bool,
    #[command(flatten)]
    pub daemon: DaemonAddress,
    /// Print the reply as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// One campaign's id (default: the whole queue).
    pub id: Option<i64>,
    /// Print again every second until interrupted (or the campaign ends).
    #[arg(long)]
    pub watch: bool,
    #[command(flatten)]
    pub daemon: DaemonAddress,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CancelArgs {
    /// The campaign's id.
    pub id: i64,
    #[command(flatten)]
    pub daemon: DaemonAddress,
    /// Print the reply as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// The campaign's id.
    pub id: i64,
    /// Keep printing as the campaign writes, until it ends.
    #[arg(long)]
    pub follow: bool,
    #[command(flatten)]
    pub daemon: DaemonAddress,
}

#[derive(Debug, Args)]
pub struct BenchDaemonArgs {
    /// Submissions timed for submit-to-first-trial; also the rounds of the busy-share
    /// measurement, at most 3 (each runs three campaigns to their end).
    #[arg(allow_negative_numbers = true, long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeats: u32,
    /// Campaigns queued while `status` is timed.
    #[arg(allow_negative_numbers = true, long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub queued: u32,
    /// `status` requests timed (and as many `mats status --json` processes, at most 20).
    #[arg(allow_negative_numbers = true, long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=100000))]
    pub requests: u32,
    /// The repository (its data/qap instances and spaces/qap-cpu.toml).
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// Write every figure as JSON here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}
