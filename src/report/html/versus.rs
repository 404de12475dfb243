//! `spate compare --html`: the comparison as one page, drawn as the run's page is: a table of
//! each target's medians with their range and change, the targets' latency by percentile
//! overlaid, and each round's rate and p99 by target; the comparison's JSON embedded. Reads a
//! finished `Versus` and the rounds it judged; judges nothing.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use super::charts::{curve, overlay_plot, rate_label, short_ms};
use super::svg::{Axis, Plot};
use super::{esc, page_end, page_start, section};
use crate::analysis::{Measure, Outcome, Versus};
use crate::report::versus::{change_words, value};
use crate::stats::{HIST_HIGH_NS, HIST_LOW_NS, HIST_SIGFIG, Summary, from_base64_v2};

/// Line colours of the targets, in order; more targets reuse them (the legend tells them
/// apart by name).
const COLOURS: usize = 8;

fn class(i: usize) -> String {
    format!("t{}", i % COLOURS)
}

fn swatch(i: usize) -> String {
    format!(r#"<span class="swatch {}"></span>"#, class(i))
}

/// The summary table: a row per measure, a column per target; in each cell the median (a
/// `data-key` cell), the range of the rounds and the change against the reference.
fn table(v: &Versus) -> String {
    let mut o = String::from(r#"<div class="scroll"><table class="cmp"><thead><tr><th></th>"#);
    for (i, t) in v.targets.iter().enumerate() {
        let _ = write!(o, "<th>{}{}</th>", swatch(i), esc(&t.name));
    }
    o.push_str("</tr></thead><tbody>");
    for (k, m) in Measure::ALL.into_iter().enumerate() {
        let _ = write!(o, "<tr><th>{}</th>", esc(heading(m)));
        for (i, t) in v.targets.iter().enumerate() {
            let Some(r) = t.rows.get(k).filter(|r| r.measure == m) else {
                o.push_str("<td></td>");
                continue;
            };
            let _ = write!(
                o,
                r#"<td><span data-key="targets.{i}.rows.{k}.median">{}</span>"#,
                esc(&value(m, r.median))
            );
            if let (Some(a), Some(b)) = (r.min, r.max) {
                let _ = write!(
                    o,
                    r#"<small>{} .. {}</small>"#,
                    esc(&value(m, Some(a))),
                    esc(&value(m, Some(b)))
                );
            }
            match (&r.change, i == v.reference) {
                (_, true) => o.push_str(r#"<small>reference</small>"#),
                (Some(c), false) => {
                    let tone = match c.verdict {
                        Outcome::Better => "better",
                        Outcome::Worse => "worse",
                        Outcome::Same => "same",
                    };
                    let _ = write!(
                        o,
                        r#"<small class="{tone}">{}</small>"#,
                        esc(&change_words(m, c))
                    );
                }
                (None, false) => {}
            }
            o.push_str("</td>");
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table></div>");
    o
}

fn heading(m: Measure) -> &'static str {
    match m {
        Measure::Rps => "req/s",
        Measure::Latency(p) => p.key(),
        Measure::Errors => "errors",
        Measure::Unanswered => "never answered",
        Measure::Cpu => "spate CPU/response",
    }
}

/// Each target's responses of all rounds in one histogram.
fn merged(rounds: &[Summary]) -> Option<Histogram<u64>> {
    let mut all = Histogram::<u64>::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, HIST_SIGFIG).ok()?;
    for h in rounds
        .iter()
        .filter_map(|s| from_base64_v2(&s.latency.hdr_base64))
    {
        all.add(&h).ok()?;
    }
    (!all.is_empty()).then_some(all)
}

/// The targets' latency by percentile, overlaid on one HdrHistogram-style plot.
fn distributions(v: &Versus, rounds: &[Vec<Summary>]) -> Option<String> {
    let curves: Vec<(usize, Vec<(f64, f64)>)> = rounds
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i, curve(&merged(r)?))))
        .collect();
    if curves.is_empty() {
        return None;
    }
    let mut p = overlay_plot(
        "Latency by percentile, each target's rounds together",
        curves.iter().map(|(_, c)| c.as_slice()),
    );
    for (i, c) in &curves {
        let line: Vec<(f64, Option<f64>)> = c.iter().map(|&(x, y)| (x, Some(y))).collect();
        p.line(&class(*i), &v.targets[*i].name, &line);
    }
    legend(&mut p, v);
    Some(p.finish())
}

fn legend(p: &mut Plot, v: &Versus) {
    let classes: Vec<String> = (0..v.targets.len()).map(class).collect();
    let entries: Vec<(&str, &str)> = classes
        .iter()
        .zip(&v.targets)
        .map(|(c, t)| (c.as_str(), t.name.as_str()))
        .collect();
    p.legend(&entries);
}

/// One measure's value in each round, a line and dots per target.
fn by_round(v: &Versus, m: Measure, label: &str) -> Option<String> {
    let series: Vec<(usize, &[f64])> = v
        .targets
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let row = t.rows.iter().find(|r| r.measure == m)?;
            (!row.values.is_empty()).then_some((i, row.values.as_slice()))
        })
        .collect();
    let rounds = series.iter().map(|s| s.1.len()).max()?;
    let hi = series
        .iter()
        .flat_map(|s| s.1.iter())
        .copied()
        .fold(0.0, f64::max);
    let x = Axis {
        min: 0.5,
        max: rounds as f64 + 0.5,
        log: false,
    };
    let mut p = Plot::sized(label, x, Axis::linear(hi), 470.0, 300.0);
    let ticks: Vec<(f64, String)> = (1..=rounds).map(|r| (r as f64, r.to_string())).collect();
    let y_label = |y: f64| match m {
        Measure::Rps => rate_label(y),
        _ => short_ms(y),
    };
    p.axes(&ticks, y_label, "round", label);
    for (i, values) in &series {
        let c = class(*i);
        let line: Vec<(f64, Option<f64>)> = values
            .iter()
            .enumerate()
            .map(|(r, &y)| ((r + 1) as f64, Some(y)))
            .collect();
        p.line(&c, &v.targets[*i].name, &line);
        for (r, &y) in values.iter().enumerate() {
            let tip = format!(
                "{} round {}: {}",
                v.targets[*i].name,
                r + 1,
                value(m, Some(y))
            );
            p.dot(&c, (r + 1) as f64, y, &tip);
        }
    }
    legend(&mut p, v);
    Some(p.finish())
}

/// The merged latency ladder, a column per target.
fn ladder(v: &Versus) -> String {
    let mut o = String::from(r#"<table class="num"><thead><tr><th></th>"#);
    for (i, t) in v.targets.iter().enumerate() {
        let _ = write!(o, "<th>{}{}</th>", swatch(i), esc(&t.name));
    }
    o.push_str("</tr></thead><tbody>");
    for (k, rung) in v.targets[0].ladder.iter().enumerate() {
        let _ = write!(o, "<tr><th>{}</th>", rung.percentile);
        for (i, t) in v.targets.iter().enumerate() {
            let ms = t.ladder.get(k).and_then(|r| r.ms);
            let _ = write!(
                o,
                r#"<td data-key="targets.{i}.ladder.{k}.ms">{}</td>"#,
                esc(&value(Measure::Latency(crate::analysis::Pct::P50), ms))
            );
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table>");
    o
}

/// The whole page; `json` is the comparison's JSON (`--format json`'s), embedded for tools.
pub fn page(v: &Versus, rounds: &[Vec<Summary>], json: &str) -> String {
    let fewest = v.targets.iter().map(|t| t.rounds).min().unwrap_or(0);
    let title = format!(
        "spate compare: {} targets, {fewest} rounds each",
        v.targets.len()
    );
    let mut o = page_start(&title);
    let _ = write!(o, "<header><h1>{}</h1>", esc(&title));
    for (i, t) in v.targets.iter().enumerate() {
        let _ = write!(
            o,
            "<p>{}<b>{}</b> {}{}</p>",
            swatch(i),
            esc(&t.name),
            esc(&t.url),
            if i == v.reference {
                " (the reference)"
            } else {
                ""
            }
        );
    }
    let _ = write!(
        o,
        r#"<p class="meta">Each figure is the median of the rounds, with their range; against the reference the change (a ratio; errors in percentage points) with its {:.0} % interval and the exact Mann-Whitney U test's p. A verdict needs p at most {} and a change beyond {:.0} %. spate {}</p></header><main>"#,
        100.0 * (1.0 - v.alpha),
        v.alpha,
        100.0 * v.noise,
        env!("CARGO_PKG_VERSION")
    );
    let mut notes = String::new();
    if v.smallest_p > v.alpha {
        let _ = write!(
            notes,
            "<p>With {fewest} rounds a target the smallest possible p is {:.3}, above alpha {}: no difference can show. Use --rounds {} or more.</p>",
            v.smallest_p, v.alpha, v.rounds_needed
        );
    }
    for t in v.targets.iter().filter(|t| !t.limited_rounds.is_empty()) {
        let r: Vec<String> = t.limited_rounds.iter().map(usize::to_string).collect();
        let _ = write!(
            notes,
            "<p>spate itself may have limited {} in round {} (its insight says so): that target's figures may be spate's, not the server's.</p>",
            esc(&t.name),
            r.join(", ")
        );
    }
    section(&mut o, "summary", "Summary", &(table(v) + &notes), "");
    if let Some(svg) = distributions(v, rounds) {
        section(
            &mut o,
            "percentiles",
            "Latency by percentile",
            &format!(
                r#"{svg}<h3>All rounds' responses together</h3>{}"#,
                ladder(v)
            ),
            "Each target's responses of every round in one curve; each step right is ten times rarer (90 %, 99 %, 99.9 %).",
        );
    }
    let rps = by_round(v, Measure::Rps, "req/s");
    let p99 = by_round(v, Measure::Latency(crate::analysis::Pct::P99), "p99");
    if rps.is_some() || p99.is_some() {
        section(
            &mut o,
            "rounds",
            "Round by round",
            &format!(
                r#"<div class="cards"><div>{}</div><div>{}</div></div>"#,
                rps.unwrap_or_default(),
                p99.unwrap_or_default()
            ),
            "Each round's requests/sec and p99 by target, in the order run: a drift of the machine shows as a slope shared by all.",
        );
    }
    page_end(
        &mut o,
        "The comparison's JSON (spate compare --format json) is in this page (script#spate-compare), for other tools.",
        "spate-compare",
        json,
    );
    o
}
