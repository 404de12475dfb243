//! The live block as text: a pure function from a `View` (numbers) and a width to ASCII lines
//! that never exceed the width, so that the block can be redrawn in place without wrapping.

use std::time::Duration;

use crate::numbers::{count, millis};
use crate::stats::{Counters, Failure};

/// Lines of the live block.
pub const BLOCK_LINES: usize = 3;

/// Where the run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Opening connections before the clock starts.
    Connecting,
    /// --warmup: load that is not recorded, before the measured window.
    WarmingUp,
    Running,
    /// Past the deadline: waiting for in-flight requests.
    Draining,
    /// Ctrl-C: waiting briefly for in-flight requests, then the report.
    Stopping,
}

/// Everything the block shows.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    pub stage: Stage,
    /// Into the measured window (0 during the warm-up).
    pub elapsed: Duration,
    /// --warmup, while it lasts: how far into it, and its length.
    pub warm: Option<(Duration, Duration)>,
    pub duration: Option<Duration>,
    pub total_requests: Option<u64>,
    pub counters: Counters,
    /// Completed per second over the last second, and since the start.
    pub rate_now: Option<f64>,
    pub rate_avg: Option<f64>,
    /// Rolling percentiles of the last second, ms.
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub connections: u32,
    /// --stages: where the profile is.
    pub load: Option<LoadStage>,
}

/// The stage of a --stages profile the run is in, and its target now: requests/s, or (with
/// `connections`) the whole connections the run keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadStage {
    pub stage: usize,
    pub of: usize,
    pub target: f64,
    pub connections: bool,
}

impl LoadStage {
    /// `stage 2/3, target 350/s` (or `target 12 connections`).
    fn said(&self) -> String {
        let unit = match self.connections {
            true => " connections",
            false => "/s",
        };
        format!(
            "stage {}/{}, target {}{unit}",
            self.stage,
            self.of,
            rate(Some(self.target))
        )
    }
}

fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

fn rate(r: Option<f64>) -> String {
    r.map_or_else(|| "-".into(), |r| count(r.round() as u64))
}

/// `[#####-----]` of `width` inner characters for a fraction in 0..=1.
fn bar(fraction: f64, width: usize) -> String {
    let filled = ((fraction.clamp(0.0, 1.0)) * width as f64).round() as usize;
    format!("[{}{}]", "#".repeat(filled), "-".repeat(width - filled))
}

/// Cuts `line` to at most `width` characters (the block is ASCII, so bytes are characters).
fn fit(mut line: String, width: usize) -> String {
    line.truncate(width);
    line
}

/// The first line: progress bar and where the run stands.
fn progress_line(v: &View, width: usize) -> String {
    let c = &v.counters;
    let (fraction, what) = match (v.stage, v.total_requests, v.duration) {
        (Stage::Connecting, _, _) => (
            c.open as f64 / f64::from(v.connections.max(1)),
            format!(
                "connecting {} / {}{}",
                count(c.open),
                count(u64::from(v.connections)),
                match c.connect_failures {
                    0 => String::new(),
                    n => format!(", {} failed", count(n)),
                }
            ),
        ),
        (Stage::WarmingUp, _, _) => {
            let (into, of) = v.warm.unwrap_or_default();
            (
                into.as_secs_f64() / of.as_secs_f64().max(1e-9),
                format!("warm-up {} / {}", secs(into.min(of)), secs(of)),
            )
        }
        (_, Some(total), _) => {
            let done = c.completed + c.failed();
            (
                done as f64 / total.max(1) as f64,
                format!("{} / {} requests", count(done), count(total)),
            )
        }
        (_, None, Some(d)) => (
            v.elapsed.as_secs_f64() / d.as_secs_f64().max(1e-9),
            format!("{} / {}", secs(v.elapsed.min(d)), secs(d)),
        ),
        (_, None, None) => (0.0, secs(v.elapsed)),
    };
    let what = match (v.stage, v.load) {
        (Stage::Running, Some(l)) => format!("{what}  {}", l.said()),
        _ => what,
    };
    let note = match v.stage {
        Stage::WarmingUp => "  not recorded",
        Stage::Draining => "  draining in-flight requests",
        Stage::Stopping => "  stopping (Ctrl-C again to quit now)",
        _ => "",
    };
    let pct = format!("{:>3.0}%", fraction.clamp(0.0, 1.0) * 100.0);
    // The bar takes what is left, between 10 and 40 characters.
    let fixed = pct.len() + what.len() + note.len() + 5;
    let bar_width = width.saturating_sub(fixed).clamp(10, 40);
    format!("{} {pct}  {what}{note}", bar(fraction, bar_width))
}

pub fn block(v: &View, width: usize) -> Vec<String> {
    let c = &v.counters;
    let second = format!(
        "{} done  {} req/s now  {} avg  p50 {}  p99 {}  conns {}/{}",
        count(c.completed),
        rate(v.rate_now),
        rate(v.rate_avg),
        v.p50_ms.map_or_else(|| "-".into(), millis),
        v.p99_ms.map_or_else(|| "-".into(), millis),
        count(c.open),
        count(u64::from(v.connections)),
    );
    let mut failures: Vec<String> = Failure::ALL
        .iter()
        .filter(|f| c.failures[**f as usize] > 0)
        .map(|f| format!("{} {}", f.name(), count(c.failures[*f as usize])))
        .collect();
    if c.error_status > 0 {
        failures.push(format!("status>=400 {}", count(c.error_status)));
    }
    let third = if failures.is_empty() {
        "errors: none".to_string()
    } else {
        format!("errors: {}", failures.join("  "))
    };
    vec![
        fit(progress_line(v, width), width),
        fit(second, width),
        fit(third, width),
    ]
}

/// One plain line for logs while the connections open, `elapsed` into a phase of at most
/// `limit` (--setup-timeout).
pub fn plain_connecting(v: &View, elapsed: Duration, limit: Duration) -> String {
    let c = &v.counters;
    format!(
        "spate: connecting: {} of {} open, {} failed, {} of at most {}",
        count(c.open),
        count(u64::from(v.connections)),
        count(c.connect_failures),
        secs(elapsed),
        secs(limit)
    )
}

/// One plain line for logs (stderr not a terminal).
pub fn plain(v: &View) -> String {
    let c = &v.counters;
    let of = v
        .duration
        .map(|d| format!(" of {}", secs(d)))
        .unwrap_or_default();
    let of = match (v.warm, v.load) {
        (Some((into, warmup)), _) => format!(
            "{of}, warming up ({} of {}, not recorded)",
            secs(into),
            secs(warmup)
        ),
        (None, Some(l)) => format!("{of} ({})", l.said()),
        (None, None) => of,
    };
    format!(
        "spate: {}{of}: {} completed ({} req/s), p50 {}, p99 {}, {} failed, {} with status >= 400, {} connections open",
        secs(v.elapsed),
        count(c.completed),
        rate(v.rate_now),
        v.p50_ms.map_or_else(|| "-".into(), millis),
        v.p99_ms.map_or_else(|| "-".into(), millis),
        count(c.failed()),
        count(c.error_status),
        count(c.open),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> View {
        let mut counters = Counters {
            attempts: 1_234_600,
            completed: 1_234_567,
            open: 50,
            ..Counters::default()
        };
        counters.failures[Failure::Timeout as usize] = 3;
        counters.failures[Failure::Closed as usize] = 1;
        View {
            stage: Stage::Running,
            warm: None,
            elapsed: Duration::from_millis(12_300),
            duration: Some(Duration::from_secs(30)),
            total_requests: None,
            counters,
            rate_now: Some(98_765.4),
            rate_avg: Some(97_001.0),
            p50_ms: Some(0.412),
            p99_ms: Some(0.931),
            connections: 50,
            load: None,
        }
    }

    #[test]
    fn a_staged_run_shows_its_stage_and_target_while_it_runs() {
        let v = View {
            load: Some(LoadStage {
                stage: 2,
                of: 3,
                target: 349.6,
                connections: false,
            }),
            ..view()
        };
        let b = block(&v, 120);
        assert!(
            b[0].contains("12.3s / 30.0s  stage 2/3, target 350/s"),
            "{}",
            b[0]
        );
        let draining = View {
            stage: Stage::Draining,
            ..v.clone()
        };
        assert!(!block(&draining, 120)[0].contains("stage 2/3"));
        for width in [1, 20, 60, 80] {
            assert!(block(&v, width).iter().all(|l| l.len() <= width));
        }
        let warming = View {
            stage: Stage::WarmingUp,
            warm: Some((Duration::from_millis(1_500), Duration::from_secs(5))),
            elapsed: Duration::ZERO,
            ..v.clone()
        };
        let line = &block(&warming, 120)[0];
        assert!(
            line.contains("warm-up 1.5s / 5.0s") && line.ends_with("not recorded"),
            "{line}"
        );
        assert!(!line.contains("stage 2/3"), "{line}");
        assert!(
            plain(&warming).contains("warming up (1.5s of 5.0s, not recorded)"),
            "{}",
            plain(&warming)
        );
        let staffed = View {
            load: Some(LoadStage {
                stage: 1,
                of: 2,
                target: 12.0,
                connections: true,
            }),
            ..view()
        };
        assert!(
            block(&staffed, 120)[0].contains("stage 1/2, target 12 connections"),
            "{}",
            block(&staffed, 120)[0]
        );
        assert!(
            plain(&v).starts_with("spate: 12.3s of 30.0s (stage 2/3, target 350/s): "),
            "{}",
            plain(&v)
        );
    }

    #[test]
    fn a_wide_block_shows_everything() {
        let b = block(&view(), 120);
        assert_eq!(b.len(), BLOCK_LINES);
        assert!(b[0].starts_with("[################"), "{}", b[0]);
        assert!(b[0].contains(" 41%  12.3s / 30.0s"), "{}", b[0]);
        assert_eq!(
            b[1],
            "1,234,567 done  98,765 req/s now  97,001 avg  p50 0.412 ms  p99 0.931 ms  conns 50/50"
        );
        assert_eq!(b[2], "errors: timeout 3  closed 1");
        let mut v = view();
        v.counters.error_status = 86_591;
        assert_eq!(
            block(&v, 120)[2],
            "errors: timeout 3  closed 1  status>=400 86,591"
        );
        v.counters.failures = [0; Failure::ALL.len()];
        assert_eq!(block(&v, 120)[2], "errors: status>=400 86,591");
    }

    #[test]
    fn every_line_fits_any_width_and_is_ascii() {
        for width in [1, 10, 20, 40, 60, 80, 200] {
            for stage in [
                Stage::Connecting,
                Stage::WarmingUp,
                Stage::Running,
                Stage::Draining,
                Stage::Stopping,
            ] {
                let v = View { stage, ..view() };
                for line in block(&v, width) {
                    assert!(line.len() <= width, "width {width}: {line:?}");
                    assert!(line.is_ascii());
                }
            }
        }
    }

    #[test]
    fn count_mode_and_connecting_progress() {
        let mut v = View {
            total_requests: Some(2_000_000),
            duration: None,
            ..view()
        };
        assert!(
            block(&v, 100)[0].contains("1,234,571 / 2,000,000 requests"),
            "{:?}",
            block(&v, 100)
        );
        v.stage = Stage::Connecting;
        v.counters.open = 25;
        assert!(
            block(&v, 100)[0].contains(" 50%  connecting 25 / 50"),
            "{:?}",
            block(&v, 100)
        );
        v.counters.connect_failures = 1_200;
        assert!(
            block(&v, 100)[0].ends_with("connecting 25 / 50, 1,200 failed"),
            "{:?}",
            block(&v, 100)
        );
        assert_eq!(
            plain_connecting(&v, Duration::from_millis(4_000), Duration::from_secs(30)),
            "spate: connecting: 25 of 50 open, 1,200 failed, 4.0s of at most 30.0s"
        );
    }

    #[test]
    fn stopping_says_how_to_quit() {
        let v = View {
            stage: Stage::Stopping,
            ..view()
        };
        assert!(block(&v, 120)[0].contains("Ctrl-C again to quit now"));
    }

    #[test]
    fn plain_line() {
        assert_eq!(
            plain(&view()),
            "spate: 12.3s of 30.0s: 1,234,567 completed (98,765 req/s), p50 0.412 ms, p99 0.931 ms, 4 failed, 0 with status >= 400, 50 connections open"
        );
    }
}
