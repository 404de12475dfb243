//! `spate compare`'s report: per measure each target's median and range over the rounds, its
//! change against the reference with the interval, p and verdict; the latency of all rounds
//! together side by side; what the design cannot show; and, as markdown, one table to paste.

use std::fmt::Write as _;

use serde::Serialize;

use crate::analysis::{Change, Contender, Measure, Outcome, Row, Versus};
use crate::escape::term_str;
use crate::numbers::{millis, per_second};

/// How `spate compare` prints its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareForm {
    Text,
    Markdown,
    Json,
}

fn title(m: Measure) -> String {
    match m {
        Measure::Rps => "Requests/sec".into(),
        Measure::Latency(p) => format!("Latency {}", p.key()),
        Measure::Errors => "Errors (failed or status >= 400, % of attempted)".into(),
        Measure::Unanswered => {
            "Connections never answered (not opened, or no response; % of -c)".into()
        }
        Measure::Cpu => "spate's CPU per response".into(),
    }
}

pub(crate) fn value(m: Measure, v: Option<f64>) -> String {
    match (m, v) {
        (_, None) => "-".into(),
        (Measure::Rps, Some(v)) => per_second(v),
        (Measure::Latency(_), Some(v)) => millis(v),
        (Measure::Errors | Measure::Unanswered, Some(v)) => format!("{v:.2} %"),
        (Measure::Cpu, Some(v)) => format!("{v:.2} us"),
    }
}

fn verdict(m: Measure, o: Outcome) -> &'static str {
    match (m, o) {
        (_, Outcome::Same) => "~",
        (Measure::Rps | Measure::Latency(_), Outcome::Better) => "faster",
        (Measure::Rps | Measure::Latency(_), Outcome::Worse) => "slower",
        (Measure::Errors, Outcome::Better) => "fewer errors",
        (Measure::Errors, Outcome::Worse) => "more errors",
        (Measure::Unanswered, Outcome::Better) => "fewer unanswered",
        (Measure::Unanswered, Outcome::Worse) => "more unanswered",
        (Measure::Cpu, Outcome::Better) => "less CPU",
        (Measure::Cpu, Outcome::Worse) => "more CPU",
    }
}

/// A ratio with two decimals, or two significant digits below 0.1 (0.0043, not 0.00).
pub(crate) fn times(r: f64) -> String {
    if r > 0.0 && r < 0.1 {
        let decimals = (1 - r.log10().floor() as i32).max(2) as usize;
        format!("{r:.decimals$}")
    } else {
        format!("{r:.2}")
    }
}

/// "0.50x (0.49 .. 0.51)  p 0.008  slower"; errors in percentage points.
pub(crate) fn change_words(m: Measure, c: &Change) -> String {
    let (est, range) = match m.in_points() {
        true => (
            format!("{:+.2} pp", c.estimate + 0.0),
            c.interval
                .map(|(a, b)| format!(" ({:+.2} .. {:+.2})", a + 0.0, b + 0.0)),
        ),
        false => (
            format!("{}x", times(c.estimate)),
            c.interval
                .map(|(a, b)| format!(" ({} .. {})", times(a), times(b))),
        ),
    };
    format!(
        "{est}{}  p {:.3}  {}",
        range.unwrap_or_default(),
        c.p,
        verdict(m, c.verdict)
    )
}

fn row_of(v: &Versus, t: usize, m: Measure) -> Option<&Row> {
    v.targets[t].rows.iter().find(|r| r.measure == m)
}

/// The comparison as text, `loads` being what each target's round ran in the header's words
/// (the same for all: said once); the targets' names and URLs (from the command line or a
/// file) escaped for the terminal.
pub fn text(v: &Versus, loads: &[String]) -> String {
    let mut o = String::new();
    let _ = write_text(&mut o, &shown(v), loads);
    o
}

/// `v` with its targets' names and URLs escaped for the terminal.
fn shown(v: &Versus) -> Versus {
    let mut v = v.clone();
    for t in &mut v.targets {
        t.name = term_str(&t.name).into_owned();
        t.url = term_str(&t.url).into_owned();
    }
    v
}

fn write_text(o: &mut String, v: &Versus, loads: &[String]) -> std::fmt::Result {
    let rounds = v.targets.iter().map(|t| t.rounds).min().unwrap_or(0);
    writeln!(
        o,
        "spate compare: {} targets, {rounds} rounds each, in turn; reference {}",
        v.targets.len(),
        v.targets[v.reference].name
    )?;
    let name_w = v.targets.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let same = loads.windows(2).all(|w| w[0] == w[1]);
    for (i, t) in v.targets.iter().enumerate() {
        match loads.get(i).filter(|_| !same) {
            Some(load) => writeln!(o, "  {:<name_w$}  {}  ({})", t.name, t.url, term_str(load))?,
            None => writeln!(o, "  {:<name_w$}  {}", t.name, t.url)?,
        }
    }
    if let Some(load) = loads.first().filter(|_| same) {
        writeln!(o, "Each round: {}", term_str(load))?;
    }
    writeln!(
        o,
        "Each figure: the median of the rounds and their range; against the reference the\n\
         change with its {:.0} % interval, the U test's p, and the verdict (~: none shown).",
        100.0 * (1.0 - v.alpha)
    )?;
    for m in Measure::ALL {
        let rows: Vec<(String, String, String, String)> = (0..v.targets.len())
            .filter_map(|i| {
                let r = row_of(v, i, m)?;
                let range = match (r.min, r.max) {
                    (Some(a), Some(b)) => format!("{} .. {}", value(m, Some(a)), value(m, Some(b))),
                    _ => String::new(),
                };
                let vs = match (i == v.reference, &r.change) {
                    (true, _) => "reference".to_owned(),
                    (false, Some(c)) => change_words(m, c),
                    (false, None) => String::new(),
                };
                Some((v.targets[i].name.clone(), value(m, r.median), range, vs))
            })
            .collect();
        if rows.iter().all(|r| r.1 == "-") {
            continue;
        }
        writeln!(o, "\n{}", title(m))?;
        let wv = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
        let wr = rows.iter().map(|r| r.2.len()).max().unwrap_or(0);
        for (name, val, range, vs) in rows {
            let line = format!("  {name:<name_w$}  {val:>wv$}  {range:<wr$}  {vs}");
            writeln!(o, "{}", line.trim_end())?;
        }
    }
    writeln!(o, "\nLatency, the responses of all rounds together")?;
    let header: Vec<String> = v.targets.iter().map(|t| t.name.clone()).collect();
    let cells: Vec<Vec<String>> = v
        .targets
        .iter()
        .map(|t| {
            t.ladder
                .iter()
                .map(|r| r.ms.map_or("-".into(), millis))
                .collect()
        })
        .collect();
    let w: Vec<usize> = (0..header.len())
        .map(|i| {
            cells[i]
                .iter()
                .map(String::len)
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut line = format!("  {:<8}", "");
    for (h, w) in header.iter().zip(&w) {
        let _ = write!(line, "  {h:>w$}");
    }
    writeln!(o, "{line}")?;
    for (k, rung) in v.targets[0].ladder.iter().enumerate() {
        let mut line = format!("  {:<8}", rung.percentile);
        for (c, w) in cells.iter().zip(&w) {
            let _ = write!(line, "  {:>w$}", c[k]);
        }
        writeln!(o, "{line}")?;
    }
    if v.smallest_p > v.alpha {
        writeln!(
            o,
            "\nWith {rounds} rounds a target the smallest possible p is {:.3}, above alpha {}: no\n\
             difference can show. Use --rounds {} or more.",
            v.smallest_p, v.alpha, v.rounds_needed
        )?;
    }
    for t in &v.targets {
        let Some(median) = t
            .rows
            .iter()
            .find(|r| r.measure == Measure::Unanswered)
            .and_then(|r| r.median)
            .filter(|&m| m > 0.0)
        else {
            continue;
        };
        writeln!(
            o,
            "\n{}: in the median round {median:.2} % of its connections never got a response (not\n\
             opened, or never answered while the others were): its latency describes only the\n\
             connections it answered.",
            t.name
        )?;
    }
    for t in v.targets.iter().filter(|t| !t.limited_rounds.is_empty()) {
        let rounds: Vec<String> = t.limited_rounds.iter().map(usize::to_string).collect();
        writeln!(
            o,
            "\nspate itself may have limited {} in round {} (its insight says so; --save-dir\n\
             keeps each round's report): that target's figures may be spate's, not the server's.",
            t.name,
            rounds.join(", ")
        )?;
    }
    Ok(())
}

/// One row a target: the medians, and the change of requests/sec and p99 against the reference.
pub fn markdown(v: &Versus) -> String {
    let v = &shown(v);
    let reference = &v.targets[v.reference].name;
    let mut o = format!(
        "| target | req/s | p50 | p90 | p99 | p99.9 | errors | unanswered | req/s vs {reference} | p99 vs {reference} |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---|---|\n"
    );
    for (i, t) in v.targets.iter().enumerate() {
        let cell = |m: Measure| value(m, row_of(v, i, m).and_then(|r| r.median));
        let vs = |m: Measure| match (
            i == v.reference,
            row_of(v, i, m).and_then(|r| r.change.as_ref()),
        ) {
            (true, _) => "reference".to_owned(),
            (false, Some(c)) => format!(
                "{}x {} (p {:.3})",
                times(c.estimate),
                verdict(m, c.verdict),
                c.p
            ),
            (false, None) => "-".into(),
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            t.name.replace('|', "\\|"),
            cell(Measure::Rps),
            cell(Measure::Latency(crate::analysis::Pct::P50)),
            cell(Measure::Latency(crate::analysis::Pct::P90)),
            cell(Measure::Latency(crate::analysis::Pct::P99)),
            cell(Measure::Latency(crate::analysis::Pct::P999)),
            cell(Measure::Errors),
            cell(Measure::Unanswered),
            vs(Measure::Rps),
            vs(Measure::Latency(crate::analysis::Pct::P99)),
        );
    }
    let rounds = v.targets.iter().map(|t| t.rounds).min().unwrap_or(0);
    let _ = writeln!(
        o,
        "\nMedians of {rounds} rounds a target; changes with the exact Mann-Whitney U test at alpha {} and a {:.0} % noise floor (spate compare).",
        v.alpha,
        v.noise * 100.0
    );
    if v.smallest_p > v.alpha {
        let _ = writeln!(
            o,
            "With {rounds} rounds a target no difference can show (the smallest possible p is {:.3}, above alpha): use --rounds {} or more.",
            v.smallest_p, v.rounds_needed
        );
    }
    o
}

/// The comparison for programs, as docs/compare-schema.json describes it.
#[derive(Serialize)]
struct Wire<'a> {
    schema_version: u32,
    spate_version: &'a str,
    reference: &'a str,
    alpha: f64,
    noise: f64,
    order: &'a str,
    seed: Option<u64>,
    smallest_p: f64,
    rounds_needed: usize,
    targets: &'a [Contender],
}

/// Bumped whenever a field of the comparison's JSON changes meaning or disappears.
pub const COMPARE_SCHEMA_VERSION: u32 = 1;

/// The comparison as JSON; `seed` is the shuffle's (`--order random`), `None` for the order given.
pub fn json(v: &Versus, seed: Option<u64>) -> String {
    let wire = Wire {
        schema_version: COMPARE_SCHEMA_VERSION,
        spate_version: env!("CARGO_PKG_VERSION"),
        reference: &v.targets[v.reference].name,
        alpha: v.alpha,
        noise: v.noise,
        order: if seed.is_some() { "random" } else { "given" },
        seed,
        smallest_p: v.smallest_p,
        rounds_needed: v.rounds_needed,
        targets: &v.targets,
    };
    // Plain structs of numbers and strings cannot fail to serialize.
    serde_json::to_string_pretty(&wire).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    #[test]
    fn small_ratios_keep_two_significant_digits() {
        use super::times;
        assert_eq!(times(0.52), "0.52");
        assert_eq!(times(12.509), "12.51");
        assert_eq!(times(0.0043), "0.0043");
        assert_eq!(times(0.099), "0.099");
        assert_eq!(times(0.1), "0.10");
        assert_eq!(times(0.0), "0.00");
    }
}
