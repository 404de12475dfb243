//! The latency tables of the text report: the percentiles, the histogram and the legend of the
//! levels that colour both (bands of the run, or SLO levels with `--slo`). Rendered from a
//! `Summary`; the words always say what the colour says.

use std::fmt::Write as _;

use super::Report;
use super::colour::Palette;
use super::text::opt_ms;
use crate::analysis::{LevelMode, Levels};
use crate::numbers::{count, millis};

const BAR_WIDTH: usize = 20;

/// The level name of a latency, or "" without levels.
fn level_of(levels: Option<&Levels>, ms: f64) -> Option<usize> {
    levels.map(|l| l.level_of(ms))
}

/// A histogram bin as both reports draw it: its share of the responses, its length against the
/// fullest bin (0 to 1), and its level (that of its geometric middle) with the level's name.
pub(super) struct BinShown<'a> {
    pub bin: &'a crate::stats::Bin,
    pub share: f64,
    pub fill: f64,
    pub level: Option<(usize, &'a str)>,
}

pub(super) fn bins_shown(s: &Report) -> Vec<BinShown<'_>> {
    let most = s
        .histogram
        .iter()
        .map(|b| b.count)
        .max()
        .unwrap_or(0)
        .max(1);
    s.histogram
        .iter()
        .map(|b| BinShown {
            bin: b,
            share: 100.0 * b.count as f64 / s.latency.count.max(1) as f64,
            fill: b.count as f64 / most as f64,
            level: s.levels.as_ref().map(|l| {
                let i = l.level_of((b.from_ms * b.to_ms).sqrt());
                (i, l.names[i].as_str())
            }),
        })
        .collect()
}

pub(super) fn percentiles(o: &mut String, s: &Report, pal: Palette) -> std::fmt::Result {
    let l = &s.latency;
    // An MCP call ends at its JSON-RPC answer, which may come before its stream's last byte
    // or on another connection's stream.
    let end = match s.mcp {
        Some(_) => "the call's JSON-RPC answer",
        None => "last body byte",
    };
    let definition = if s.open_model.is_some() {
        format!("open model: intended send time to {end}")
    } else {
        format!("closed model: request start to {end}")
    };
    writeln!(o, "\nLatency distribution ({definition})")?;
    if l.count == 0 {
        return writeln!(o, "  no completed responses");
    }
    for (label, v) in l.percentiles.rows() {
        let line = format!("  {label:<7} {:>12}", opt_ms(v));
        match (v.and_then(|ms| level_of(s.levels.as_ref(), ms)), &s.levels) {
            // Without targets a percentile's band is itself: only the colour is shown.
            (Some(level), Some(l)) if l.mode == LevelMode::Relative => {
                writeln!(o, "{}", pal.level(level, &line))?
            }
            (Some(level), Some(l)) => writeln!(
                o,
                "{}",
                pal.level(level, &format!("{line}  {}", l.names[level]))
            )?,
            _ => writeln!(o, "{line}")?,
        }
    }
    if l.clamped > 0 {
        writeln!(
            o,
            "  {} values above 1 h were counted as 1 h",
            count(l.clamped)
        )?;
    }
    Ok(())
}

pub(super) fn histogram(o: &mut String, s: &Report, pal: Palette) -> std::fmt::Result {
    if s.histogram.is_empty() {
        return Ok(());
    }
    writeln!(o, "\nLatency histogram")?;
    for BinShown {
        bin: b,
        share,
        fill,
        level,
    } in bins_shown(s)
    {
        let width = (fill * BAR_WIDTH as f64).round() as usize;
        // A bin too small for half a cell still shows, as a sliver, so that it neither
        // vanishes nor looks like one that fills a cell.
        let bar = match (b.count, width) {
            (0, _) => String::new(),
            (_, 0) => ".".into(),
            (_, w) => "#".repeat(w),
        };
        let bar = format!("{bar:<BAR_WIDTH$}");
        let (bar, name) = match level {
            Some((i, name)) => (pal.level(i, &bar), name),
            None => (bar, ""),
        };
        writeln!(
            o,
            "  {:>10} .. {:>10} |{bar}| {:>10} {share:6.2}% {name}",
            millis(b.from_ms),
            millis(b.to_ms),
            count(b.count),
        )?;
    }
    Ok(())
}

pub(super) fn legend(o: &mut String, s: &Report, pal: Palette) -> std::fmt::Result {
    let Some(levels) = &s.levels else {
        return Ok(());
    };
    let bounds: Vec<String> = levels.bounds_ms.iter().map(|&b| millis(b)).collect();
    // Every value column as wide as its widest value, so that no value breaks the table.
    let w = bounds.iter().map(String::len).max().unwrap_or(0);
    let bound = |i: usize| &bounds[i.min(9)];
    match levels.mode {
        LevelMode::Relative => {
            writeln!(
                o,
                "\nBands of this run's percentiles (--slo targets make them levels)"
            )?;
            // Two bands a line: 2 + 2 x (10 + 1 + 10) + 4 columns at most.
            let cell = |i: usize| format!("{:<10} {:>w$}", levels.names[i], bound(i));
            for i in (0..11).step_by(2) {
                let left = pal.level(i, &cell(i));
                match i + 1 < 11 {
                    true => writeln!(o, "  {left}    {}", pal.level(i + 1, &cell(i + 1)))?,
                    false => writeln!(o, "  {left}")?,
                }
            }
        }
        LevelMode::Slo => {
            writeln!(
                o,
                "\nLevels (from the --slo targets, the run's percentiles elsewhere)"
            )?;
            for i in 0..11 {
                let (op, basis) = match i < 10 {
                    true => ("<=", levels.basis[i].as_str()),
                    false => (" >", ""),
                };
                let line = format!("{:<10} {op} {:>w$}  {basis}", levels.names[i], bound(i));
                writeln!(o, "  {}", pal.level(i, line.trim_end()))?;
            }
        }
    }
    Ok(())
}
