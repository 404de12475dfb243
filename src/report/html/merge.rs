//! `spate merge --html`: the job's result as one page, drawn as a run's page is: the summary,
//! the job's latency by percentile with each shard's overlaid, the job's responses second by
//! second, a row per shard and the warnings; the merge's JSON embedded. Reads a finished
//! `Merged` and the shards' results; computes nothing of its own.

use std::fmt::Write as _;

use super::charts::{curve, overlay_plot, rate_label};
use super::svg::{Axis, Plot};
use super::tables::{Table, count_val, ms_val, val, words};
use super::{esc, page_end, page_start, section};
use crate::merge::Merged;
use crate::numbers::{millis, per_second};
use crate::stats::{Summary, from_base64_v2};

/// Line colours of the shards; the job's curve is drawn over them in its own.
const COLOURS: usize = 8;

fn summary(m: &Merged) -> String {
    let r = &m.requests;
    let l = &m.latency.percentiles;
    let mut t = Table::new("num", &[]);
    t.row(
        "Requests/sec",
        &[val("requests_per_sec", per_second(m.requests_per_sec))],
    );
    t.row("Attempted", &[count_val("requests.attempted", r.attempted)]);
    t.row("Completed", &[count_val("requests.completed", r.completed)]);
    t.row(
        "Successful",
        &[count_val("requests.successful", r.successful)],
    );
    t.row("Failed", &[count_val("requests.failed", r.failed)]);
    for (name, key, v) in [
        ("p50", "p50", l.p50),
        ("p90", "p90", l.p90),
        ("p99", "p99", l.p99),
        ("p99.9", "p99_9", l.p99_9),
    ] {
        t.row(name, &[ms_val(&format!("latency.percentiles.{key}"), v)]);
    }
    t.row("max", &[ms_val("latency.max_ms", m.latency.max_ms)]);
    t.finish()
}

/// The job's latency by percentile, each shard's overlaid.
fn percentiles(m: &Merged, shards: &[&Summary]) -> Option<String> {
    let job = from_base64_v2(&m.latency.hdr_base64).filter(|h| !h.is_empty())?;
    let job = curve(&job);
    let each: Vec<(usize, Vec<(f64, f64)>)> = shards
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let h = from_base64_v2(&s.latency.hdr_base64).filter(|h| !h.is_empty())?;
            Some((i, curve(&h)))
        })
        .collect();
    let mut p = overlay_plot(
        "Latency by percentile: the job, and each shard",
        std::iter::once(job.as_slice()).chain(each.iter().map(|(_, c)| c.as_slice())),
    );
    let names: Vec<String> = m.shards.iter().map(shard_name).collect();
    for (i, c) in &each {
        let line: Vec<(f64, Option<f64>)> = c.iter().map(|&(x, y)| (x, Some(y))).collect();
        p.line(&format!("t{}", i % COLOURS), &names[*i], &line);
    }
    let line: Vec<(f64, Option<f64>)> = job.iter().map(|&(x, y)| (x, Some(y))).collect();
    p.line("job", "the job", &line);
    let mut legend: Vec<(String, &str)> = vec![("job".into(), "the job")];
    for (i, _) in &each {
        legend.push((format!("t{}", i % COLOURS), &names[*i]));
    }
    let entries: Vec<(&str, &str)> = legend.iter().map(|(c, n)| (c.as_str(), *n)).collect();
    p.legend(&entries);
    Some(p.finish())
}

fn shard_name(r: &crate::merge::ShardRow) -> String {
    match r.index {
        Some(i) => format!("shard {i}"),
        None => r.file.clone(),
    }
}

/// The job's responses, error responses and failures in each of its seconds.
fn seconds(m: &Merged) -> Option<String> {
    let last = m.timeline.last()?.t_s;
    let hi = m
        .timeline
        .iter()
        .map(|s| s.completed as f64)
        .fold(0.0, f64::max);
    let x = Axis {
        min: 0.0,
        max: (last + 1) as f64,
        log: false,
    };
    let mut p = Plot::sized("responses/s", x, Axis::linear(hi), 960.0, 260.0);
    let ticks = p.linear_x_ticks(|v| format!("{v}s"));
    p.axes(&ticks, rate_label, "second of the job", "responses/s");
    let line: Vec<(f64, Option<f64>)> = m
        .timeline
        .iter()
        .map(|s| (s.t_s as f64 + 0.5, Some(s.completed as f64)))
        .collect();
    p.line("job", "responses", &line);
    let of = |f: fn(&crate::merge::Second) -> u64| -> Vec<(f64, Option<f64>)> {
        m.timeline
            .iter()
            .map(|s| (s.t_s as f64 + 0.5, Some(f(s) as f64)))
            .collect()
    };
    p.line("errors", "status >= 400", &of(|s| s.error_status));
    p.line("failed", "failed", &of(|s| s.failed));
    p.legend(&[
        ("job", "responses/s"),
        ("errors", "status >= 400/s"),
        ("failed", "failed/s"),
    ]);
    Some(p.finish())
}

fn shards(m: &Merged) -> String {
    let mut t = Table::new(
        "num",
        &[
            "shard",
            "connections",
            "completed",
            "failed",
            "req/s",
            "p50",
            "p99",
            "start",
            "file",
        ],
    );
    for (k, r) in m.shards.iter().enumerate() {
        let key = |f: &str| format!("shards.{k}.{f}");
        t.row(
            &shard_name(r),
            &[
                count_val(&key("connections"), u64::from(r.connections)),
                count_val(&key("completed"), r.completed),
                count_val(&key("failed"), r.failed),
                val(&key("requests_per_sec"), per_second(r.requests_per_sec)),
                ms_val(&key("p50_ms"), r.p50_ms),
                ms_val(&key("p99_ms"), r.p99_ms),
                val(
                    &key("start_offset_ms"),
                    format!("+{}", millis(r.start_offset_ms)),
                ),
                words(&r.file),
            ],
        );
    }
    t.finish()
}

/// The whole page; `json` is the merge's JSON (`--format json`'s), embedded for tools.
pub fn page(m: &Merged, results: &[&Summary], json: &str) -> String {
    let j = &m.job;
    let title = format!(
        "spate merge: {} of {} {}",
        crate::report::merge::shards(m),
        j.method,
        j.url
    );
    let mut o = page_start(&title);
    let _ = write!(o, "<header><h1>{}</h1>", esc(&title));
    for line in crate::report::merge::describe(m) {
        let _ = write!(o, "<p>{}</p>", esc(&line));
    }
    let _ = write!(
        o,
        r#"<p class="meta">The shards' latency histograms added; the rate over the job's window. spate {}</p></header><main>"#,
        env!("CARGO_PKG_VERSION")
    );
    let warnings: String = m
        .warnings
        .iter()
        .map(|w| format!(r#"<p class="worse">{}</p>"#, esc(w)))
        .collect();
    section(&mut o, "summary", "Summary", &(summary(m) + &warnings), "");
    if let Some(svg) = percentiles(m, results) {
        section(
            &mut o,
            "percentiles",
            "Latency by percentile",
            &svg,
            "The job's responses in one curve, each shard's under it; each step right is ten times rarer (90 %, 99 %, 99.9 %).",
        );
    }
    if let Some(svg) = seconds(m) {
        section(
            &mut o,
            "timeline",
            "Second by second",
            &svg,
            "The responses every shard completed in each second of the job's window.",
        );
    }
    if let Some(table) = super::tables::verdicts(&m.thresholds) {
        section(
            &mut o,
            "thresholds",
            "Thresholds",
            &table,
            "The --slo targets judged on the whole job: its merged latency, its error rate, its rate over the job's window.",
        );
    }
    section(&mut o, "shards", "Shards", &shards(m), "");
    page_end(
        &mut o,
        "The merge's JSON (spate merge --format json) is in this page (script#spate-merge), for other tools.",
        "spate-merge",
        json,
    );
    o
}
