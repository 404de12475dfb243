//! The text report: Summary, latency distribution, histogram, status codes, errors, phases and
//! connections, in that order, rendered from a `Summary` as plain ASCII text.

use std::fmt::Write as _;

use super::format::{bytes, count, millis};
use crate::stats::{Phase, Summary};

const BAR_WIDTH: usize = 40;

/// Formats an optional millisecond value, "-" when there were no samples.
fn opt_ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), millis)
}

pub fn render(s: &Summary) -> String {
    let mut out = String::new();
    // Writing into a String never fails.
    let _ = write_report(&mut out, s);
    out
}

fn write_report(o: &mut String, s: &Summary) -> std::fmt::Result {
    let c = &s.config;
    let stop = match (c.requests, c.duration_s) {
        (Some(n), _) => format!("{} requests", count(n)),
        (None, Some(d)) => format!("{} duration", millis(d * 1000.0)),
        (None, None) => String::new(),
    };
    writeln!(o, "spate {}  {} {}", s.spate_version, c.method, c.url)?;
    writeln!(
        o,
        "  {} connections on {} thread{}, {stop}, {}, {} model{}",
        count(u64::from(c.connections)),
        c.threads,
        if c.threads == 1 { "" } else { "s" },
        c.protocol,
        c.model,
        if c.keep_alive { "" } else { ", no keep-alive" },
    )?;

    let r = &s.requests;
    let l = &s.latency;
    let t = &s.totals;
    writeln!(o, "\nSummary")?;
    writeln!(o, "  Elapsed         {}", millis(t.elapsed_s * 1000.0))?;
    writeln!(
        o,
        "  Requests/sec    {}  (completed responses only)",
        rate(t.requests_per_sec)
    )?;
    writeln!(
        o,
        "  Requests        {} attempted = {} completed + {} failed + {} interrupted",
        count(r.attempted),
        count(r.completed),
        count(r.failed),
        count(r.interrupted)
    )?;
    let pct = if r.completed > 0 {
        100.0 * r.successful as f64 / r.completed as f64
    } else {
        0.0
    };
    writeln!(
        o,
        "  Successful      {} ({pct:.2} % of completed, status < 400)",
        count(r.successful)
    )?;
    writeln!(o, "  Fastest         {}", opt_ms(l.min_ms))?;
    writeln!(
        o,
        "  Average         {}  (stdev {})",
        opt_ms(l.mean_ms),
        opt_ms(l.stdev_ms)
    )?;
    writeln!(o, "  Slowest         {}", opt_ms(l.max_ms))?;
    let per_response = t
        .body_bytes_per_response
        .map_or_else(|| "-".into(), |b| format!("{b:.0} B"));
    writeln!(
        o,
        "  Data received   {}  ({}/s; body {per_response} per response)",
        bytes(t.bytes_in as f64),
        bytes(t.bytes_in_per_sec)
    )?;
    writeln!(o, "  Data sent       {}", bytes(t.bytes_out as f64))?;
    if r.interrupted > 0 {
        writeln!(
            o,
            "  Interrupted requests were still in flight when the drain after the deadline ended."
        )?;
    }

    writeln!(
        o,
        "\nLatency distribution ({} model: request start to last body byte)",
        c.model
    )?;
    if l.count == 0 {
        writeln!(o, "  no completed responses")?;
    } else {
        for (label, v) in l.percentiles.rows() {
            writeln!(o, "  {label:<7} {:>12}", opt_ms(v))?;
        }
        if l.clamped > 0 {
            writeln!(
                o,
                "  {} values above 1 h were counted as 1 h",
                count(l.clamped)
            )?;
        }
    }

    if !s.histogram.is_empty() {
        writeln!(o, "\nLatency histogram")?;
        let most = s
            .histogram
            .iter()
            .map(|b| b.count)
            .max()
            .unwrap_or(0)
            .max(1);
        for b in &s.histogram {
            let width = (b.count as f64 / most as f64 * BAR_WIDTH as f64).round() as usize;
            let width = if b.count > 0 { width.max(1) } else { 0 };
            let share = 100.0 * b.count as f64 / l.count.max(1) as f64;
            writeln!(
                o,
                "  {:>12} .. {:>12}  |{:<BAR_WIDTH$}| {:>12}  {share:6.2} %",
                millis(b.from_ms),
                millis(b.to_ms),
                "#".repeat(width),
                count(b.count),
            )?;
        }
    }

    writeln!(o, "\nStatus codes")?;
    if s.status_codes.is_empty() {
        writeln!(o, "  none")?;
    }
    for row in &s.status_codes {
        writeln!(o, "  [{}] {:>14}", row.code, count(row.count))?;
    }

    writeln!(o, "\nErrors")?;
    if s.errors.is_empty() {
        writeln!(o, "  none")?;
    }
    for e in &s.errors {
        let example = e
            .example
            .as_deref()
            .map(|x| format!("  (first: {x})"))
            .unwrap_or_default();
        writeln!(o, "  {:<8} {:>12}{example}", e.class, count(e.count))?;
    }

    writeln!(o, "\nPhases of completed requests")?;
    phase_header(o)?;
    phase_row(o, "write request", &s.phases.write)?;
    phase_row(o, "wait for first byte", &s.phases.wait)?;
    phase_row(o, "read response", &s.phases.read)?;

    let k = &s.connections;
    writeln!(o, "\nConnections")?;
    writeln!(
        o,
        "  {} requested, {} established before the clock started, {} reconnects, {} connect failures",
        count(u64::from(k.requested)),
        count(k.established),
        count(k.reconnects),
        count(k.connect_failures)
    )?;
    if let Some(e) = &k.connect_error {
        writeln!(o, "  first connect failure: {e}")?;
    }
    writeln!(o, "  DNS lookup once, {}", millis(k.dns_ms))?;
    phase_header(o)?;
    phase_row(o, "connect", &k.connect)?;
    writeln!(
        o,
        "  The first connects are outside request latency; a reconnect is inside the latency"
    )?;
    writeln!(o, "  of the request that needed it.")?;
    Ok(())
}

/// 175019.46 -> "175,019.5".
fn rate(per_sec: f64) -> String {
    let tenths = (per_sec.max(0.0) * 10.0).round() as u64;
    format!("{}.{}", count(tenths / 10), tenths % 10)
}

fn phase_header(o: &mut String) -> std::fmt::Result {
    writeln!(
        o,
        "  {:<24} {:>12} {:>12} {:>12} {:>12}",
        "", "mean", "p50", "p99", "max"
    )
}

fn phase_row(o: &mut String, name: &str, p: &Phase) -> std::fmt::Result {
    writeln!(
        o,
        "  {name:<24} {:>12} {:>12} {:>12} {:>12}",
        opt_ms(p.mean_ms),
        opt_ms(p.p50_ms),
        opt_ms(p.p99_ms),
        opt_ms(p.max_ms)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_have_separators_and_one_decimal() {
        assert_eq!(rate(175_019.46), "175,019.5");
        assert_eq!(rate(0.0), "0.0");
        assert_eq!(rate(999.96), "1,000.0");
    }
}
