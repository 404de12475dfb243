//! `spate sweep --html`: the sweep as one page, drawn as the run's page is: a row per level
//! (each figure a `data-key` cell of the embedded JSON), the rate and the latency against the
//! connections on log axes, the knee marked, and with --vs the reference beside the target.
//! Reads a finished `Sweep`; judges nothing.

use std::fmt::Write as _;

use super::charts::{rate_label, short_ms};
use super::svg::{Axis, Plot};
use super::tables::val;
use super::{esc, page_end, page_start, section};
use crate::analysis::{Figures, KNEE_MAX_ERRORS_PCT, Sweep, TAIL_MIN_MS, TAIL_RATIO};
use crate::numbers::{millis, per_second};

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), millis)
}

/// A row per level: its figures, and what the last column of the text report says of it.
fn table(s: &Sweep) -> String {
    let mut o = String::from(
        r#"<table class="num"><thead><tr><th>connections</th><th>req/s</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>errors</th><th></th>"#,
    );
    if s.levels.iter().any(|l| l.vs.is_some()) {
        o.push_str("<th>vs req/s</th><th>ratio</th><th>p50 added</th><th>p99 added</th>");
    }
    o.push_str("</tr></thead><tbody>");
    let knee = s.knee.map(|k| k.connections);
    for (i, l) in s.levels.iter().enumerate() {
        let f = &l.figures;
        let key = |field: &str| format!("levels.{i}.{field}");
        let mark = crate::report::sweep::mark(l, knee);
        let _ = write!(
            o,
            "<tr><th>{}</th>{}{}{}{}{}{}<td>{mark}</td>",
            l.connections,
            val(&key("rps"), per_second(f.rps)),
            val(&key("p50_ms"), ms(f.p50_ms)),
            val(&key("p90_ms"), ms(f.p90_ms)),
            val(&key("p99_ms"), ms(f.p99_ms)),
            val(&key("p999_ms"), ms(f.p999_ms)),
            val(
                &key("errors_pct"),
                f.errors_pct.map_or("-".into(), |e| format!("{e:.2} %"))
            ),
        );
        if let (Some(r), Some(d)) = (&l.vs, &l.overhead) {
            let _ = write!(
                o,
                "{}<td>{}</td><td>{}</td><td>{}</td>",
                val(&key("vs.rps"), per_second(r.rps)),
                d.rps_ratio.map_or("-".into(), |x| format!("{x:.2}x")),
                d.p50_ms.map_or("-".into(), |x| format!("{x:+.3} ms")),
                d.p99_ms.map_or("-".into(), |x| format!("{x:+.3} ms")),
            );
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table>");
    o
}

/// The connections axis: logarithmic, from the fewest to the most swept.
fn connections_axis(s: &Sweep) -> (Axis, Vec<(f64, String)>) {
    let first = s.levels.first().map_or(1, |l| l.connections);
    let last = s.levels.last().map_or(10, |l| l.connections);
    // Exactly the levels' span (a sweep has two levels at least): the decade-rounded axis
    // would leave most of the plot empty.
    let axis = Axis {
        min: f64::from(first),
        max: f64::from(last.max(first + 1)),
        log: true,
    };
    let ticks = s
        .levels
        .iter()
        .map(|l| (f64::from(l.connections), l.connections.to_string()))
        .collect();
    (axis, ticks)
}

/// One series per figure of the target (and of the reference, dashed).
fn series(s: &Sweep, figure: impl Fn(&Figures) -> Option<f64>) -> [Vec<(f64, Option<f64>)>; 2] {
    let of = |f: Option<&Figures>| f.and_then(&figure);
    [
        s.levels
            .iter()
            .map(|l| (f64::from(l.connections), of(Some(&l.figures))))
            .collect(),
        s.levels
            .iter()
            .map(|l| (f64::from(l.connections), of(l.vs.as_ref())))
            .collect(),
    ]
}

fn rate_chart(s: &Sweep) -> String {
    let (x, ticks) = connections_axis(s);
    let [target, reference] = series(s, |f| Some(f.rps));
    let hi = target
        .iter()
        .chain(&reference)
        .filter_map(|p| p.1)
        .fold(0.0, f64::max);
    let mut p = Plot::sized(
        "Requests/sec by connections",
        x,
        Axis::linear(hi),
        470.0,
        300.0,
    );
    p.axes(&ticks, rate_label, "connections (log)", "req/s");
    p.line("t0", "target", &target);
    p.line("t1 vs", "reference (--vs)", &reference);
    if let Some(k) = s.knee {
        p.dot("target", f64::from(k.connections), k.rps, "the knee");
    }
    legend(&mut p, s);
    p.finish()
}

fn latency_chart(s: &Sweep) -> String {
    let (x, ticks) = connections_axis(s);
    let [p50, vs50] = series(s, |f| f.p50_ms);
    let [p99, vs99] = series(s, |f| f.p99_ms);
    let values = || {
        p50.iter()
            .chain(&p99)
            .chain(&vs50)
            .chain(&vs99)
            .filter_map(|p| p.1)
    };
    let lo = values().filter(|&v| v > 0.0).fold(f64::INFINITY, f64::min);
    let hi = values().fold(0.0, f64::max);
    let mut p = Plot::sized("Latency by connections", x, Axis::log(lo, hi), 470.0, 300.0);
    p.axes(&ticks, short_ms, "connections (log)", "latency (log)");
    p.line("p50", "p50", &p50);
    p.line("p99", "p99", &p99);
    p.line("p50 vs", "reference p50", &vs50);
    p.line("p99 vs", "reference p99", &vs99);
    let mut entries = vec![("p50", "p50"), ("p99", "p99")];
    if s.levels.iter().any(|l| l.vs.is_some()) {
        entries.push(("p99 vs", "reference (dashed)"));
    }
    p.legend(&entries);
    p.finish()
}

fn legend(p: &mut Plot, s: &Sweep) {
    match s.levels.iter().any(|l| l.vs.is_some()) {
        true => p.legend(&[("t0", "target"), ("t1 vs", "reference (--vs)")]),
        false => p.legend(&[("t0", "target")]),
    }
}

/// The whole page; `json` is the sweep's JSON (`--format json`'s), embedded for tools.
pub fn page(s: &Sweep, url: &str, vs: Option<&str>, each: &str, json: &str) -> String {
    let title = format!("spate sweep: {url}");
    let mut o = page_start(&title);
    let _ = write!(
        o,
        r#"<header><h1>spate sweep: {}</h1><p>{}, each {}{}</p>"#,
        esc(url),
        crate::numbers::counted(s.levels.len() as u64, "level", "levels"),
        esc(each),
        vs.map_or(String::new(), |v| format!(
            "; against {} at each level (alternately)",
            esc(v)
        ))
    );
    let knee = match s.knee {
        Some(k) => format!(
            "Knee: {} connections, the fewest reaching 95 % of the peak rate: {} req/s (the peak: {} req/s at {}), p99 {}.",
            k.connections,
            per_second(k.rps),
            per_second(k.peak_rps),
            k.peak_connections,
            ms(k.p99_ms)
        ),
        None => "No knee: no level counted towards the peak.".into(),
    };
    let _ = write!(
        o,
        r#"<p class="meta">{} spate {}</p></header><main>"#,
        esc(&knee),
        env!("CARGO_PKG_VERSION")
    );
    section(
        &mut o,
        "levels",
        "Levels",
        &table(s),
        &format!(
            "errors: no response or over {KNEE_MAX_ERRORS_PCT} % errors, not counted towards the peak. tail: p99 over {TAIL_RATIO} times p50 and over {} above it, counted.",
            millis(TAIL_MIN_MS)
        ),
    );
    section(
        &mut o,
        "charts",
        "By connections",
        &format!(
            r#"<div class="cards"><div>{}</div><div>{}</div></div>"#,
            rate_chart(s),
            latency_chart(s)
        ),
        "Below the knee more connections bring more throughput; past it they wait in a queue, and the tail grows.",
    );
    page_end(
        &mut o,
        "The sweep's JSON (spate sweep --format json) is in this page (script#spate-sweep), for other tools.",
        "spate-sweep",
        json,
    );
    o
}
