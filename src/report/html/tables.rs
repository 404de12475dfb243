//! The HTML report's tables: summary, percentiles, thresholds, phases, status codes, failures
//! and the open model's schedule (the connections' are in `connections`). Every figure is a cell that names the JSON field
//! it shows (`data-key`, a dotted path), so a test or a reader can check the page against the
//! embedded result; the text is spate's usual formatting of that one value.

use std::fmt::Write as _;

use super::esc;
use crate::numbers::{bytes, count, millis, per_second};
use crate::report::Report;
use crate::report::colour::level_css;
use crate::stats::Phase;

/// A table being written: rows of a header cell and value cells.
pub struct Table {
    out: String,
}

/// A cell showing one JSON value (`key`), as `text`.
pub fn val(key: &str, text: String) -> String {
    format!(r#"<td data-key="{}">{}</td>"#, esc(key), esc(&text))
}

pub(super) fn ms_val(key: &str, v: Option<f64>) -> String {
    val(key, v.map_or_else(|| "-".into(), millis))
}

pub(super) fn count_val(key: &str, v: u64) -> String {
    val(key, count(v))
}

/// A cell of words, not a figure.
pub(super) fn words(text: &str) -> String {
    format!("<td>{}</td>", esc(text))
}

impl Table {
    pub fn new(class: &str, head: &[&str]) -> Table {
        let mut out = format!(r#"<table class="{class}">"#);
        if !head.is_empty() {
            out.push_str("<thead><tr>");
            for h in head {
                let _ = write!(out, "<th>{}</th>", esc(h));
            }
            out.push_str("</tr></thead>");
        }
        out.push_str("<tbody>");
        Table { out }
    }

    /// A row: its name, then cells already made by `val` or `words`.
    pub fn row(&mut self, name: &str, cells: &[String]) {
        let _ = write!(
            self.out,
            "<tr><th>{}</th>{}</tr>",
            esc(name),
            cells.concat()
        );
    }

    pub fn finish(mut self) -> String {
        self.out.push_str("</tbody></table>");
        self.out
    }
}

/// The summary as cards: what was asked and what came back, latency and data.
pub fn summary(r: &Report) -> String {
    let (t, q, l) = (&r.totals, &r.requests, &r.latency);
    let mut a = Table::new("kv", &[]);
    a.row(
        "Elapsed",
        &[ms_val("totals.elapsed_s", Some(t.elapsed_s * 1e3))],
    );
    a.row(
        "Requests/sec",
        &[val(
            "totals.requests_per_sec",
            per_second(t.requests_per_sec),
        )],
    );
    a.row("Attempted", &[count_val("requests.attempted", q.attempted)]);
    a.row("Completed", &[count_val("requests.completed", q.completed)]);
    a.row(
        "Successful (status < 400)",
        &[count_val("requests.successful", q.successful)],
    );
    a.row(
        "Error status (>= 400)",
        &[count_val("requests.error_status", q.error_status)],
    );
    a.row("Failed", &[count_val("requests.failed", q.failed)]);
    a.row(
        "Interrupted",
        &[count_val("requests.interrupted", q.interrupted)],
    );
    if r.config.redirects > 0 {
        a.row(
            "Redirects followed",
            &[count_val(
                "requests.redirects_followed",
                q.redirects_followed,
            )],
        );
    }
    let mut b = Table::new("kv", &[]);
    b.row("Fastest", &[ms_val("latency.min_ms", l.min_ms)]);
    b.row("Average", &[ms_val("latency.mean_ms", l.mean_ms)]);
    b.row("Stdev", &[ms_val("latency.stdev_ms", l.stdev_ms)]);
    b.row("Slowest", &[ms_val("latency.max_ms", l.max_ms)]);
    if let Some(gap) = t.longest_gap_ms {
        b.row(
            "Longest gap without a response",
            &[ms_val("totals.longest_gap_ms", Some(gap))],
        );
    }
    b.row(
        "Data received",
        &[val("totals.bytes_in", bytes(t.bytes_in as f64))],
    );
    b.row(
        "Data sent",
        &[val("totals.bytes_out", bytes(t.bytes_out as f64))],
    );
    let mut cards = vec![("Requests", a.finish()), ("Latency and data", b.finish())];
    if let Some(s) = schedule(r) {
        cards.push(("Open model schedule", s));
    }
    cards_of(&cards)
}

/// Tables side by side, each under its heading.
pub fn cards_of(cards: &[(&str, String)]) -> String {
    let mut out = String::from(r#"<div class="cards">"#);
    for (title, table) in cards {
        let _ = write!(out, "<div><h3>{}</h3>{table}</div>", esc(title));
    }
    out.push_str("</div>");
    out
}

/// The percentiles in the colours of their levels, with the level's name.
pub fn percentiles(r: &Report) -> String {
    let p = &r.latency.percentiles;
    let rows = [
        ("p10", p.p10),
        ("p25", p.p25),
        ("p50", p.p50),
        ("p75", p.p75),
        ("p90", p.p90),
        ("p95", p.p95),
        ("p99", p.p99),
        ("p99.9", p.p99_9),
        ("p99.99", p.p99_99),
    ];
    let mut tb = Table::new("pct", &["percentile", "latency", "level"]);
    for (name, v) in rows {
        let key = format!("latency.percentiles.{}", name.replace('.', "_"));
        let level = v
            .zip(r.levels.as_ref())
            .map(|(ms, l)| l.of_percentile(name, ms));
        let lvl = match level {
            Some(l) => format!(
                r#"<td><span class="swatch" data-level="{}"></span>{}</td>"#,
                l.index,
                esc(&l.name)
            ),
            None => words(""),
        };
        tb.row(name, &[ms_val(&key, v), lvl]);
    }
    tb.finish()
}

/// The swatches' colours, one rule per level (no inline styles: the page's policy forbids them).
pub fn level_rules() -> String {
    (0..=10)
        .map(|i| format!(".swatch[data-level=\"{i}\"]{{background:{}}}", level_css(i)))
        .collect()
}

pub fn thresholds(r: &Report) -> Option<String> {
    verdicts(&r.thresholds)
}

/// A table of `--slo` verdicts (`thresholds.I.measured` keys, as in a run's JSON and a merge's).
pub fn verdicts(thresholds: &[crate::analysis::Verdict]) -> Option<String> {
    if thresholds.is_empty() {
        return None;
    }
    let mut tb = Table::new("slo", &["target", "measured", "verdict"]);
    for (i, v) in thresholds.iter().enumerate() {
        let show = |x: f64| crate::report::text::verdict_value(&v.unit, x);
        let verdict = match v.pass {
            true => r#"<td class="pass">PASS</td>"#,
            false => r#"<td class="fail">FAIL</td>"#,
        };
        tb.row(
            &format!("{} {} {}", v.name, v.op, show(v.target)),
            &[
                val(
                    &format!("thresholds.{i}.measured"),
                    v.measured.map_or_else(|| "-".into(), show),
                ),
                verdict.to_owned(),
            ],
        );
    }
    Some(tb.finish())
}

pub(super) fn phase_row(tb: &mut Table, name: &str, key: &str, p: &Phase) {
    tb.row(
        name,
        &[
            count_val(&format!("{key}.count"), p.count),
            ms_val(&format!("{key}.mean_ms"), p.mean_ms),
            ms_val(&format!("{key}.p50_ms"), p.p50_ms),
            ms_val(&format!("{key}.p99_ms"), p.p99_ms),
            ms_val(&format!("{key}.max_ms"), p.max_ms),
        ],
    );
}

pub fn phases(r: &Report) -> String {
    let mut tb = Table::new("num", &["phase", "count", "mean", "p50", "p99", "max"]);
    let ph = &r.phases;
    phase_row(
        &mut tb,
        "connect (inside latency)",
        "phases.connect",
        &ph.connect,
    );
    phase_row(&mut tb, "write the request", "phases.write", &ph.write);
    phase_row(&mut tb, "wait for the first byte", "phases.wait", &ph.wait);
    phase_row(&mut tb, "read the response", "phases.read", &ph.read);
    if let Some(o) = &r.open_model {
        phase_row(
            &mut tb,
            "send lag (open model)",
            "open_model.send_lag",
            &o.send_lag,
        );
    }
    tb.finish()
}

pub fn statuses(r: &Report) -> String {
    let mut tb = Table::new("num", &["status", "responses", "share"]);
    let completed = r.requests.completed.max(1) as f64;
    for (i, s) in r.status_codes.iter().enumerate() {
        tb.row(
            &s.code.to_string(),
            &[
                count_val(&format!("status_codes.{i}.count"), s.count),
                words(&format!("{:.2} %", 100.0 * s.count as f64 / completed)),
            ],
        );
    }
    if r.status_codes.is_empty() {
        tb.row("none", &[words("no response completed"), words("")]);
    }
    tb.finish()
}

/// A request list: a row per request, its figures named by their `per_url` fields.
pub fn per_url(r: &Report) -> Option<String> {
    if r.per_url.is_empty() {
        return None;
    }
    let mut tb = Table::new(
        "num",
        &[
            "request",
            "completed",
            "failed",
            "status >= 400",
            "p50",
            "p90",
            "p99",
            "max",
        ],
    );
    for (i, u) in r.per_url.iter().enumerate() {
        let k = |field: &str| format!("per_url.{i}.{field}");
        tb.row(
            &u.request,
            &[
                count_val(&k("completed"), u.completed),
                count_val(&k("failed"), u.failed),
                count_val(&k("error_status"), u.error_status),
                ms_val(&k("p50_ms"), u.p50_ms),
                ms_val(&k("p90_ms"), u.p90_ms),
                ms_val(&k("p99_ms"), u.p99_ms),
                ms_val(&k("max_ms"), u.max_ms),
            ],
        );
    }
    Some(tb.finish())
}

pub fn failures(r: &Report) -> Option<String> {
    if r.errors.is_empty() {
        return None;
    }
    let mut tb = Table::new("num wide", &["class", "count", "first example"]);
    for (i, e) in r.errors.iter().enumerate() {
        tb.row(
            &e.class,
            &[
                count_val(&format!("errors.{i}.count"), e.count),
                words(e.example.as_deref().unwrap_or("")),
            ],
        );
    }
    Some(tb.finish())
}

fn schedule(r: &Report) -> Option<String> {
    let o = r.open_model.as_ref()?;
    let mut tb = Table::new("kv", &[]);
    tb.row(
        "Target rate",
        &[val(
            "open_model.rate_target",
            format!("{} req/s", per_second(o.rate_target)),
        )],
    );
    tb.row(
        "Achieved rate",
        &[val(
            "open_model.rate_achieved",
            format!("{} req/s", per_second(o.rate_achieved)),
        )],
    );
    tb.row(
        "Scheduled",
        &[count_val("open_model.scheduled", o.scheduled)],
    );
    tb.row("Sent", &[count_val("open_model.sent", o.sent)]);
    tb.row(
        "Dropped (--max-lag)",
        &[count_val("open_model.dropped", o.dropped)],
    );
    tb.row(
        "Not sent before the end",
        &[count_val("open_model.missed", o.missed)],
    );
    tb.row(
        "Send lag p99",
        &[ms_val("open_model.send_lag.p99_ms", o.send_lag.p99_ms)],
    );
    Some(tb.finish())
}
