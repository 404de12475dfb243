//! `spate merge`: the shards' saved results, read and checked to be results this spate writes,
//! and how to show the job's. Merging them is `crate::merge`'s; runs nothing.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::report::{RESULT_LIMIT, parse_result};
use super::{Command, Exit};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MergeFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' results (--shard with --format json or --save), e.g. shard-*.json.
    #[arg(value_name = "RESULT.json", required = true)]
    pub files: Vec<PathBuf>,

    /// text, or json (docs/merge-schema.json).
    #[arg(long = "format", value_enum, default_value_t = MergeFormat::Text)]
    pub format: MergeFormat,

    /// Also write the job's result as one self-contained HTML page: the summary, the job's
    /// latency by percentile with each shard's, its seconds, and the shards.
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Merge even results of different jobs, a missing or repeated shard, a shard that did
    /// not run (left out), or results that are not shards'; each is a warning in the result.
    #[arg(long = "force")]
    pub force: bool,

    /// Judge the job on these targets (as a run's --slo) instead of those the shards recorded;
    /// a failed one is exit code 3.
    #[arg(long = "slo", value_name = "TARGETS", value_parser = |s: &str| s.parse::<crate::analysis::SloSpec>())]
    pub slo: Option<crate::analysis::SloSpec>,
}

/// What `spate merge` merges and how it shows the result.
#[derive(Debug)]
pub struct Merge {
    /// Each result with the name of its file.
    pub runs: Vec<(String, crate::stats::Summary)>,
    pub force: bool,
    /// `--slo`: the targets to judge the job on, over the shards' own.
    pub slo: Option<crate::analysis::SloSpec>,
    pub json: bool,
    /// `--html`: the page, written here too.
    pub html: Option<PathBuf>,
}

pub(super) fn command(a: MergeArgs) -> Result<Command, Exit> {
    if let Some(path) = &a.html {
        crate::report::save::check(path).map_err(|e| {
            Exit::usage(format!(
                "merge: --html {}: cannot write there: {e}",
                path.display()
            ))
        })?;
    }
    let mut runs = Vec::with_capacity(a.files.len());
    for path in &a.files {
        let name = path.display().to_string();
        let bytes = crate::files::read("the result", path, RESULT_LIMIT).map_err(Exit::usage)?;
        let framed = std::str::from_utf8(&bytes)
            .ok()
            .map(crate::report::frame::unframe)
            .unwrap_or_default();
        if framed.is_empty() {
            let report =
                parse_result(&bytes).map_err(|e| Exit::usage(format!("merge: {name}: {e}")))?;
            runs.push((name, report.run));
            continue;
        }
        for (k, text) in framed.iter().enumerate() {
            let at = format!("{name} (result {})", k + 1);
            let report = parse_result(text.as_bytes())
                .map_err(|e| Exit::usage(format!("merge: {at}: {e}")))?;
            runs.push((at, report.run));
        }
    }
    Ok(Command::Merge(Merge {
        runs,
        force: a.force,
        slo: a.slo,
        json: a.format == MergeFormat::Json,
        html: a.html,
    }))
}
