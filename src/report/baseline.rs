//! The text report's comparison with `--baseline`: each metric's baseline, the run and the
//! change, a PASS/FAIL line per `--max-regression` gate, and the settings in which the runs
//! differ. Words only; the comparison itself is `analysis::baseline`'s.

use std::fmt::Write as _;

use super::Report;
use super::colour::Palette;
use crate::analysis::Delta;
use crate::numbers::{millis, per_second};

/// A value in its unit, as the rest of the report shows it.
pub(super) fn value(unit: &str, v: Option<f64>) -> String {
    match (unit, v) {
        (_, None) => "-".into(),
        ("ms", Some(v)) => millis(v),
        ("%", Some(v)) => format!("{v:.2} %"),
        (_, Some(v)) => per_second(v),
    }
}

/// The change from the baseline in the metric's own direction: "+100.0 %", "-3.2 %",
/// "+0.50 pp".
pub(super) fn change(d: &Delta) -> String {
    match (d.worse_by, d.unit.as_str()) {
        (None, _) => "-".into(),
        // + 0.0 turns a -0.0 into 0.0, so that no change reads "+0.0", not "-0.0".
        (Some(w), "%") => format!("{:+.2} pp", w + 0.0),
        // For the rate, worse is lower.
        (Some(w), "req/s") => format!("{:+.1} %", -w + 0.0),
        (Some(w), _) => format!("{:+.1} %", w + 0.0),
    }
}

/// "100.0 % worse than the baseline; at most 20 % allowed".
pub(super) fn gate_sentence(d: &Delta) -> String {
    let unit = if d.unit == "%" {
        "percentage points"
    } else {
        "%"
    };
    let limit = d.limit.unwrap_or(0.0);
    match d.worse_by {
        None => format!(
            "{}: nothing to compare; at most {limit} {unit} worse allowed",
            d.metric
        ),
        Some(w) if w >= 0.0 => format!(
            "{} is {w:.1} {unit} worse than the baseline; at most {limit} {unit} allowed",
            d.metric
        ),
        Some(w) => format!(
            "{} is {:.1} {unit} better than the baseline; at most {limit} {unit} worse allowed",
            d.metric, -w
        ),
    }
}

pub(super) fn section(o: &mut String, s: &Report, pal: Palette) -> std::fmt::Result {
    let Some(c) = &s.baseline else {
        return Ok(());
    };
    match c.files.as_slice() {
        [one] => writeln!(o, "\nAgainst the baseline ({one})")?,
        many => writeln!(o, "\nAgainst the baseline (median of {} runs)", many.len())?,
    }
    let several = c.files.len() > 1;
    let rows: Vec<[String; 4]> = c
        .rows
        .iter()
        .map(|d| {
            let range = match (several, d.baseline_min, d.baseline_max) {
                (true, Some(lo), Some(hi)) => {
                    format!(
                        "{} .. {}",
                        value(&d.unit, Some(lo)),
                        value(&d.unit, Some(hi))
                    )
                }
                _ => String::new(),
            };
            [
                value(&d.unit, d.baseline),
                value(&d.unit, d.now),
                change(d),
                range,
            ]
        })
        .collect();
    let w = |i: usize| rows.iter().map(|r| r[i].len()).max().unwrap_or(0);
    let (wb, wn, wc) = (w(0).max(8), w(1).max(8), w(2).max(6));
    writeln!(
        o,
        "  {:<8} {:>wb$}  {:>wn$}  {:>wc$}{}",
        "",
        "baseline",
        "this run",
        "change",
        if several { "  baseline range" } else { "" }
    )?;
    for (d, r) in c.rows.iter().zip(&rows) {
        let line = format!(
            "  {:<8} {:>wb$}  {:>wn$}  {:>wc$}  {}",
            d.metric, r[0], r[1], r[2], r[3]
        );
        writeln!(o, "{}", line.trim_end())?;
    }
    for d in c.rows.iter().filter(|d| d.limit.is_some()) {
        let verdict = match d.pass {
            true => pal.pass("PASS"),
            false => pal.fail("FAIL"),
        };
        writeln!(o, "  {verdict}  {}", gate_sentence(d))?;
    }
    for d in &c.differences {
        let note = format!(
            "note: {} was {} in the baseline and is {} here",
            d.setting, d.baseline, d.now
        );
        for (i, line) in super::text::wrap(&note, 76).iter().enumerate() {
            writeln!(o, "  {}{line}", if i == 0 { "" } else { "      " })?;
        }
    }
    Ok(())
}
