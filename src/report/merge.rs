//! `spate merge`'s report: the job, when its shards started, the summary over the job's window,
//! the latency of every shard's responses together, status codes and errors, a row per shard,
//! and the warnings. Text and JSON (docs/merge-schema.json), from a `merge::Merged`.

use std::fmt::Write as _;

use crate::escape::{term, term_str};
use crate::merge::Merged;
use crate::numbers::{bytes, count, counted, millis, per_second};

/// The merged result as text, what the shards' files hold escaped for the terminal.
pub fn text(m: &Merged) -> String {
    let mut o = String::new();
    let _ = write_text(&mut o, m);
    o
}

/// "3 shards", or "2 of 3 shards" when fewer were merged (`--force`).
pub fn shards(m: &Merged) -> String {
    let (merged, job) = (m.shards.len() as u64, u64::from(m.job.shards));
    match merged == job {
        true => counted(job, "shard", "shards"),
        false => format!("{} of {}", count(merged), counted(job, "shard", "shards")),
    }
}

/// The merged result as JSON (docs/merge-schema.json).
pub fn json(m: &Merged) -> String {
    serde_json::to_string_pretty(m).expect("a merged result serializes") + "\n"
}

fn write_text(o: &mut String, m: &Merged) -> std::fmt::Result {
    let j = &m.job;
    writeln!(
        o,
        "spate merge: {} of {} {}",
        shards(m),
        term(&j.method),
        term(&j.url)
    )?;
    for line in describe(m) {
        writeln!(o, "  {line}")?;
    }

    let r = &m.requests;
    writeln!(o, "\nSummary")?;
    writeln!(
        o,
        "  Requests/sec    {}  (responses within the shards' windows, over the job's window)",
        per_second(m.requests_per_sec)
    )?;
    writeln!(
        o,
        "  Attempted       {} = {} completed + {} failed + {} interrupted",
        count(r.attempted),
        count(r.completed),
        count(r.failed),
        count(r.interrupted)
    )?;
    let share = match r.completed {
        0 => "-".to_string(),
        n => format!("{:.2} %", 100.0 * r.successful as f64 / n as f64),
    };
    writeln!(
        o,
        "  Successful      {} ({share} of completed, status < 400)",
        count(r.successful)
    )?;
    writeln!(o, "  Data received   {}", bytes(m.bytes_in as f64))?;
    writeln!(o, "  Data sent       {}", bytes(m.bytes_out as f64))?;

    let l = &m.latency;
    writeln!(
        o,
        "\nLatency (every shard's responses: their histograms added)"
    )?;
    if l.count == 0 {
        writeln!(o, "  no completed responses")?;
    } else {
        for (label, v) in l.percentiles.rows() {
            let v = v.map_or_else(|| "-".into(), millis);
            writeln!(o, "  {label:<7} {v:>12}")?;
        }
        writeln!(
            o,
            "  {:<7} {:>12}",
            "max",
            l.max_ms.map_or_else(|| "-".into(), millis)
        )?;
    }
    if !m.status_codes.is_empty() {
        writeln!(o, "\nStatus codes")?;
        for c in &m.status_codes {
            writeln!(o, "  {:<5} {:>12}", c.code, count(c.count))?;
        }
    }
    if !m.errors.is_empty() {
        writeln!(o, "\nErrors")?;
        for e in &m.errors {
            let first = e
                .example
                .as_deref()
                .map(|x| format!("  (first: {})", term(x)))
                .unwrap_or_default();
            let class = term_str(&e.class);
            writeln!(o, "  {class:<18} {:>8}{first}", count(e.count))?;
        }
    }
    crate::report::stages::rows(o, &m.stages, j.model == "closed", &m.stage_thresholds)?;
    crate::report::text::verdicts(
        o,
        "Thresholds (--slo, on the whole job)",
        &m.thresholds,
        crate::report::Palette::None,
    )?;
    writeln!(o, "\nShards")?;
    writeln!(
        o,
        "  shard  connections   completed    failed       req/s        p50        p99      start  file"
    )?;
    for row in &m.shards {
        let ms = |v: Option<f64>| v.map_or_else(|| "-".into(), |x| format!("{x:.2} ms"));
        writeln!(
            o,
            "  {:>5}  {:>11}  {:>10}  {:>8}  {:>10}  {:>9}  {:>9}  {:>9}  {}",
            row.index.map_or_else(|| "-".into(), |i| i.to_string()),
            count(u64::from(row.connections)),
            count(row.completed),
            count(row.failed),
            per_second(row.requests_per_sec),
            ms(row.p50_ms),
            ms(row.p99_ms),
            format!("+{:.3} ms", row.start_offset_ms),
            term(&row.file)
        )?;
    }
    if !m.warnings.is_empty() {
        writeln!(o, "\nWarnings")?;
        for w in &m.warnings {
            writeln!(o, "  - {}", term(w))?;
        }
    }
    Ok(())
}

/// What the job was and when its shards ran, in the words of the report's header (after its
/// first line); the HTML page's header says the same.
pub fn describe(m: &Merged) -> Vec<String> {
    let j = &m.job;
    let mut lines = Vec::new();
    let stop = match (j.requests, j.duration_s) {
        (Some(n), _) => format!(", {}", counted(n, "request", "requests")),
        (None, Some(d)) => format!(", {} duration", millis(d * 1e3)),
        _ => String::new(),
    };
    let model = crate::report::describe::model(j.rate, j.stages.as_deref());
    lines.push(format!(
        "the job: {}{stop}, {model}",
        counted(j.connections, "connection", "connections")
    ));
    let s = &m.start;
    let late = m
        .shards
        .iter()
        .filter_map(|r| r.late_ms)
        .fold(None, |acc: Option<(f64, f64)>, l| {
            Some(acc.map_or((l, l), |(lo, hi)| (lo.min(l), hi.max(l))))
        });
    let late = match late {
        Some((lo, hi)) => format!(
            " ({} to {} after --start-at)",
            millis(lo.max(0.0)),
            millis(hi.max(0.0))
        ),
        None => String::new(),
    };
    lines.push(format!(
        "started within {} of each other{late}",
        millis(s.skew_ms)
    ));
    lines.push(format!(
        "window {}: from the first shard's start to the last one's end",
        millis(m.window.elapsed_s * 1e3)
    ));
    lines
}
