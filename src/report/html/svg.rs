//! SVG charts for the HTML report: a plot area with linear or logarithmic axes, readable ticks,
//! series as paths thinned to the lowest and highest point of each pixel column, horizontal
//! and vertical marker lines. Knows nothing of runs; draws only what it is given, with classes for the
//! colours (the stylesheet's) and `<title>` for the browser's tooltips.

use std::fmt::Write as _;

use super::esc;

/// The drawing's usual size in user units; the page scales it to its width.
pub const W: f64 = 960.0;
pub const H: f64 = 300.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 40.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 40.0;

#[derive(Debug, Clone, Copy)]
pub struct Axis {
    pub min: f64,
    pub max: f64,
    pub log: bool,
}

impl Axis {
    /// A linear axis from 0 to a little above `max`, ending on a tick.
    pub fn linear(max: f64) -> Axis {
        let max = if max > 0.0 { max } else { 1.0 };
        let step = nice_step(max / 5.0);
        Axis {
            min: 0.0,
            max: (max / step).ceil() * step,
            log: false,
        }
    }

    /// A linear axis from 0 to exactly `max` (time: the run ends where it ends), with its
    /// ticks at round steps inside it.
    pub fn exact(max: f64) -> Axis {
        Axis {
            min: 0.0,
            max: if max > 0.0 { max } else { 1.0 },
            log: false,
        }
    }

    /// A logarithmic axis over whole decades around `lo..=hi` (both above 0).
    pub fn log(lo: f64, hi: f64) -> Axis {
        let lo = if lo > 0.0 { lo } else { 1e-3 };
        let hi = hi.max(lo);
        let mut min = 10f64.powf(lo.log10().floor());
        let mut max = 10f64.powf(hi.log10().ceil());
        if max <= min {
            max = min * 10.0;
        }
        if !min.is_finite() || !max.is_finite() {
            (min, max) = (1e-3, 1e3);
        }
        Axis {
            min,
            max,
            log: true,
        }
    }

    /// Where `v` is along the axis, 0 at `min` and 1 at `max` (clamped).
    pub fn frac(&self, v: f64) -> f64 {
        let f = match self.log {
            true => {
                (v.max(self.min).log10() - self.min.log10()) / (self.max.log10() - self.min.log10())
            }
            false => (v - self.min) / (self.max - self.min),
        };
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// The tick values: 1-2-5 steps on a linear axis; decades on a log axis, with 2 and 5
    /// between them when there are at most three.
    pub fn ticks(&self) -> Vec<f64> {
        if self.log {
            let decades = (self.max / self.min).log10().round() as i32;
            let mut out = Vec::new();
            let mut d = self.min;
            for _ in 0..=decades {
                out.push(d);
                if decades <= 3 && d * 10.0 <= self.max * 1.0001 {
                    out.extend([2.0 * d, 5.0 * d]);
                }
                d *= 10.0;
            }
            out.retain(|&v| v <= self.max * 1.0001);
            return out;
        }
        let step = nice_step((self.max - self.min) / 5.0);
        let n = ((self.max - self.min) / step + 1e-9).floor() as usize;
        (0..=n).map(|i| self.min + step * i as f64).collect()
    }
}

/// The 1, 2 or 5 times a power of ten nearest above `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&s| s >= raw * 0.999)
        .unwrap_or(10.0 * p)
}

pub struct Plot {
    x: Axis,
    y: Axis,
    w: f64,
    h: f64,
    out: String,
}

impl Plot {
    /// A plot of the usual size whose `label` names it for screen readers.
    pub fn new(label: &str, x: Axis, y: Axis) -> Plot {
        Plot::sized(label, x, y, W, H)
    }

    /// A plot of `w` x `h` user units (a narrower one keeps its text readable beside a table).
    pub fn sized(label: &str, x: Axis, y: Axis, w: f64, h: f64) -> Plot {
        let mut out = String::new();
        let _ = write!(
            out,
            r#"<svg class="chart" viewBox="0 0 {w} {h}" role="img" aria-label="{}" preserveAspectRatio="xMidYMid meet">"#,
            esc(label)
        );
        Plot { x, y, w, h, out }
    }

    pub fn px(&self, x: f64) -> f64 {
        LEFT + self.x.frac(x) * (self.w - LEFT - RIGHT)
    }

    pub fn py(&self, y: f64) -> f64 {
        self.h - BOTTOM - self.y.frac(y) * (self.h - TOP - BOTTOM)
    }

    /// Grid lines and labels on both axes, and the axes' names.
    pub fn axes(
        &mut self,
        x_ticks: &[(f64, String)],
        y_label: impl Fn(f64) -> String,
        x_name: &str,
        y_name: &str,
    ) {
        let (x0, x1, y0, y1) = (LEFT, self.w - RIGHT, TOP, self.h - BOTTOM);
        for v in self.y.ticks() {
            let y = self.py(v);
            let _ = write!(
                self.out,
                r#"<line class="grid" x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                x0 - 6.0,
                y + 4.0,
                esc(&y_label(v))
            );
        }
        for (v, label) in x_ticks {
            let x = self.px(*v);
            let _ = write!(
                self.out,
                r#"<line class="grid" x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{y1}"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                y1 + 16.0,
                esc(label)
            );
        }
        let _ = write!(
            self.out,
            r#"<line class="axis" x1="{x0}" y1="{y1}" x2="{x1}" y2="{y1}"/><line class="axis" x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}"/><text class="name" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text class="name" transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            (x0 + x1) / 2.0,
            self.h - 4.0,
            esc(x_name),
            (y0 + y1) / 2.0,
            esc(y_name)
        );
    }

    /// Evenly spaced x ticks (1-2-5 steps) labelled by `label`.
    pub fn linear_x_ticks(&self, label: impl Fn(f64) -> String) -> Vec<(f64, String)> {
        self.x.ticks().into_iter().map(|v| (v, label(v))).collect()
    }

    /// A series as a path; a `None` breaks it (nothing measured there). Points that fall in
    /// one pixel column are thinned to its lowest and highest, so the path stays small however
    /// long the run while every peak and dip stays visible.
    pub fn line(&mut self, class: &str, name: &str, points: &[(f64, Option<f64>)]) {
        let d = self.path(points);
        if d.is_empty() {
            return;
        }
        let _ = write!(
            self.out,
            r#"<path class="{class}" data-series="{class}" d="{d}"><title>{}</title></path>"#,
            esc(name)
        );
    }

    /// A series filled down to the x axis (for counts, where the area is the amount).
    pub fn area(&mut self, class: &str, name: &str, points: &[(f64, f64)]) {
        let some: Vec<(f64, Option<f64>)> = points.iter().map(|&(x, y)| (x, Some(y))).collect();
        let d = self.path(&some);
        let (Some(first), Some(last)) = (points.first(), points.last()) else {
            return;
        };
        let base = self.py(self.y.min);
        let _ = write!(
            self.out,
            r#"<path class="{class} fill" d="{d} L{:.1} {base:.1} L{:.1} {base:.1} Z"><title>{}</title></path>"#,
            self.px(last.0),
            self.px(first.0),
            esc(name)
        );
        self.line(class, name, &some);
    }

    fn path(&self, points: &[(f64, Option<f64>)]) -> String {
        let mut d = String::new();
        let mut pen_down = false;
        let mut i = 0;
        while i < points.len() {
            let Some(_) = points[i].1 else {
                pen_down = false;
                i += 1;
                continue;
            };
            // The run of defined points in this pixel column.
            let col = self.px(points[i].0).round();
            let mut j = i;
            while j < points.len() && points[j].1.is_some() && self.px(points[j].0).round() == col {
                j += 1;
            }
            let group = &points[i..j];
            let lo = group
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.1.unwrap_or(0.0).total_cmp(&b.1.1.unwrap_or(0.0)))
                .map_or(0, |(k, _)| k);
            let hi = group
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.1.unwrap_or(0.0).total_cmp(&b.1.1.unwrap_or(0.0)))
                .map_or(0, |(k, _)| k);
            let mut keep = vec![lo, hi];
            keep.sort_unstable();
            keep.dedup();
            for k in keep {
                let (x, y) = (self.px(group[k].0), self.py(group[k].1.unwrap_or(0.0)));
                let _ = write!(
                    d,
                    "{}{x:.1} {y:.1}",
                    match (pen_down, d.is_empty()) {
                        (true, _) => " L",
                        (false, true) => "M",
                        (false, false) => " M",
                    }
                );
                pen_down = true;
            }
            i = j;
        }
        d
    }

    /// A dashed horizontal line at `y` with a label at its right end.
    pub fn hline(&mut self, class: &str, y: f64, label: &str) {
        let py = self.py(y);
        let _ = write!(
            self.out,
            r#"<line class="{class}" x1="{LEFT}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}"><title>{}</title></line><text class="mark" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            self.w - RIGHT,
            esc(label),
            self.w - RIGHT - 4.0,
            py - 4.0,
            esc(label)
        );
    }

    /// A vertical line at `x` across the plot area, with a label at its top.
    pub fn vline(&mut self, class: &str, x: f64, label: &str) {
        let px = self.px(x);
        let (y0, y1) = (TOP, self.h - BOTTOM);
        let _ = write!(
            self.out,
            r#"<line class="{class}" x1="{px:.1}" y1="{y0}" x2="{px:.1}" y2="{y1}"><title>{}</title></line><text class="{class}-label" x="{:.1}" y="{:.1}">{}</text>"#,
            esc(label),
            px + 3.0,
            y0 + 12.0,
            esc(label)
        );
    }

    /// A dot at (x, y) with its tooltip.
    pub fn dot(&mut self, class: &str, x: f64, y: f64, tip: &str) {
        let _ = write!(
            self.out,
            r#"<circle class="{class}" cx="{:.1}" cy="{:.1}" r="4"><title>{}</title></circle>"#,
            self.px(x),
            self.py(y),
            esc(tip)
        );
    }

    /// A legend entry per (class, name), in a row above the plot area.
    pub fn legend(&mut self, entries: &[(&str, &str)]) {
        let mut x = LEFT + 8.0;
        for (class, name) in entries {
            let _ = write!(
                self.out,
                r#"<line class="{class}" x1="{x:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}"/><text class="legend" x="{:.1}" y="{:.1}">{}</text>"#,
                TOP - 16.0,
                x + 18.0,
                TOP - 16.0,
                x + 22.0,
                TOP - 12.0,
                esc(name)
            );
            x += 34.0 + 7.0 * name.chars().count() as f64;
        }
    }

    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>");
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_axis() {
        let a = Axis::linear(87.0);
        assert_eq!(a.max, 100.0);
        assert_eq!(a.ticks(), [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        let l = Axis::log(0.13, 2400.0);
        assert_eq!((l.min, l.max), (0.1, 10_000.0));
        assert_eq!(l.ticks(), [0.1, 1.0, 10.0, 100.0, 1000.0, 10_000.0]);
        let few = Axis::log(0.2, 30.0);
        assert_eq!(
            few.ticks().len(),
            3 * 3 + 1,
            "1, 2, 5 per decade: {:?}",
            few.ticks()
        );
        assert_eq!(
            Axis::linear(0.0).max,
            1.0,
            "an empty series still has an axis"
        );
    }

    #[test]
    fn a_long_series_keeps_each_columns_extremes_and_gaps_break_the_line() {
        let mut p = Plot::new("t", Axis::linear(10_000.0), Axis::linear(100.0));
        let points: Vec<(f64, Option<f64>)> = (0..10_000)
            .map(|i| (i as f64, Some(if i == 5_000 { 100.0 } else { 1.0 })))
            .collect();
        let d = p.path(&points);
        let n = d.matches(['M', 'L']).count();
        assert!(n < 2 * 900, "thinned to two points a column: {n}");
        let peak = format!(" {:.1}", p.py(100.0));
        assert!(d.contains(&peak), "the one peak survives: {d}");
        let gap = [(0.0, Some(1.0)), (1.0, None), (2.0, Some(1.0))];
        p.x = Axis::linear(2.0);
        assert_eq!(p.path(&gap).matches('M').count(), 2);
        p.line("p50", "p50", &gap);
        assert!(p.finish().contains(r#"data-series="p50""#));
    }
}
