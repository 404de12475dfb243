//! The flags of what is shown or written of a result (`OutputArgs`, `Forms`): a run's, and
//! `spate report`'s; parsed by clap, made into an `Output` and a `Show` by the cli's `mod`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::analysis::{Gates, SloSpec};

fn slo(s: &str) -> Result<SloSpec, String> {
    s.parse()
}

fn gates(s: &str) -> Result<Gates, String> {
    s.parse()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Text,
    Json,
    Csv,
}

#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Latency targets and CI thresholds, e.g. p50=20ms,p99=250ms,errors=1%,rps=5000. Each
    /// latency is named against its target (far under, under, near, over); every target is
    /// checked after the report (exit code 3 when one fails).
    #[arg(long = "slo", value_name = "TARGETS", value_parser = slo)]
    pub slo: Option<SloSpec>,

    /// Compare the run with this saved result (--save's JSON, or an --html page): the report
    /// ends with the change of each metric. Give it more than once to compare with the median
    /// of several runs.
    #[arg(long = "baseline", value_name = "FILE")]
    pub baseline: Vec<PathBuf>,

    /// With --baseline: how much worse than the baseline each metric may be, e.g.
    /// p99=10%,rps=5%,errors=1% (errors in percentage points). A gate that fails is a FAIL line
    /// and exit code 3.
    #[arg(long = "max-regression", value_name = "GATES", value_parser = gates)]
    pub max_regression: Option<Gates>,

    /// Bars in the latency histogram.
    #[arg(long = "hist-bins", value_name = "N", default_value_t = 11, value_parser = clap::value_parser!(u16).range(1..=200))]
    pub hist_bins: u16,

    /// No live progress on stderr.
    #[arg(long = "no-progress")]
    pub no_progress: bool,

    #[command(flatten)]
    pub forms: Forms,

    /// Write one JSON line per second of the measured window while the run goes (the
    /// timeline's entry, flushed as soon as every load thread has closed that second). - is
    /// stdout, where the report is then not printed: keep it with --save or --html.
    #[arg(long = "live-json", value_name = "FILE")]
    pub live_json: Option<PathBuf>,

    /// Serve the run's metrics for Prometheus at http://ADDR/metrics while it goes (a port
    /// alone: on 127.0.0.1), then until one scrape has seen the run over (--metrics-linger).
    #[arg(long = "metrics-listen", value_name = "ADDR")]
    pub metrics_listen: Option<String>,

    /// After the run, how long the metrics endpoint waits for the scrape that sees it over.
    #[arg(long = "metrics-linger", value_name = "TIME", default_value = "5s", value_parser = super::values::duration)]
    pub metrics_linger: std::time::Duration,

    /// Also write the latencies as an HdrHistogram interval log (.hlog): one histogram per second
    /// of the measured window, readable by HistogramLogProcessor and the HdrHistogram libraries.
    #[arg(long = "hdr-log", value_name = "FILE")]
    pub hdr_log: Option<PathBuf>,
}

/// What is shown or written of a result, the same for a run and for `spate report`.
#[derive(Debug, Args)]
pub struct Forms {
    /// Never colour the report (NO_COLOR is honoured too).
    #[arg(long = "no-color")]
    pub no_color: bool,

    /// Report format on stdout (csv: a header and one row of headline figures).
    #[arg(long = "format", value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// Also write the result to this file, before the report: CSV if its name ends in .csv,
    /// JSON otherwise. A regular file is replaced atomically (through symlinks), anything else
    /// (/dev/stdout, a FIFO) written as it is.
    #[arg(long = "save", value_name = "FILE")]
    pub save: Option<PathBuf>,

    /// Also write the timeline to this file as CSV: one row per second of the measured window
    /// (columns in docs/USAGE.md), written as --save writes.
    #[arg(long = "csv-timeline", value_name = "FILE")]
    pub csv_timeline: Option<PathBuf>,

    /// Also write a --stages run's rows to this file as CSV: one per stage (its target, what its
    /// seconds scheduled, sent and completed, its rate, p50 to max), written as --save writes.
    #[arg(long = "csv-stages", value_name = "FILE")]
    pub csv_stages: Option<PathBuf>,

    /// Also write the report as one self-contained HTML page (charts over time, percentiles,
    /// the insight; the JSON inside), written as --save writes. It loads nothing and runs no
    /// script, so it opens offline and can be mailed or archived.
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<PathBuf>,
}
