//! The text report, in this order: the header (its lines after the first are `describe`'s),
//! summary, schedule, latency distribution, histogram and level legend, status codes, errors,
//! phases, connections, insight, thresholds (the latency tables are in `latency`, the timing
//! tables in `timing`). Rendered from a `Summary`; colour is optional and never carries
//! information the words do not also carry.

use std::fmt::Write as _;

use super::Report;
use super::colour::Palette;
use super::describe::describe;
use super::latency::{histogram, legend, percentiles};
use super::stages::table as stages;
use super::timing::{phases_and_connections, schedule};
use crate::numbers::{bytes, count, millis, per_second as rate};

/// Insight sentences are wrapped to this width, plus a 4-column indent: every line of the report
/// fits in 80 columns.
const WRAP: usize = 76;

/// Formats an optional millisecond value, "-" when there were no samples.
pub(super) fn opt_ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), millis)
}

/// Renders the report; `palette` decides the colours (`Palette::None` for none). What came
/// from outside is shown escaped.
pub fn render(s: &Report, palette: Palette) -> String {
    let mut out = String::new();
    let shown = s.for_terminal();
    // Writing into a String never fails.
    let _ = write_report(&mut out, shown.as_ref().unwrap_or(s), palette);
    // And whatever a printer let through stays inert (only spate's own colours act).
    match crate::escape::inert(&out, palette != Palette::None) {
        std::borrow::Cow::Borrowed(_) => out,
        std::borrow::Cow::Owned(safe) => safe,
    }
}

fn write_report(o: &mut String, s: &Report, pal: Palette) -> std::fmt::Result {
    header(o, s, pal)?;
    summary(o, s)?;
    schedule(o, s)?;
    stages(o, s)?;
    percentiles(o, s, pal)?;
    histogram(o, s, pal)?;
    legend(o, s, pal)?;
    statuses_and_errors(o, s)?;
    per_url(o, s)?;
    super::mcp::section(o, s)?;
    phases_and_connections(o, s)?;
    super::streaming::section(o, s)?;
    insight(o, s, pal)?;
    thresholds(o, s, pal)?;
    super::baseline::section(o, s, pal)
}

fn header(o: &mut String, s: &Report, pal: Palette) -> std::fmt::Result {
    writeln!(
        o,
        "{}  {} {}",
        pal.bold(&format!("spate {}", s.spate_version)),
        s.config.method,
        s.config.url
    )?;
    for line in describe(s) {
        writeln!(o, "  {line}")?;
    }
    Ok(())
}

/// The open model's schedule: what was planned, what was sent, how late.
fn summary(o: &mut String, s: &Report) -> std::fmt::Result {
    let r = &s.requests;
    let l = &s.latency;
    let t = &s.totals;
    writeln!(o, "\nSummary")?;
    let drain = match (s.generator.script_stopped, t.drain_s > 0.0) {
        (true, _) => "  (the script stopped every thread: wrk.thread:stop())".to_string(),
        (false, true) => format!("  (then {} of drain)", millis(t.drain_s * 1000.0)),
        (false, false) => String::new(),
    };
    writeln!(
        o,
        "  Elapsed         {}{drain}",
        millis(t.elapsed_s * 1000.0)
    )?;
    let within = match t.completed_in_drain {
        0 => "completed responses only".to_string(),
        n => format!(
            "responses completed within it; {} more in the drain",
            count(n)
        ),
    };
    writeln!(
        o,
        "  Requests/sec    {}  ({within})",
        rate(t.requests_per_sec)
    )?;
    if let Some(p) = &t.per_thread {
        writeln!(
            o,
            "  Per thread      mean {}, stdev {}, min {}, max {} req/s",
            rate(p.mean),
            rate(p.stdev),
            rate(p.min),
            rate(p.max)
        )?;
    }
    writeln!(
        o,
        "  Attempted       {} = {} completed + {} failed + {} interrupted",
        count(r.attempted),
        count(r.completed),
        count(r.failed),
        count(r.interrupted)
    )?;
    if let Some(f) = crate::analysis::starved(&s.connections, s.config.rate.is_none()) {
        writeln!(
            o,
            "  Unanswered      {} of {} connections got no response in the whole run",
            count(f.starved),
            count(s.connections.established)
        )?;
    }
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
    if s.config.redirects > 0 {
        writeln!(
            o,
            "  Redirects       {} followed (--redirect {}); latency covers each chain",
            count(r.redirects_followed),
            s.config.redirects
        )?;
    }
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
    if let (Some(gap), Some(at)) = (t.longest_gap_ms, t.longest_gap_at_s) {
        writeln!(
            o,
            "  Longest gap     {} without a completed response, from {at:.1} s",
            millis(gap)
        )?;
    }
    let g = &s.generator;
    if let (Some(ms), Some(at)) = (g.longest_stall_ms, g.longest_stall_at_s)
        && ms >= crate::analysis::STALL_MS
    {
        writeln!(
            o,
            "  spate stalled   {} (a load thread did not run), from {at:.1} s",
            millis(ms)
        )?;
    }
    if s.config.warmup_s > 0.0 {
        writeln!(
            o,
            "  Warm-up         {} before this, {} requests not recorded",
            millis(s.config.warmup_s * 1e3),
            count(s.config.warmup_requests)
        )?;
    }
    Ok(())
}

fn statuses_and_errors(o: &mut String, s: &Report) -> std::fmt::Result {
    writeln!(o, "\nStatus codes")?;
    if s.status_codes.is_empty() {
        writeln!(o, "  none")?;
    }
    for row in &s.status_codes {
        writeln!(o, "  [{}] {:>14}", row.code, count(row.count))?;
    }
    if let Some(g) = &s.grpc {
        writeln!(o, "\ngRPC status ({})", g.call)?;
        for row in &g.statuses {
            let first = row
                .first_message
                .as_deref()
                .map(|m| format!("  (first: {m})"))
                .unwrap_or_default();
            writeln!(o, "  {:<20} {:>10}{first}", row.name, count(row.count))?;
        }
    }
    writeln!(o, "\nErrors")?;
    let statuses = s.requests.error_status;
    if s.errors.is_empty() && statuses == 0 {
        writeln!(o, "  none")?;
    }
    // The counts end in one column, however long the classes' names.
    let names = s.errors.iter().map(|e| e.class.chars().count());
    let name_w = names.max().unwrap_or(0).max(8);
    let end = name_w + 1 + 12;
    let row = |label: &str, n: u64| {
        let w = label.chars().count().max(name_w);
        format!("  {label:<w$} {:>cw$}", count(n), cw = end - 1 - w)
    };
    for e in &s.errors {
        let example = e
            .example
            .as_deref()
            .map(|x| format!("  (first: {x})"))
            .unwrap_or_default();
        writeln!(o, "{}{example}", row(&e.class, e.count))?;
    }
    // Answered, but with an error: wrk's "Non-2xx or 3xx responses".
    if statuses > 0 {
        writeln!(
            o,
            "{}  (answered with an error status; see Status codes)",
            row("status>=400", statuses)
        )?;
    }
    Ok(())
}

/// A request list: a line per request, in the list's order.
fn per_url(o: &mut String, s: &Report) -> std::fmt::Result {
    if s.per_url.is_empty() {
        return Ok(());
    }
    let per = match s.grpc.is_some() {
        true => "message",
        false => "URL",
    };
    writeln!(
        o,
        "\nPer {per} (completed, failed, status >= 400, p50, p99, max)"
    )?;
    for r in &s.per_url {
        let t = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |x| format!("{x:.3} ms"));
        writeln!(
            o,
            "  {:>9} {:>6} {:>6} {:>11} {:>11} {:>11}  {}",
            count(r.completed),
            count(r.failed),
            count(r.error_status),
            t(r.p50_ms),
            t(r.p99_ms),
            t(r.max_ms),
            r.request
        )?;
    }
    Ok(())
}

fn insight(o: &mut String, s: &Report, pal: Palette) -> std::fmt::Result {
    writeln!(o, "\n{}", pal.bold("Insight"))?;
    for sentence in super::insight::sentences(&s.findings) {
        for (i, line) in wrap(&sentence, WRAP).iter().enumerate() {
            writeln!(o, "  {} {line}", if i == 0 { "-" } else { " " })?;
        }
    }
    Ok(())
}

/// A `--slo` target or measured value in its unit, as the text and HTML reports show it.
pub(super) fn verdict_value(unit: &str, x: f64) -> String {
    match unit {
        "ms" => millis(x),
        "%" => format!("{x:.2} %"),
        _ => format!("{} req/s", rate(x)),
    }
}

fn thresholds(o: &mut String, s: &Report, pal: Palette) -> std::fmt::Result {
    if let Some(slo) = s.config.shard.as_ref().and_then(|sh| sh.slo.as_deref()) {
        writeln!(o, "\nThresholds (--slo)")?;
        return writeln!(
            o,
            "  {slo}: judged on the whole job by spate merge, not on this shard's part"
        );
    }
    verdicts(o, "Thresholds (--slo)", &s.thresholds, pal)
}

/// A table of `--slo` verdicts under `title` (nothing without verdicts): PASS or FAIL, the
/// target and what was measured.
pub(crate) fn verdicts(
    o: &mut String,
    title: &str,
    verdicts: &[crate::analysis::Verdict],
    pal: Palette,
) -> std::fmt::Result {
    if verdicts.is_empty() {
        return Ok(());
    }
    writeln!(o, "\n{title}")?;

    let rows: Vec<(bool, &str, &str, String, String)> = verdicts
        .iter()
        .map(|v| {
            let measured = v
                .measured
                .map_or_else(String::new, |m| verdict_value(&v.unit, m));
            (
                v.pass,
                v.name.as_str(),
                v.op.as_str(),
                verdict_value(&v.unit, v.target),
                measured,
            )
        })
        .collect();
    // Columns as wide as their widest cell, whatever the values.
    let name_w = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    let target_w = rows.iter().map(|r| r.3.len()).max().unwrap_or(0);
    let measured_w = rows.iter().map(|r| r.4.len()).max().unwrap_or(0);
    for (pass, name, op, target, measured) in rows {
        let verdict = if pass {
            pal.pass("PASS")
        } else {
            pal.fail("FAIL")
        };
        let measured = match measured.is_empty() {
            true => "nothing measured".to_string(),
            false => format!("measured {measured:>measured_w$}"),
        };
        writeln!(
            o,
            "  {verdict}  {name:<name_w$} {op} {target:>target_w$}  {measured}"
        )?;
    }
    Ok(())
}

/// Greedy word wrap; a word longer than `width` gets a line of its own.
pub(super) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_json_cannot_hold_is_still_shown_inert() {
        let plan = crate::plan::Plan::new(crate::target::Target::parse("http://a/").unwrap());
        let mut run = crate::stats::Summary::new(
            &plan,
            &crate::stats::RunOutput::empty(1),
            crate::stats::HISTOGRAM_BINS,
        );
        // A figure JSON writes as null, so the escaped copy cannot be made.
        run.totals.requests_per_sec = f64::NAN;
        run.errors.push(crate::stats::ErrorRow {
            class: "closed".into(),
            count: 1,
            example: Some("\x1b]0;pwned\x07".into()),
        });
        let r = Report::of(run, &Default::default());
        assert!(r.for_terminal().is_none());
        for pal in [Palette::None, Palette::Ansi256] {
            let text = render(&r, pal);
            assert!(text.contains("\\x1b]0;pwned\\x07"), "{text}");
            assert!(
                crate::escape::is_inert(&text, pal != Palette::None),
                "{text:?}"
            );
        }
    }

    #[test]
    fn wrapping() {
        assert_eq!(wrap("a bb ccc", 4), vec!["a bb", "ccc"]);
        assert_eq!(
            wrap("averyveryverylongword x", 5),
            vec!["averyveryverylongword", "x"]
        );
        assert!(wrap("", 10).is_empty());
    }
}
