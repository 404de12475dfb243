//! `--html`: the report as one self-contained page. Inline CSS and inline SVG drawn here; no
//! script and no request of any kind (a Content-Security-Policy that allows only the page's own
//! stylesheet says so to the browser); the run's JSON embedded as a data block for tools. Reads
//! a finished `Report`; the insight's words are the text report's, from the same findings.

mod baseline;
mod charts;
mod connections;
mod mcp;
mod merge;
mod streaming;
mod svg;
mod sweep;
mod tables;
mod versus;

pub use merge::page as merge_page;
pub use sweep::page as sweep_page;
pub use versus::page as compare_page;

use std::fmt::Write as _;

use base64::Engine as _;

use super::describe::describe;
use super::insight::sentences;
use super::{Report, to_json};
use crate::numbers::millis;
use crate::report::colour::{fail_css, pass_css};

const STYLE: &str = include_str!("style.css");

/// Text made safe for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page's stylesheet: the fixed rules and the level colours, which are the terminal's.
fn stylesheet() -> String {
    format!(
        "{STYLE}{}.pass{{color:{}}}.fail{{color:{}}}.badge.pass{{color:#fff;background:{}}}.badge.fail{{color:#fff;background:{}}}",
        tables::level_rules(),
        pass_css(),
        fail_css(),
        pass_css(),
        fail_css()
    )
}

/// The policy: nothing may load, run or be sent; only this stylesheet applies (by its hash).
fn policy(css: &str) -> String {
    let hash = ring::digest::digest(&ring::digest::SHA256, css.as_bytes());
    let b64 = base64::engine::general_purpose::STANDARD.encode(hash.as_ref());
    format!(
        "default-src 'none'; style-src 'sha256-{b64}'; img-src 'none'; form-action 'none'; base-uri 'none'"
    )
}

/// The run's JSON, on one line.
fn embedded(r: &Report) -> String {
    serde_json::to_string(r).unwrap_or_else(|_| to_json(r))
}

fn section(o: &mut String, id: &str, title: &str, body: &str, note: &str) {
    let _ = write!(o, r#"<section id="{id}"><h2>{}</h2>"#, esc(title));
    if !note.is_empty() {
        let _ = write!(o, r#"<p class="note">{}</p>"#, esc(note));
    }
    o.push_str(body);
    o.push_str("</section>");
}

fn started(r: &Report) -> String {
    // RFC 3339 ends with the year 9999; a saved result may say anything.
    const LAST_MS: u64 = 253_402_300_799_999;
    if r.start_unix_ms > LAST_MS {
        return format!("{} ms after 1970", r.start_unix_ms);
    }
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(r.start_unix_ms);
    humantime::format_rfc3339_seconds(at)
        .to_string()
        .replace('T', " ")
        .replace('Z', " UTC")
}

fn header(o: &mut String, r: &Report) {
    let c = &r.config;
    let gated = !r.thresholds.is_empty()
        || r.baseline
            .iter()
            .any(|c| c.rows.iter().any(|d| d.limit.is_some()));
    let verdict = match (gated, r.thresholds_pass()) {
        (false, _) => String::new(),
        (true, true) => r#"<span class="badge pass" id="verdict">PASS</span>"#.into(),
        (true, false) => r#"<span class="badge fail" id="verdict">FAIL</span>"#.into(),
    };
    let _ = write!(
        o,
        r#"<header><h1><span class="method">{}</span> {} {verdict}</h1>"#,
        esc(&c.method),
        esc(&c.url)
    );
    for line in describe(r) {
        let _ = write!(o, "<p>{}</p>", esc(&line));
    }
    let duration = millis(r.totals.elapsed_s * 1e3);
    let _ = write!(
        o,
        r#"<p class="meta">Started {} · measured for {duration} · spate {}</p></header>"#,
        started(r),
        esc(&r.spate_version)
    );
}

/// A page's start, up to the opened body: its policy, stylesheet and title.
fn page_start(title: &str) -> String {
    let css = stylesheet();
    let mut o = String::with_capacity(64 << 10);
    let _ = write!(
        o,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{}"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="generator" content="spate {}"><title>{}</title><style>{css}</style></head><body>"#,
        policy(&css),
        env!("CARGO_PKG_VERSION"),
        esc(title)
    );
    o
}

/// A page's end: the footer and the JSON as a data block (`<` escaped, so that no string in it
/// can end the element), `id` naming it.
fn page_end(o: &mut String, footer: &str, id: &str, json: &str) {
    let _ = write!(
        o,
        r#"</main><footer>{footer}</footer><script type="application/json" id="{id}">{}</script></body></html>"#,
        json.replace('<', "\\u003c")
    );
    o.push('\n');
}

/// The whole page.
pub fn to_html(r: &Report) -> String {
    let mut o = page_start(&format!("spate: {} {}", r.config.method, r.config.url));
    header(&mut o, r);
    o.push_str("<main>");
    if let Some(e) = &r.error {
        section(
            &mut o,
            "error",
            "The run did not start",
            &format!("<p>{}</p>", esc(&e.message)),
            "",
        );
    }
    if let Some(t) = tables::thresholds(r) {
        section(&mut o, "thresholds", "SLO verdicts (--slo)", &t, "");
    }
    if let Some(b) = baseline::section(r) {
        section(
            &mut o,
            "baseline",
            "Against the baseline (--baseline)",
            &b,
            "",
        );
    }
    section(&mut o, "summary", "Summary", &tables::summary(r), "");
    let targets = r.thresholds.iter().any(|v| v.unit == "ms");
    if let Some(svg) = charts::load(r) {
        section(
            &mut o,
            "load",
            "Load against its target (--stages)",
            &svg,
            "What the profile asked for in each second beside what the run did; dotted lines are the stages' starts, the red line the breaking point.",
        );
    }
    if let Some(svg) = charts::throughput(r) {
        section(
            &mut o,
            "throughput",
            "Throughput over time",
            &svg,
            match r.open_model {
                Some(_) => {
                    "Responses completed in each second of the measured window (any status), failures, and requests dropped for --max-lag."
                }
                None => {
                    "Responses completed in each second of the measured window (any status), and failures."
                }
            },
        );
    }
    if let Some(svg) = charts::latency(r) {
        section(
            &mut o,
            "latency-over-time",
            "Latency over time",
            &svg,
            match targets {
                true => {
                    "p50, p90, p99 and max of the responses completed in each second, on a log scale; dashed lines are the --slo targets. A gap is a second in which nothing completed."
                }
                false => {
                    "p50, p90, p99 and max of the responses completed in each second, on a log scale. A gap is a second in which nothing completed."
                }
            },
        );
    }
    let mut pct = format!(r#"<div class="pair">{}"#, tables::percentiles(r));
    let curve = charts::distribution(r);
    if let Some(svg) = &curve {
        let _ = write!(pct, "<div>{svg}</div>");
    }
    pct.push_str("</div>");
    section(
        &mut o,
        "percentiles",
        "Latency percentiles",
        &pct,
        match (curve.is_some(), targets) {
            (false, _) => "",
            (true, true) => {
                "The percentile curve stretches the tail: each step right is ten times rarer (90 %, 99 %, 99.9 %). Dots are the --slo targets."
            }
            (true, false) => {
                "The percentile curve stretches the tail: each step right is ten times rarer (90 %, 99 %, 99.9 %)."
            }
        },
    );
    if let Some(svg) = charts::histogram(r) {
        section(
            &mut o,
            "histogram",
            "Latency histogram",
            &svg,
            "Coloured by level, as in the terminal report.",
        );
    }
    section(
        &mut o,
        "phases",
        "Phases",
        &tables::phases(r),
        "Where a request's time went.",
    );
    if let Some(body) = streaming::section(r) {
        section(
            &mut o,
            "streaming",
            "Streaming (--stream)",
            &body,
            "First events count from the request's start, as latency does; gaps are between consecutive events with data (inter-token latency).",
        );
    }
    let mut codes = tables::statuses(r);
    if let Some(f) = tables::failures(r) {
        codes.push_str("<h3>Failures by class</h3>");
        codes.push_str(&f);
    }
    section(&mut o, "statuses", "Status codes and failures", &codes, "");
    if let Some((note, body)) = mcp::section(r) {
        section(&mut o, "per-tool", "Per tool", &body, &note);
    }
    if let Some(body) = tables::per_url(r) {
        let (title, each) = match r.run.grpc.is_some() {
            true => ("Per message", "Each message of the list"),
            false => ("Per URL", "Each request of the list"),
        };
        section(
            &mut o,
            "per-url",
            title,
            &body,
            &format!("{each}. Its percentiles come from a histogram with two significant digits."),
        );
    }
    section(
        &mut o,
        "connections",
        "Connections",
        &connections::connections(r),
        "",
    );
    let mut insight = String::from(r#"<ul class="insight">"#);
    for s in sentences(&r.findings) {
        let _ = write!(insight, "<li>{}</li>", esc(&s));
    }
    insight.push_str("</ul>");
    section(&mut o, "insight", "Insight", &insight, "");
    page_end(
        &mut o,
        &format!(
            "Made by spate {}. The run's JSON result is in this page (script#spate-result), for <code>spate report</code> and other tools.",
            esc(&r.spate_version)
        ),
        "spate-result",
        &embedded(r),
    );
    o
}

/// The JSON result embedded in a page `to_html` made, if `page` is one.
pub fn embedded_json(page: &str) -> Option<&str> {
    const OPEN: &str = r#"<script type="application/json" id="spate-result">"#;
    let start = page.find(OPEN)? + OPEN.len();
    let len = page[start..].find("</script>")?;
    Some(&page[start..start + len])
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::stats::timeline::Second;
    use crate::stats::{ErrorRow, Hist, RunOutput};

    /// A run of `seconds` seconds at 20,000 responses a second, latencies spread 0.05-5 ms (a
    /// minute of them, over and over).
    fn run_of(seconds: u64) -> Report {
        let plan = crate::plan::Plan::new(crate::target::Target::parse("http://a/").unwrap());
        let mut run = RunOutput::empty(2);
        let (mut all, mut prev) = (Hist::new(), Hist::new());
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let minute: Vec<_> = (0..60)
            .map(|_| {
                for _ in 0..60 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    all.record(50_000 + x % 5_000_000);
                }
                all.since(&mut prev)
            })
            .collect();
        for i in 0..seconds {
            run.stats.seconds.push(Second {
                start_ns: i * 1_000_000_000,
                span_ns: 1_000_000_000,
                completed: 20_000,
                sent: 20_000,
                bytes_in: 2_000_000,
                open: 50,
                latency: minute[i as usize % 60].clone(),
                ..Default::default()
            });
        }
        run.stats.latency = all;
        run.elapsed = std::time::Duration::from_secs(seconds);
        Report::new(&plan, &run, &Default::default())
    }

    #[test]
    fn escaping_and_the_embedded_result_cannot_break_out() {
        assert_eq!(
            esc(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let mut r = run_of(2);
        let evil = "</script><script>alert(1)</script>";
        r.run.errors.push(ErrorRow {
            class: "parse".into(),
            count: 1,
            example: Some(evil.into()),
        });
        let page = to_html(&r);
        assert_eq!(page.matches("<script").count(), 1, "only the data block");
        let json = embedded_json(&page).unwrap();
        let back: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(back["errors"][0]["example"], evil);
    }

    /// Long runs are thinned to the pixels by `svg` (tested there); what is left of a
    /// 10-minute run's page is mostly its embedded JSON.
    #[test]
    fn ten_minutes_stay_under_300_kb() {
        let page = to_html(&run_of(600));
        assert!(page.len() < 300_000, "{} bytes", page.len());
        let p99 = page
            .split(r#"data-series="p99" d=""#)
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(p99.matches(['M', 'L']).count(), 600, "a point a second");
    }

    #[test]
    fn the_policy_names_the_stylesheet_it_carries() {
        let css = stylesheet();
        let p = policy(&css);
        assert!(
            p.starts_with("default-src 'none'; style-src 'sha256-"),
            "{p}"
        );
        assert!(!p.contains("unsafe"), "{p}");
    }
}
