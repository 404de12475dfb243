//! COLD: renders a `Report` for people (text, and the insight's sentences) and for programs
//! (JSON, CSV), and writes it where the user asked. No sockets, no clock.

mod baseline;
mod colour;
mod csv;
mod describe;
mod document;
pub mod frame;
mod hlog;
mod html;
mod insight;
mod json;
mod latency;
mod limits;
mod mcp;
pub mod merge;
pub mod save;
mod stages;
mod streaming;
pub mod sweep;
mod text;
mod timing;
pub mod versus;
pub mod wrk;

use std::io::{self, Write};
use std::path::PathBuf;

pub use crate::numbers::{bytes, count, counted, millis, per_second};
pub use colour::Palette;
pub use csv::{
    COLUMNS as CSV_COLUMNS, STAGE_COLUMNS, TIMELINE_COLUMNS, stages_csv, timeline_csv,
    timeline_header, to_csv,
};
pub use describe::plan_words;
pub use document::{Report, ReportOptions};
pub use hlog::hdr_log;
pub use html::{compare_page, embedded_json, merge_page, sweep_page, to_html};
pub use insight::{sentence, sentences};
pub use json::to_json;
pub use text::render;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Csv,
    /// `spate wrk`: wrk's text layout, which the caller prints from the run itself
    /// (`wrk::render`: it needs each thread's rates); `latency`: with `--latency`'s lines.
    Wrk {
        latency: bool,
    },
}

/// The format `--save PATH` writes: CSV for a name ending in `.csv`, JSON otherwise.
pub fn saved_format(path: &std::path::Path) -> Format {
    match path.extension() {
        Some(e) if e.eq_ignore_ascii_case("csv") => Format::Csv,
        _ => Format::Json,
    }
}

/// Where the result goes: `format` on stdout, and the JSON (or CSV, by its name) to `save`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub format: Format,
    pub save: Option<PathBuf>,
    /// `--csv-timeline`: the timeline as CSV, written as `save` is.
    pub csv_timeline: Option<PathBuf>,
    /// `--csv-stages`: a --stages run's rows as CSV, written as `save` is.
    pub csv_stages: Option<PathBuf>,
    /// `--html`: the report as a self-contained page.
    pub html: Option<PathBuf>,
    /// `--hdr-log`: the latencies of each second as an HdrHistogram interval log.
    pub hdr_log: Option<PathBuf>,
    /// `--no-color`: never colour, even on a terminal.
    pub no_color: bool,
    /// `--log-result`: the JSON result on stdout too, after the report, between marker lines.
    pub log_result: bool,
    /// The report is printed on stdout (not when `--live-json -` has stdout).
    pub print: bool,
}

/// An output that could not be written, named for the person who asked for it.
#[derive(Debug)]
pub struct OutputError {
    /// What failed: "--save r.json" or "stdout".
    pub what: String,
    pub source: io::Error,
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.what.as_str() {
            "stdout" => write!(f, "cannot write the report to stdout: {}", self.source),
            what => write!(f, "{what}: {}", self.source),
        }
    }
}

/// Saves the JSON if asked, then writes the report to stdout: each is tried whatever became of
/// the other, so a full disk under stdout does not cost the saved result. A closed stdout
/// (`| head`) is not an error. Returns every output that failed.
pub fn emit(summary: &Report, output: &Output) -> Vec<OutputError> {
    let mut failed = Vec::new();
    let json = to_json(summary) + "\n";
    if let Some(path) = &output.save
        && let Err(e) = save::write(
            path,
            match saved_format(path) {
                Format::Csv => to_csv(summary),
                _ => json.clone(),
            }
            .as_bytes(),
        )
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        failed.push(OutputError {
            what: format!("--save {}", path.display()),
            source: e,
        });
    }
    type Form = fn(&Report) -> String;
    let extra: [(&str, &Option<PathBuf>, Form); 4] = [
        ("--csv-timeline", &output.csv_timeline, |r| timeline_csv(r)),
        ("--csv-stages", &output.csv_stages, |r| stages_csv(r)),
        ("--html", &output.html, to_html),
        ("--hdr-log", &output.hdr_log, |r| hdr_log(r)),
    ];
    for (flag, path, form) in extra {
        if let Some(path) = path
            && let Err(e) = save::write(path, form(summary).as_bytes())
            && e.kind() != io::ErrorKind::BrokenPipe
        {
            failed.push(OutputError {
                what: format!("{flag} {}", path.display()),
                source: e,
            });
        }
    }
    let mut body = match output.format {
        // A run that did not start has no report: the line on stderr says why.
        Format::Text if summary.error.is_some() => String::new(),
        Format::Text => {
            use std::io::IsTerminal;
            render(
                summary,
                Palette::detect(io::stdout().is_terminal(), output.no_color),
            )
        }
        Format::Json => json.clone(),
        Format::Csv => to_csv(summary),
        Format::Wrk { .. } => String::new(),
    };
    // Framed, the result can be found in a log that mixes other lines in, even one whose
    // every line has a prefix (`kubectl logs --prefix`).
    if output.log_result {
        body.push_str(&frame::frame(&json));
    }
    if body.is_empty() || !output.print {
        return failed;
    }
    let mut stdout = io::stdout().lock();
    if let Err(e) = stdout
        .write_all(body.as_bytes())
        .and_then(|()| stdout.flush())
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        failed.push(OutputError {
            what: "stdout".into(),
            source: e,
        });
    }
    failed
}
