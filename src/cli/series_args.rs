//! The flags of the commands that make a series of runs, `spate compare` and `spate sweep`:
//! parsed by clap into these structs, checked and made into plans elsewhere.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::args::{LoadArgs, McpCallArgs};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareOrder {
    Given,
    Random,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Text,
    Markdown,
    Json,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Targets to compare, at least two: URL, or NAME=URL to name it in the table.
    #[arg(value_name = "TARGET", required_unless_present = "targets_file")]
    pub targets: Vec<String>,

    /// More targets from a file, one a line after those on the command line: URL or NAME=URL,
    /// then load flags for that target alone (they replace the common ones; -H adds a header).
    /// Words are split as a shell does; '#' starts a comment line.
    #[arg(long = "targets", value_name = "FILE")]
    pub targets_file: Option<PathBuf>,

    #[command(flatten)]
    pub load: LoadArgs,

    /// Rounds: each target runs once per round.
    #[arg(long = "rounds", value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u16).range(2..=60))]
    pub rounds: u16,

    /// The order of the targets in each round: as given (A, B, A, B ...), or random, shuffled
    /// anew each round so that a drift of the machine falls on no target in particular.
    #[arg(long = "order", value_enum, default_value_t = CompareOrder::Given)]
    pub order: CompareOrder,

    /// With --order random: the seed of the shuffle, to repeat an order [default: from the
    /// clock, printed].
    #[arg(long = "seed", value_name = "N")]
    pub seed: Option<u64>,

    /// The target the others are compared with (its name, or its URL) [default: the first].
    #[arg(long = "reference", value_name = "NAME")]
    pub reference: Option<String>,

    /// Significance level of the verdicts.
    #[arg(long = "alpha", value_name = "P", default_value_t = 0.05, value_parser = alpha)]
    pub alpha: f64,

    /// Changes smaller than this are no difference, however small p is.
    #[arg(long = "noise", value_name = "PERCENT", default_value = "2%", value_parser = noise)]
    pub noise: f64,

    /// text, markdown (a table to paste) or json (docs/compare-schema.json).
    #[arg(long = "format", value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,

    /// Also write the comparison as one self-contained HTML page: the table, the targets'
    /// latency by percentile overlaid, and each round by target.
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Also write each round's JSON result to this directory, as NAME-ROUND.json.
    #[arg(long = "save-dir", value_name = "DIR")]
    pub save_dir: Option<PathBuf>,

    /// No line on stderr after each run.
    #[arg(long = "no-progress")]
    pub no_progress: bool,

    /// The calls of `spate mcp`: with any of them, each target is an MCP server's endpoint.
    #[command(flatten, next_help_heading = "MCP calls (each target an MCP server)")]
    pub mcp: McpCallArgs,
}

fn alpha(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|a| *a > 0.0 && *a < 1.0)
        .ok_or_else(|| format!("{s:?} is not a probability between 0 and 1, e.g. 0.05"))
}

fn noise(s: &str) -> Result<f64, String> {
    s.strip_suffix('%')
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| (0.0..100.0).contains(v))
        .map(|v| v / 100.0)
        .ok_or_else(|| format!("{s:?} is not a percentage such as 2%"))
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// URL to load at each level.
    #[arg(value_name = "URL")]
    pub url: String,

    /// The concurrency levels: a list (10,50,100,500), a range in steps of 1, 2 and 5 a decade
    /// (10..1000: 10,20,50,100,200,500,1000), or a range of N levels spaced evenly on a log
    /// scale (1..1024:11).
    #[arg(long = "conc", value_name = "LEVELS", required = true, value_parser = super::values::levels)]
    pub conc: super::values::Levels,

    /// A reference URL run at each level as well (alternately), to show the overhead of the
    /// target against it: a proxy against the server behind it.
    #[arg(long = "vs", value_name = "URL")]
    pub vs: Option<String>,

    #[command(flatten)]
    pub load: LoadArgs,

    /// text, markdown (a table to paste) or json (docs/sweep-schema.json).
    #[arg(long = "format", value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,

    /// Also write the sweep as one self-contained HTML page: the levels, and the rate and the
    /// latency by connections.
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Also write each run's JSON result to this directory, as c-LEVEL.json (and vs-LEVEL.json).
    #[arg(long = "save-dir", value_name = "DIR")]
    pub save_dir: Option<PathBuf>,

    /// No line on stderr after each run.
    #[arg(long = "no-progress")]
    pub no_progress: bool,
}
