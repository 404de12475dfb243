//! `spate merge`: the shards' saved results, read and checked to be results this spate writes,
//! and how to show the job's. Merging them is `crate::merge`'s; runs nothing.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::report::{RESULT_LIMIT, parse_result};
use super::{Command, Exit, files};

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
}

/// What `spate merge` merges and how it shows the result.
#[derive(Debug)]
pub struct Merge {
    /// Each result with the name of its file.
    pub runs: Vec<(String, crate::stats::Summary)>,
    pub force: bool,
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
        let bytes = files::read("the result", path, RESULT_LIMIT).map_err(Exit::usage)?;
        let framed = std::str::from_utf8(&bytes)
            .ok()
            .map(framed)
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
        json: a.format == MergeFormat::Json,
        html: a.html,
    }))
}

/// The results `--log-result` framed in a log, in the order they end: the lines between each
/// begin marker and its end, taking only the lines with the begin marker's prefix, without
/// it. `kubectl logs --prefix` names each line's pod, and the pods' lines interleave.
fn framed(log: &str) -> Vec<String> {
    use crate::report::{RESULT_BEGIN, RESULT_END};
    let mut out = Vec::new();
    // The results under way: each one's prefix and its text so far.
    let mut open: Vec<(&str, String)> = Vec::new();
    for line in log.lines() {
        if let Some(at) = line.find(RESULT_BEGIN) {
            let prefix = &line[..at];
            open.retain(|(p, _)| *p != prefix);
            open.push((prefix, String::new()));
            continue;
        }
        // The longest prefix the line has: a pod's own, before one of none.
        let Some(k) = (0..open.len())
            .filter(|&k| line.starts_with(open[k].0))
            .max_by_key(|&k| open[k].0.len())
        else {
            continue;
        };
        let rest = &line[open[k].0.len()..];
        if rest == RESULT_END {
            out.push(open.remove(k).1);
        } else {
            open[k].1.push_str(rest);
            open[k].1.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framed_results_are_found_among_other_lines_and_prefixes() {
        let log = "\
spate: shard 0/2: 1 of 2 connections
-----BEGIN SPATE RESULT-----
{\"a\": 1}
-----END SPATE RESULT-----
[pod/x-0] -----BEGIN SPATE RESULT-----
[pod/x-1] -----BEGIN SPATE RESULT-----
[pod/x-0] {\"b\":
[pod/x-1] {\"c\": 3}
[pod/x-1] -----END SPATE RESULT-----
[pod/x-0] 2}
[pod/x-0] -----END SPATE RESULT-----
-----BEGIN SPATE RESULT-----
{\"cut\": short
";
        assert_eq!(
            framed(log),
            ["{\"a\": 1}\n", "{\"c\": 3}\n", "{\"b\":\n2}\n"]
        );
        assert!(framed("{}").is_empty());
    }
}
