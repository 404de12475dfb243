//! The metrics of a run in Prometheus's text exposition format (version 0.0.4): what the
//! endpoint answers a scrape with. Every series carries the run's labels (`run_id`, and
//! `shard` for a part of a job), so that the shards of a job scraped together add up. Label
//! values are escaped as the format asks; no header, body or URL of the run is in them.

use std::fmt::Write as _;

use crate::stats::Failure;
use crate::stats::running::{BOUNDS_NS, Buckets, Running};

/// The content type of the format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The labels every series of a run has, already written as `name="value",...`, and the
/// names of a request list's rows.
#[derive(Debug, Clone)]
pub struct Labels {
    common: String,
    rows: Vec<String>,
}

impl Labels {
    /// `run_id`, and `shard` (`I/N`, as --shard names it) for a part of a job.
    pub fn new(run_id: &str, shard: Option<(u32, u32)>) -> Labels {
        let mut common = format!("run_id=\"{}\"", escaped(run_id));
        if let Some((i, n)) = shard {
            let _ = write!(common, ",shard=\"{i}/{n}\"");
        }
        Labels {
            common,
            rows: Vec::new(),
        }
    }

    /// `spate grpc`: the method, a label of every series (`call`).
    pub fn with_call(mut self, call: &str) -> Labels {
        let _ = write!(self.common, ",call=\"{}\"", escaped(call));
        self
    }

    /// A request list's rows, by name (the `request` label of the per-request series).
    pub fn with_rows(mut self, rows: Vec<String>) -> Labels {
        self.rows = rows;
        self
    }
}

/// A label value as the format has it: backslash, double quote and line feed escaped.
fn escaped(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The status classes, by `stats::status_class`'s index.
const CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

/// The scrape's body.
pub fn text(r: &Running, labels: &Labels) -> String {
    let l = &labels.common;
    let mut o = String::new();
    let head = |o: &mut String, name: &str, kind: &str, help: &str| {
        let _ = writeln!(o, "# HELP {name} {help}");
        let _ = writeln!(o, "# TYPE {name} {kind}");
    };
    head(
        &mut o,
        "spate_requests_sent_total",
        "counter",
        "Requests sent (attempts admitted) in the measured window.",
    );
    let _ = writeln!(o, "spate_requests_sent_total{{{l}}} {}", r.sent);
    head(
        &mut o,
        "spate_responses_total",
        "counter",
        "Responses completed, by status class.",
    );
    for (class, n) in CLASSES.iter().zip(r.classes) {
        let _ = writeln!(
            o,
            "spate_responses_total{{{l},status_class=\"{class}\"}} {n}"
        );
    }
    head(
        &mut o,
        "spate_requests_failed_total",
        "counter",
        "Requests that failed without a response, by failure class.",
    );
    for (f, n) in Failure::ALL.iter().zip(r.failures) {
        let _ = writeln!(
            o,
            "spate_requests_failed_total{{{l},class=\"{}\"}} {n}",
            f.name()
        );
    }
    if !labels.rows.is_empty() {
        head(
            &mut o,
            "spate_request_responses_total",
            "counter",
            "A request list's responses completed, by its request (a URL, an MCP tool, a gRPC message's place).",
        );
        for (name, row) in rows(labels, r) {
            let _ = writeln!(
                o,
                "spate_request_responses_total{{{l},request=\"{}\"}} {}",
                escaped(name),
                row[0]
            );
        }
        head(
            &mut o,
            "spate_request_failures_total",
            "counter",
            "A request list's requests that failed, by its request.",
        );
        for (name, row) in rows(labels, r) {
            let _ = writeln!(
                o,
                "spate_request_failures_total{{{l},request=\"{}\"}} {}",
                escaped(name),
                row[1]
            );
        }
    }
    head(
        &mut o,
        "spate_bytes_received_total",
        "counter",
        "Bytes received.",
    );
    let _ = writeln!(o, "spate_bytes_received_total{{{l}}} {}", r.bytes_in);
    head(
        &mut o,
        "spate_request_duration_seconds",
        "histogram",
        "Latency of completed responses: from the request's start (its intended time in the open model) to its last byte.",
    );
    histogram(&mut o, "spate_request_duration_seconds", l, &r.latency);
    if r.target_rate.is_some() || r.lag.total() > 0 {
        head(
            &mut o,
            "spate_send_lag_seconds",
            "histogram",
            "Open model: how late each request was sent after its intended time.",
        );
        histogram(&mut o, "spate_send_lag_seconds", l, &r.lag);
    }
    head(
        &mut o,
        "spate_connections_open",
        "gauge",
        "Connections open at the end of the last closed second.",
    );
    let _ = writeln!(o, "spate_connections_open{{{l}}} {}", r.open);
    if let Some(rate) = r.target_rate {
        head(
            &mut o,
            "spate_target_rate",
            "gauge",
            "Open model: requests due per second in the last closed second.",
        );
        let _ = writeln!(o, "spate_target_rate{{{l}}} {}", number(rate));
    }
    if let Some(c) = r.target_connections {
        head(
            &mut o,
            "spate_target_connections",
            "gauge",
            "A connection profile (--stages): its target over the last closed second.",
        );
        let _ = writeln!(o, "spate_target_connections{{{l}}} {}", number(c));
    }
    head(
        &mut o,
        "spate_run_seconds",
        "gauge",
        "Seconds of the measured window closed so far.",
    );
    let _ = writeln!(o, "spate_run_seconds{{{l}}} {}", r.seconds);
    head(
        &mut o,
        "spate_run_over",
        "gauge",
        "1 once the run is over and every figure is the report's.",
    );
    let _ = writeln!(o, "spate_run_over{{{l}}} {}", u8::from(r.over));
    o
}

/// Each named row and its figures (0 before the first is recorded).
fn rows<'a>(labels: &'a Labels, r: &Running) -> impl Iterator<Item = (&'a str, [u64; 2])> {
    let figures: Vec<[u64; 2]> = (0..labels.rows.len())
        .map(|i| r.rows.get(i).copied().unwrap_or_default())
        .collect();
    labels.rows.iter().map(String::as_str).zip(figures)
}

/// A histogram's buckets (cumulative, in seconds), sum and count.
fn histogram(o: &mut String, name: &str, l: &str, b: &Buckets) {
    let mut below = 0;
    for (bound, n) in BOUNDS_NS.iter().zip(b.counts) {
        below += n;
        let _ = writeln!(
            o,
            "{name}_bucket{{{l},le=\"{}\"}} {below}",
            number(*bound as f64 / 1e9)
        );
    }
    let total = b.total();
    let _ = writeln!(o, "{name}_bucket{{{l},le=\"+Inf\"}} {total}");
    let _ = writeln!(o, "{name}_sum{{{l}}} {}", number(b.sum_ns as f64 / 1e9));
    let _ = writeln!(o, "{name}_count{{{l}}} {total}");
}

/// A float as the format reads it: the shortest form that reads back the same.
fn number(v: f64) -> String {
    format!("{v}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grafana_dashboard_asks_only_for_series_served() {
        let r = Running {
            target_rate: Some(1.0),
            target_connections: Some(1.0),
            ..Running::default()
        };
        let exposition = text(&r, &Labels::new("r", None));
        let names: std::collections::BTreeSet<String> = exposition
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split(['{', ' ']).next())
            .map(str::to_owned)
            .collect();
        let dashboard: serde_json::Value =
            serde_json::from_str(include_str!("../../docs/grafana-dashboard.json")).unwrap();
        let mut asked = 0;
        for panel in dashboard["panels"].as_array().unwrap() {
            assert_eq!(panel["datasource"]["uid"], "${datasource}", "{panel}");
            for t in panel["targets"].as_array().unwrap() {
                let expr = t["expr"].as_str().unwrap();
                assert!(expr.contains("run_id=~\"$run_id\""), "{expr}");
                for word in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                    if word.starts_with("spate_") {
                        assert!(names.contains(word), "{word} is not served");
                        asked += 1;
                    }
                }
            }
        }
        assert!(asked >= 10);
    }

    #[test]
    fn every_series_has_the_runs_labels_and_the_histogram_adds_up() {
        let mut r = Running {
            classes: [0, 7, 0, 2, 1],
            ..Running::default()
        };
        r.latency.counts[0] = 3;
        r.latency.counts[BOUNDS_NS.len()] = 1;
        let t = text(&r, &Labels::new("a\"b", Some((1, 4))));
        for line in t.lines().filter(|l| !l.starts_with('#')) {
            assert!(line.contains("{run_id=\"a\\\"b\",shard=\"1/4\""), "{line}");
        }
        assert!(t.contains(
            "spate_responses_total{run_id=\"a\\\"b\",shard=\"1/4\",status_class=\"4xx\"} 2\n"
        ));
        assert!(t.contains("spate_request_duration_seconds_bucket{run_id=\"a\\\"b\",shard=\"1/4\",le=\"0.00001\"} 3\n"));
        assert!(t.contains(",le=\"300\"} 3\n"));
        assert!(t.contains(",le=\"+Inf\"} 4\n"));
        assert!(
            t.contains("spate_request_duration_seconds_count{run_id=\"a\\\"b\",shard=\"1/4\"} 4\n")
        );
        assert!(!t.contains("spate_target_rate"), "closed model");
        assert_eq!(number(1e-5), "0.00001");
    }
}
