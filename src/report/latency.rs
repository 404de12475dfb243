//! The latency tables of the text report: the percentiles, the histogram and the legend of the
//! levels that colour both (bands of the run, or words against the `--slo` targets). Rendered
//! from a `Summary`; the words always say what the colour says.

use std::fmt::Write as _;

use super::Report;
use super::colour::Palette;
use super::text::opt_ms;
use crate::analysis::{LEVEL_RATIOS, LEVEL_WORDS, Levels, Standing};
use crate::numbers::{count, millis};

const BAR_WIDTH: usize = 20;

/// A histogram bin as both reports draw it: its share of the responses, its length against the
/// fullest bin (0 to 1), and its level (that of its geometric middle) with the level's name.
pub(super) struct BinShown<'a> {
    pub bin: &'a crate::stats::Bin,
    pub share: f64,
    pub fill: f64,
    pub level: Option<Standing>,
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
            level: s
                .levels
                .as_ref()
                .map(|l| l.of_latency((b.from_ms * b.to_ms).sqrt())),
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
        match (v, &s.levels) {
            // Without targets a percentile's band is itself: only the colour is shown.
            (Some(ms), Some(l @ Levels::Relative { .. })) => {
                writeln!(o, "{}", pal.level(l.of_percentile(label, ms).index, &line))?
            }
            (Some(ms), Some(l)) => {
                let Standing { index, name, .. } = l.of_percentile(label, ms);
                writeln!(o, "{}", pal.level(index, &format!("{line}  {name}")))?
            }
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
    // The count column as wide as its widest count, leaving the level's word room to end
    // within 80 columns.
    let cw = s
        .histogram
        .iter()
        .map(|b| count(b.count).len())
        .max()
        .unwrap_or(1);
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
        let (bar, name) = match &level {
            Some(l) => (pal.level(l.index, &bar), l.short.as_str()),
            None => (bar, ""),
        };
        writeln!(
            o,
            "  {:>10} .. {:>10} |{bar}| {:>cw$} {share:6.2}% {name}",
            millis(b.from_ms),
            millis(b.to_ms),
            count(b.count),
        )?;
    }
    Ok(())
}

pub(super) fn legend(o: &mut String, s: &Report, pal: Palette) -> std::fmt::Result {
    match &s.levels {
        None => Ok(()),
        Some(Levels::Relative {
            bounds_ms, names, ..
        }) => {
            writeln!(
                o,
                "\nBands of this run's percentiles (--slo targets give them words)"
            )?;
            let bounds: Vec<String> = bounds_ms.iter().map(|&b| millis(b)).collect();
            // Every value column as wide as its widest value, so that no value breaks the table.
            let w = bounds.iter().map(String::len).max().unwrap_or(0);
            let cell = |i: usize| format!("{:<10} {:>w$}", names[i], bounds[i.min(9)]);
            // Two bands a line: 2 + 2 x (10 + 1 + 10) + 4 columns at most.
            for i in (0..11).step_by(2) {
                let left = pal.level(i, &cell(i));
                match i + 1 < 11 {
                    true => writeln!(o, "  {left}    {}", pal.level(i + 1, &cell(i + 1)))?,
                    false => writeln!(o, "  {left}")?,
                }
            }
            Ok(())
        }
        Some(Levels::Slo { targets }) => {
            let list: Vec<String> = targets
                .iter()
                .map(|t| format!("{} {}", t.percentile, millis(t.ms)))
                .collect();
            writeln!(o, "\nWords against the --slo targets ({})", list.join(", "))?;
            let mut from = 0.0;
            for (word, upto) in LEVEL_WORDS {
                let (op, at) = match upto.is_finite() {
                    true => ("<=", upto),
                    false => (" >", from),
                };
                let range = format!("{op} {:>3.0} % of the target", at * 100.0);
                // Coloured as the middle of its range.
                let mid = match upto.is_finite() {
                    true => (from + upto) / 2.0,
                    false => 2.0,
                };
                let index = LEVEL_RATIOS.iter().position(|&r| mid <= r).unwrap_or(10);
                writeln!(o, "  {}", pal.level(index, &format!("{word:<10} {range}")))?;
                from = upto;
            }
            writeln!(
                o,
                "  A percentile is read against its own target or the next one above it,\n  a histogram bar against the first target it does not exceed."
            )
        }
    }
}
