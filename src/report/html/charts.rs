//! The HTML report's charts, drawn from a `Report`: throughput and latency over time (one point
//! per second of the timeline), the percentile distribution (HdrHistogram's x = 1/(1-p) on a
//! log axis) and the latency histogram in the levels' colours. Figures come from the report
//! as they are; nothing here computes a statistic the JSON does not hold, except the percentile
//! curve, read from the JSON's own HdrHistogram.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use super::esc;
use super::svg::{Axis, Plot};
use crate::numbers::{count, millis};
use crate::report::Report;
use crate::report::colour::level_css;

/// The middle of each second and the entry's figure per second of it.
fn per_second(
    r: &Report,
    figure: impl Fn(&crate::stats::timeline::Entry) -> f64,
) -> Vec<(f64, f64)> {
    r.timeline
        .iter()
        .filter(|e| e.span_s > 0.0)
        .map(|e| (e.t_s + e.span_s / 2.0, figure(e) / e.span_s))
        .collect()
}

fn run_end(r: &Report) -> f64 {
    r.timeline.last().map_or(1.0, |e| e.t_s + e.span_s).max(1.0)
}

fn seconds_label(v: f64) -> String {
    match v {
        v if v >= 120.0 && (v % 60.0).abs() < 1e-9 => format!("{} min", v / 60.0),
        v => format!("{v} s"),
    }
}

/// Short duration labels for axes: "50 us", "2 ms", "1.5 s".
pub fn short_ms(ms: f64) -> String {
    let trim = |v: f64| {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    };
    match ms {
        m if m <= 0.0 => "0".into(),
        m if m < 1.0 => format!("{} us", trim(m * 1e3)),
        m if m < 1000.0 => format!("{} ms", trim(m)),
        m => format!("{} s", trim(m / 1e3)),
    }
}

pub(super) fn rate_label(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{}M", v / 1e6),
        v if v >= 1e3 => format!("{}k", v / 1e3),
        v => format!("{v}"),
    }
}

/// Responses, error responses (status >= 400), failures and (open model) dropped requests per
/// second.
pub fn throughput(r: &Report) -> Option<String> {
    if r.timeline.is_empty() {
        return None;
    }
    let ok = per_second(r, |e| e.completed as f64);
    let failed = per_second(r, |e| e.failed as f64);
    let errors = per_second(r, |e| e.error_status as f64);
    let dropped = per_second(r, |e| e.dropped.unwrap_or(0) as f64);
    let open = r.open_model.is_some();
    let top = ok
        .iter()
        .chain(&failed)
        .chain(&errors)
        .chain(&dropped)
        .map(|p| p.1)
        .fold(0.0, f64::max);
    let mut p = Plot::new(
        "Throughput over time: responses, error responses, failures and dropped requests per second",
        Axis::exact(run_end(r)),
        Axis::linear(top * 1.08),
    );
    let ticks = p.linear_x_ticks(seconds_label);
    p.axes(&ticks, rate_label, "seconds into the run", "per second");
    p.area("ok", "responses/s", &ok);
    let some = |v: &[(f64, f64)]| v.iter().map(|&(x, y)| (x, Some(y))).collect::<Vec<_>>();
    p.line("errors", "status >= 400/s", &some(&errors));
    p.line("failed", "failed/s", &some(&failed));
    let mut legend = vec![
        ("ok", "responses/s"),
        ("errors", "status >= 400/s"),
        ("failed", "failed/s"),
    ];
    if open {
        p.line("dropped", "dropped/s", &some(&dropped));
        legend.push(("dropped", "dropped/s"));
    }
    p.legend(&legend);
    Some(p.finish())
}

/// `--stages`: the load the profile asked for each second beside what the run did (a rate
/// profile: requests due and responses completed per second; a connection profile: the mean
/// target connections and those open at each second's end), with the stages and the breaking
/// point marked.
pub fn load(r: &Report) -> Option<String> {
    if r.stages.is_empty() || r.timeline.is_empty() {
        return None;
    }
    let connections = r.timeline.iter().any(|e| e.target_connections.is_some());
    type Points = Vec<(f64, f64)>;
    let (goal, done): (Points, Points) = match connections {
        true => (
            r.timeline
                .iter()
                .filter(|e| e.span_s > 0.0)
                .map(|e| (e.t_s + e.span_s / 2.0, e.target_connections.unwrap_or(0.0)))
                .collect(),
            r.timeline
                .iter()
                .map(|e| (e.t_s + e.span_s, e.connections_open as f64))
                .collect(),
        ),
        false => (
            per_second(r, |e| e.scheduled.unwrap_or(0) as f64),
            per_second(r, |e| e.completed as f64),
        ),
    };
    let (title, unit, y_name) = match connections {
        true => (
            "Load against its target: the connections --stages asked for and those open",
            ("target connections", "open at the second's end"),
            "connections",
        ),
        false => (
            "Load against its target: requests due and responses completed per second",
            ("target requests/s", "responses/s"),
            "per second",
        ),
    };
    let top = goal.iter().chain(&done).map(|p| p.1).fold(0.0, f64::max);
    let mut p = Plot::new(title, Axis::exact(run_end(r)), Axis::linear(top * 1.08));
    let ticks = p.linear_x_ticks(seconds_label);
    p.axes(&ticks, rate_label, "seconds into the run", y_name);
    let some = |v: &[(f64, f64)]| v.iter().map(|&(x, y)| (x, Some(y))).collect::<Vec<_>>();
    match connections {
        true => p.line("open", unit.1, &some(&done)),
        false => p.area("ok", unit.1, &done),
    }
    p.line("goal", unit.0, &some(&goal));
    marks(&mut p, r);
    let achieved = match connections {
        true => "open",
        false => "ok",
    };
    p.legend(&[("goal", unit.0), (achieved, unit.1)]);
    Some(p.finish())
}

/// `--stages`: each stage's start and the breaking point, as vertical lines.
fn marks(p: &mut Plot, r: &Report) {
    for row in r.stages.iter().filter(|row| row.start_s > 0.0) {
        p.vline("stage", row.start_s, &format!("stage {}", row.stage));
    }
    if let Some(b) = &r.breaking_point {
        let load = match (b.target_rate, b.target_connections) {
            (Some(rate), _) => format!("{}/s", crate::numbers::per_second(rate)),
            (None, Some(c)) => format!("{} connections", crate::numbers::per_second(c)),
            (None, None) => String::new(),
        };
        p.vline("broke", b.t_s + 0.5, &format!("breaking point {load}"));
    }
}

/// The latency targets of `--slo` (ms), with their names.
fn latency_targets(r: &Report) -> Vec<(String, f64)> {
    r.thresholds
        .iter()
        .filter(|v| v.unit == "ms")
        .map(|v| {
            (
                format!("{} {} {}", v.name, v.op, millis(v.target)),
                v.target,
            )
        })
        .collect()
}

/// p50, p90, p99 and max of each second, on a log axis, with the `--slo` targets.
pub fn latency(r: &Report) -> Option<String> {
    let seconds: Vec<_> = r
        .timeline
        .iter()
        .filter(|e| e.span_s > 0.0)
        .map(|e| (e.t_s + e.span_s / 2.0, e.latency_ms))
        .collect();
    let values = seconds.iter().filter_map(|(_, q)| *q);
    let lo = values.clone().map(|q| q.p50).fold(f64::INFINITY, f64::min);
    let hi = values.map(|q| q.max).fold(0.0, f64::max);
    if !lo.is_finite() {
        return None;
    }
    let targets = latency_targets(r);
    let lo = targets.iter().map(|t| t.1).fold(lo, f64::min);
    let hi = targets.iter().map(|t| t.1).fold(hi, f64::max);
    let mut p = Plot::new(
        "Latency over time: p50, p90, p99 and max of each second, log scale",
        Axis::exact(run_end(r)),
        Axis::log(lo, hi),
    );
    let ticks = p.linear_x_ticks(seconds_label);
    p.axes(&ticks, short_ms, "seconds into the run", "latency (log)");
    type Pick = fn(&crate::stats::timeline::Quantiles) -> f64;
    let series: [(&str, &str, Pick); 4] = [
        ("max", "max", |q| q.max),
        ("p99", "p99", |q| q.p99),
        ("p90", "p90", |q| q.p90),
        ("p50", "p50", |q| q.p50),
    ];
    for (class, name, pick) in series {
        let points: Vec<(f64, Option<f64>)> = seconds
            .iter()
            .map(|(x, q)| (*x, q.as_ref().map(pick)))
            .collect();
        p.line(class, name, &points);
    }
    for (name, ms) in &targets {
        p.hline("target", *ms, name);
    }
    marks(&mut p, r);
    p.legend(&[
        ("p50", "p50"),
        ("p90", "p90"),
        ("p99", "p99"),
        ("max", "max"),
    ]);
    Some(p.finish())
}

/// The percentiles to plot: the 1/(1-p) axis in even steps, up to the last percentile that
/// has at least one response beyond it.
pub(super) fn curve(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    const STEPS: usize = 240;
    let decades = (h.len() as f64).log10().clamp(1.0, 6.0);
    (0..=STEPS)
        .map(|i| {
            let x = 10f64.powf(decades * i as f64 / STEPS as f64);
            let q = 1.0 - 1.0 / x;
            (x, h.value_at_quantile(q) as f64 / 1e6)
        })
        .collect()
}

pub(super) fn pct_label(x: f64) -> String {
    let p = 100.0 * (1.0 - 1.0 / x);
    let s = format!("{p:.4}");
    format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
}

/// An empty percentile plot with its axes: 1/(1-p) on a log axis up to `x_max`, latency from
/// `lo` to `hi` ms on another.
pub(super) fn percentile_plot(
    label: &str,
    (x_max, lo, hi): (f64, f64, f64),
    w: f64,
    h: f64,
) -> Plot {
    let mut p = Plot::sized(label, Axis::log(1.0, x_max), Axis::log(lo, hi), w, h);
    let ticks: Vec<(f64, String)> = (0..=6)
        .map(|d| 10f64.powi(d))
        .filter(|&x| x <= x_max * 1.0001)
        .map(|x| (x, pct_label(x)))
        .collect();
    p.axes(&ticks, short_ms, "percentile", "latency (log)");
    p
}

/// An empty percentile plot, page wide, whose axes hold every one of `curves`.
pub(super) fn overlay_plot<'a>(
    label: &str,
    curves: impl Iterator<Item = &'a [(f64, f64)]> + Clone,
) -> Plot {
    let points = || curves.clone().flatten();
    let x_max = points().map(|p| p.0).fold(10.0, f64::max);
    let lo = points()
        .map(|p| p.1)
        .filter(|&y| y > 0.0)
        .fold(f64::INFINITY, f64::min);
    let hi = points().map(|p| p.1).fold(0.0, f64::max);
    percentile_plot(label, (x_max, lo, hi), 960.0, 360.0)
}

/// HdrHistogram's percentile plot: latency by percentile, the tail stretched out on a log axis
/// of 1/(1-p), with the `--slo` targets as dots at their percentiles.
pub fn distribution(r: &Report) -> Option<String> {
    let h = crate::stats::from_base64_v2(&r.latency.hdr_base64).filter(|h| !h.is_empty())?;
    let points = curve(&h);
    let last_x = points.last().map_or(10.0, |p| p.0);
    let targets: Vec<(f64, f64, String)> = r
        .thresholds
        .iter()
        .filter(|v| v.unit == "ms")
        .filter_map(|v| {
            let p: f64 = v.name.strip_prefix('p')?.parse().ok()?;
            Some((
                1.0 / (1.0 - p / 100.0),
                v.target,
                format!("{} {} {}", v.name, v.op, millis(v.target)),
            ))
        })
        .collect();
    let lo = points
        .iter()
        .map(|p| p.1)
        .filter(|&v| v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let hi = points.iter().map(|p| p.1).fold(0.0, f64::max);
    let lo = targets.iter().map(|t| t.1).fold(lo, f64::min);
    let hi = targets.iter().map(|t| t.1).fold(hi, f64::max);
    let x_max = targets.iter().map(|t| t.0).fold(last_x, f64::max);
    let mut p = percentile_plot(
        "Latency by percentile (HdrHistogram style: the tail stretched on a log axis)",
        (x_max, lo, hi),
        640.0,
        330.0,
    );
    let line: Vec<(f64, Option<f64>)> = points.iter().map(|&(x, y)| (x, Some(y))).collect();
    p.line("dist", "latency by percentile", &line);
    for (x, ms, name) in &targets {
        p.dot("target", *x, *ms, name);
    }
    Some(p.finish())
}

/// The latency histogram as horizontal bars in the colour of each bin's level, as the text
/// report draws it.
pub fn histogram(r: &Report) -> Option<String> {
    if r.histogram.is_empty() {
        return None;
    }
    const ROW: f64 = 22.0;
    const BAR_X: f64 = 250.0;
    const BAR_W: f64 = 520.0;
    let h = ROW * r.histogram.len() as f64 + 8.0;
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg class="chart bars" viewBox="0 0 960 {h}" role="img" aria-label="Latency histogram">"#
    );
    for (i, shown) in crate::report::latency::bins_shown(r)
        .into_iter()
        .enumerate()
    {
        let (b, share) = (shown.bin, shown.share);
        let y = 4.0 + ROW * i as f64;
        let (fill, name) = match &shown.level {
            Some(l) => (level_css(l.index), l.name.as_str()),
            None => ("#888888".to_owned(), ""),
        };
        // A bin too small to see still shows, as a sliver.
        let w = match b.count {
            0 => 0.0,
            _ => (shown.fill * BAR_W).max(1.5),
        };
        let range = format!("{} .. {}", millis(b.from_ms), millis(b.to_ms));
        let _ = write!(
            out,
            r#"<g><title>{range}: {} ({share:.2} %) {}</title><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text><rect x="{BAR_X}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{fill}"/><text class="tick" x="{:.1}" y="{:.1}">{} · {share:.2} % {}</text></g>"#,
            count(b.count),
            esc(name),
            BAR_X - 10.0,
            y + 15.0,
            esc(&range),
            y + 3.0,
            ROW - 6.0,
            BAR_X + w + 8.0,
            y + 15.0,
            count(b.count),
            esc(name)
        );
    }
    out.push_str("</svg>");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_as_people_write_them() {
        assert_eq!(short_ms(0.05), "50 us");
        assert_eq!(short_ms(2.0), "2 ms");
        assert_eq!(short_ms(1500.0), "1.5 s");
        assert_eq!(pct_label(1.0), "0%");
        assert_eq!(pct_label(100.0), "99%");
        assert_eq!(pct_label(1000.0), "99.9%");
        assert_eq!(seconds_label(600.0), "10 min");
        assert_eq!(seconds_label(30.0), "30 s");
        assert_eq!(rate_label(20_000.0), "20k");
    }

    #[test]
    fn the_curve_rises_and_ends_in_the_tail() {
        let mut h = Histogram::<u64>::new_with_bounds(1_000, 3_600_000_000_000, 3).unwrap();
        for v in 1..=10_000u64 {
            h.record(v * 1_000).unwrap();
        }
        let c = curve(&h);
        assert!(c.windows(2).all(|w| w[1].1 >= w[0].1), "never falls");
        assert!(
            (c.last().unwrap().0 - 10_000.0).abs() < 1e-6,
            "4 decades for 10,000"
        );
        assert!(
            c.last().unwrap().1 > 9.9,
            "ends at the slowest: {:?}",
            c.last()
        );
    }
}
