//! The CSV forms of a `Summary`: a header and one row of headline figures, for spreadsheets and
//! for collecting many runs in one file; and the timeline, a row per second. The columns are a
//! stable contract (docs/USAGE.md): new ones are only ever added at the end.

use super::Report;
use crate::stats::{Failure, Summary};

/// The columns, in order.
pub const COLUMNS: [&str; 33] = [
    "spate_version",
    "url",
    "method",
    "protocol",
    "model",
    "connections",
    "threads",
    "elapsed_s",
    "requests_per_sec",
    "attempted",
    "completed",
    "successful",
    "error_status",
    "failed",
    "interrupted",
    "latency_min_ms",
    "latency_mean_ms",
    "latency_stdev_ms",
    "latency_p50_ms",
    "latency_p90_ms",
    "latency_p99_ms",
    "latency_p99_9_ms",
    "latency_p99_99_ms",
    "latency_max_ms",
    "bytes_in",
    "bytes_out",
    "rate_target",
    "rate_achieved",
    "slo_pass",
    "error_kind",
    "error_message",
    "retried",
    "redirects_followed",
];

/// A field as RFC 4180 writes it: quoted when it holds a comma, a quote or a line break, with
/// quotes doubled.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// A text cell (a URL, a method, an error message: from the command line, a server or a saved
/// file) as a spreadsheet shows it and never runs it: one that begins as a formula does (`=`,
/// `+`, `-`, `@`, a tab or a CR, or their full-width forms) gets a `'` in front, as OWASP's
/// guidance on CSV injection has it. Numbers are never text cells, so a negative one stays one.
fn text(s: &str) -> String {
    const FORMULA: [char; 10] = ['=', '+', '-', '@', '\t', '\r', '＝', '＋', '－', '＠'];
    match s.starts_with(FORMULA) {
        true => format!("'{s}"),
        false => s.to_owned(),
    }
}

/// A number as Rust prints it (shortest exact form); empty when there is none.
fn num(v: Option<f64>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

/// The header line and the run's line, each ended by CRLF as RFC 4180 has it.
pub fn to_csv(s: &Report) -> String {
    let l = &s.latency;
    let p = &l.percentiles;
    let r = &s.requests;
    let c = &s.config;
    let slo = match s.thresholds.is_empty() {
        true => String::new(),
        false => s.thresholds.iter().all(|v| v.pass).to_string(),
    };
    let row: [String; COLUMNS.len()] = [
        text(&s.spate_version),
        text(&c.url),
        text(&c.method),
        text(&c.protocol),
        text(&c.model),
        c.connections.to_string(),
        c.threads.to_string(),
        s.totals.elapsed_s.to_string(),
        s.totals.requests_per_sec.to_string(),
        r.attempted.to_string(),
        r.completed.to_string(),
        r.successful.to_string(),
        r.error_status.to_string(),
        r.failed.to_string(),
        r.interrupted.to_string(),
        num(l.min_ms),
        num(l.mean_ms),
        num(l.stdev_ms),
        num(p.p50),
        num(p.p90),
        num(p.p99),
        num(p.p99_9),
        num(p.p99_99),
        num(l.max_ms),
        s.totals.bytes_in.to_string(),
        s.totals.bytes_out.to_string(),
        num(s.open_model.as_ref().map(|o| o.rate_target)),
        num(s.open_model.as_ref().map(|o| o.rate_achieved)),
        slo,
        s.error.as_ref().map_or_else(String::new, |e| text(&e.kind)),
        s.error
            .as_ref()
            .map_or_else(String::new, |e| text(&e.message)),
        r.retried.to_string(),
        r.redirects_followed.to_string(),
    ];
    line(COLUMNS.iter().map(|c| (*c).to_owned())) + &line(row.into_iter())
}

/// One CSV line of `cells`, ended by CRLF as RFC 4180 has it.
fn line(cells: impl Iterator<Item = String>) -> String {
    cells.map(|c| field(&c)).collect::<Vec<_>>().join(",") + "\r\n"
}

/// The timeline's columns before the failures by class, which follow in the order of
/// `Failure::ALL` as `failed_<class>` (a new class adds a column at the end).
pub const TIMELINE_COLUMNS: [&str; 14] = [
    "t_s",
    "span_s",
    "completed",
    "failed",
    "bytes_in",
    "latency_p50_ms",
    "latency_p90_ms",
    "latency_p99_ms",
    "latency_max_ms",
    "connections_open",
    "sent",
    "scheduled",
    "dropped",
    "lag_p99_ms",
];

/// Columns added after the failure classes, in the order they were added, each with how many
/// classes had columns then: columns are only ever added at the end, so a column goes after the
/// classes before it, and a class added later after the columns before it.
pub const TIMELINE_LATER_COLUMNS: [(&str, usize); 2] =
    [("error_status", 18), ("target_connections", 18)];

/// The cells after `TIMELINE_COLUMNS` in their order: each class's (by `class`) and each later
/// column's (by `later`, given its place in `TIMELINE_LATER_COLUMNS`).
fn after_base<T>(class: impl Fn(&Failure) -> T, later: impl Fn(usize) -> T) -> Vec<T> {
    let mut out = Vec::new();
    let mut classes = 0;
    for (k, &(_, before)) in TIMELINE_LATER_COLUMNS.iter().enumerate() {
        out.extend(Failure::ALL[classes..before].iter().map(&class));
        out.push(later(k));
        classes = before;
    }
    out.extend(Failure::ALL[classes..].iter().map(&class));
    out
}

/// Every column of the timeline CSV, in order.
pub fn timeline_header() -> Vec<String> {
    let class = |f: &Failure| format!("failed_{}", f.name());
    let later = |k: usize| TIMELINE_LATER_COLUMNS[k].0.to_owned();
    TIMELINE_COLUMNS
        .iter()
        .map(|c| (*c).to_owned())
        .chain(after_base(class, later))
        .collect()
}

/// The header and a line per second of the timeline; open-model columns are empty in the
/// closed model, latencies in a second without a completed response.
pub fn timeline_csv(s: &Summary) -> String {
    let mut out = line(timeline_header().into_iter());
    for e in &s.timeline {
        let q = e.latency_ms;
        let cells = [
            e.t_s.to_string(),
            e.span_s.to_string(),
            e.completed.to_string(),
            e.failed.to_string(),
            e.bytes_in.to_string(),
            num(q.map(|q| q.p50)),
            num(q.map(|q| q.p90)),
            num(q.map(|q| q.p99)),
            num(q.map(|q| q.max)),
            e.connections_open.to_string(),
            e.sent.to_string(),
            e.scheduled.map_or_else(String::new, |n| n.to_string()),
            e.dropped.map_or_else(String::new, |n| n.to_string()),
            num(e.lag_p99_ms),
        ];
        let class = |f: &Failure| e.failures.get(f.name()).copied().unwrap_or(0).to_string();
        let later = [e.error_status.to_string(), num(e.target_connections)];
        out += &line(
            cells
                .into_iter()
                .chain(after_base(class, |k| later[k].clone())),
        );
    }
    out
}

/// The columns of `--csv-stages`, as the JSON's `stages` names them.
pub const STAGE_COLUMNS: [&str; 17] = [
    "stage",
    "start_s",
    "duration_s",
    "target_from",
    "target_to",
    "scheduled",
    "sent",
    "completed",
    "error_status",
    "failed",
    "achieved_rate",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "max_ms",
    "dropped",
    "lag_p99_ms",
];

/// The header and a line per stage of a --stages run (none without one); latencies empty in a
/// stage without a completed response.
pub fn stages_csv(s: &Summary) -> String {
    let mut out = line(STAGE_COLUMNS.iter().map(|c| (*c).to_owned()));
    for r in &s.stages {
        let q = r.latency_ms;
        out += &line(
            [
                r.stage.to_string(),
                r.start_s.to_string(),
                r.duration_s.to_string(),
                r.target_from.to_string(),
                r.target_to.to_string(),
                r.scheduled.map_or_else(String::new, |n| n.to_string()),
                r.sent.to_string(),
                r.completed.to_string(),
                r.error_status.to_string(),
                r.failed.to_string(),
                r.achieved_rate.to_string(),
                num(q.map(|q| q.p50)),
                num(q.map(|q| q.p90)),
                num(q.map(|q| q.p99)),
                num(q.map(|q| q.max)),
                r.dropped.map_or_else(String::new, |n| n.to_string()),
                num(r.lag_p99_ms),
            ]
            .into_iter(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_when_they_must_be() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        assert_eq!(num(None), "");
        assert_eq!(num(Some(0.25)), "0.25");
    }

    #[test]
    fn text_that_a_spreadsheet_would_run_is_shown_as_text() {
        for (cell, shown) in [
            (
                "=HYPERLINK(\"http://x\",\"y\")",
                "'=HYPERLINK(\"http://x\",\"y\")",
            ),
            ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("＝1+1", "'＝1+1"),
            ("http://a/=b", "http://a/=b"),
            ("GET", "GET"),
            ("", ""),
        ] {
            assert_eq!(text(cell), shown, "{cell:?}");
        }
    }

    /// The timeline's columns are a contract: only ever added at the end. This is the whole
    /// list; a new column or class goes last here too.
    #[test]
    fn the_timeline_columns_only_grow_at_the_end() {
        let want = "t_s,span_s,completed,failed,bytes_in,latency_p50_ms,latency_p90_ms,\
            latency_p99_ms,latency_max_ms,connections_open,sent,scheduled,dropped,lag_p99_ms,\
            failed_connect,failed_ports,failed_tls,failed_timeout,failed_read,failed_write,\
            failed_parse,failed_closed,failed_reset,failed_h2,failed_redirect,\
            failed_stream_truncated,failed_stream_idle,failed_tool_error,failed_jsonrpc_error,\
            failed_protocol,failed_session_expired,failed_h3,error_status,target_connections,\
            failed_grpc_cancelled,failed_grpc_unknown,failed_grpc_invalid_argument,\
            failed_grpc_deadline_exceeded,failed_grpc_not_found,failed_grpc_already_exists,\
            failed_grpc_permission_denied,failed_grpc_resource_exhausted,\
            failed_grpc_failed_precondition,failed_grpc_aborted,failed_grpc_out_of_range,\
            failed_grpc_unimplemented,failed_grpc_internal,failed_grpc_unavailable,\
            failed_grpc_data_loss,failed_grpc_unauthenticated";
        assert_eq!(timeline_header().join(","), want);
    }

    #[test]
    fn every_column_has_its_cell_and_the_last_ones_are_the_retries_and_redirects() {
        let plan = crate::plan::Plan::new(crate::target::Target::parse("http://a/").unwrap());
        let run = crate::stats::RunOutput::empty(1);
        let mut s = Summary::new(&plan, &run, crate::stats::HISTOGRAM_BINS);
        s.requests.retried = 3;
        s.requests.redirects_followed = 7;
        let r = Report::of(s, &Default::default());
        let csv = to_csv(&r);
        let lines: Vec<&str> = csv.split("\r\n").collect();
        let (head, row) = (lines[0], lines[1]);
        assert_eq!(head.split(',').count(), COLUMNS.len());
        assert_eq!(row.split(',').count(), COLUMNS.len());
        assert!(head.ends_with(",retried,redirects_followed"), "{head}");
        assert!(row.ends_with(",3,7"), "{row}");
    }
}
