//! `spate wrk`: a run's result in wrk's text layout (thread stats, latency distribution, the
//! request count, socket errors, non-2xx responses, requests and transfer per second), so that
//! what parses wrk's output parses spate's. Values are in wrk's units: latency from the run's
//! histogram, Req/Sec from each thread's rate every 100 ms. Must not compute anything the
//! report does not: it only lays figures out.

use std::fmt::Write as _;

use crate::plan::{Plan, Stop};
use crate::stats::RunOutput;

/// The lines wrk prints before its run starts.
pub fn header(plan: &Plan) -> String {
    let time = match plan.stop {
        Stop::Duration(d) => scaled(d.as_secs_f64(), &TIME_S, 0),
        Stop::Requests(n) => format!("{n} requests"),
    };
    format!(
        "Running {time} test @ {}\n  {} threads and {} connections\n",
        plan.target.url,
        plan.effective_threads(),
        plan.connections
    )
}

/// The result as wrk lays it out; with `latency`, the percentile lines of `--latency` too.
pub fn render(run: &RunOutput, latency: bool) -> String {
    let s = &run.stats;
    let h = s.latency.hdr();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  Thread Stats{:>6}{:>11}{:>8}{:>12}",
        "Avg", "Stdev", "Max", "+/- Stdev"
    );
    // Microseconds, as wrk keeps latency.
    let values: Vec<(f64, u64)> = h
        .iter_recorded()
        .map(|v| (v.value_iterated_to() as f64 / 1e3, v.count_at_value()))
        .collect();
    let lat = Spread::of(&values);
    let rates: Vec<(f64, u64)> = s.rate_samples.iter().map(|&r| (r, 1)).collect();
    let req = Spread::of(&rates);
    for (name, spread, unit) in [("Latency", lat, &TIME_US), ("Req/Sec", req, &METRIC)] {
        let _ = writeln!(
            out,
            "    {name:<10}{}{}{}{:>8.2}%",
            cell(&scaled(spread.mean, unit, 2), 8),
            cell(&scaled(spread.stdev, unit, 2), 10),
            cell(&scaled(spread.max, unit, 2), 9),
            spread.within
        );
    }
    if latency {
        out.push_str("  Latency Distribution\n");
        for p in [50.0, 75.0, 90.0, 99.0] {
            let us = match h.is_empty() {
                true => 0.0,
                false => h.value_at_quantile(p / 100.0) as f64 / 1e3,
            };
            let _ = writeln!(out, "{p:>7.0}%{}", cell(&scaled(us, &TIME_US, 2), 10));
        }
    }
    let elapsed = run.elapsed.as_secs_f64();
    let _ = writeln!(
        out,
        "  {} requests in {}, {}B read",
        s.completed,
        scaled(elapsed, &TIME_S, 2),
        scaled(s.bytes_in as f64, &BINARY, 2)
    );
    let socket = s.wrk_errors();
    if socket.iter().any(|&n| n > 0) {
        let _ = writeln!(
            out,
            "  Socket errors: connect {}, read {}, write {}, timeout {}",
            socket[0], socket[1], socket[2], socket[3]
        );
    }
    let error_status = s.completed - s.successful();
    if error_status > 0 {
        let _ = writeln!(out, "  Non-2xx or 3xx responses: {error_status}");
    }
    let per_s = |x: f64| if elapsed > 0.0 { x / elapsed } else { 0.0 };
    let _ = writeln!(out, "Requests/sec: {:>9.2}", per_s(s.completed as f64));
    let _ = writeln!(
        out,
        "Transfer/sec: {:>10}B",
        scaled(per_s(s.bytes_in as f64), &BINARY, 2)
    );
    out
}

/// `text` in a column `width` wide whose numbers line up: a value with a two-letter unit fills
/// it, one with a one-letter unit or none leaves one or two spaces after it, as wrk's columns do.
fn cell(text: &str, width: usize) -> String {
    let letters = text
        .bytes()
        .rev()
        .take(2)
        .take_while(u8::is_ascii_alphabetic)
        .count();
    let pad = 2 - letters;
    format!("{text:>w$}{:pad$}", "", w = width - pad)
}

/// Mean, standard deviation, maximum, and the share of values within one standard deviation
/// of the mean (in %), of values with counts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Spread {
    mean: f64,
    stdev: f64,
    max: f64,
    within: f64,
}

impl Spread {
    fn of(values: &[(f64, u64)]) -> Spread {
        let n: u64 = values.iter().map(|v| v.1).sum();
        if n == 0 {
            return Spread::default();
        }
        let mean = values.iter().map(|&(x, k)| x * k as f64).sum::<f64>() / n as f64;
        // The sample standard deviation, as wrk's.
        let var = match n {
            1 => 0.0,
            _ => {
                values
                    .iter()
                    .map(|&(x, k)| (x - mean).powi(2) * k as f64)
                    .sum::<f64>()
                    / (n - 1) as f64
            }
        };
        let stdev = var.sqrt();
        let inside: u64 = values
            .iter()
            .filter(|&&(x, _)| (x - mean).abs() <= stdev)
            .map(|v| v.1)
            .sum();
        Spread {
            mean,
            stdev,
            max: values.iter().map(|v| v.0).fold(0.0, f64::max),
            within: 100.0 * inside as f64 / n as f64,
        }
    }
}

/// A unit ladder: the base unit, each next one `step` times larger.
struct Units {
    base: &'static str,
    step: f64,
    up: &'static [&'static str],
}

const TIME_US: Units = Units {
    base: "us",
    step: 1000.0,
    up: &["ms", "s"],
};
const TIME_S: Units = Units {
    base: "s",
    step: 60.0,
    up: &["m", "h"],
};
const METRIC: Units = Units {
    base: "",
    step: 1000.0,
    up: &["k", "M", "G", "T", "P"],
};
const BINARY: Units = Units {
    base: "",
    step: 1024.0,
    up: &["K", "M", "G", "T", "P"],
};

/// `x` in the largest unit of `u` it reaches, with `places` decimals.
fn scaled(x: f64, u: &Units, places: usize) -> String {
    let mut x = x;
    let mut unit = u.base;
    for next in u.up {
        if x < u.step {
            break;
        }
        x /= u.step;
        unit = next;
    }
    format!("{x:.places$}{unit}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Failure;

    #[test]
    fn units_climb_as_wrks_do() {
        assert_eq!(scaled(615.27, &TIME_US, 2), "615.27us");
        assert_eq!(scaled(8780.0, &TIME_US, 2), "8.78ms");
        assert_eq!(scaled(2_500_000.0, &TIME_US, 2), "2.50s");
        assert_eq!(scaled(1500.0, &METRIC, 2), "1.50k");
        assert_eq!(scaled(152.62, &METRIC, 2), "152.62");
        assert_eq!(scaled(856_960.0, &BINARY, 2), "836.88K");
        assert_eq!(scaled(10.0, &TIME_S, 0), "10s");
        assert_eq!(scaled(90.0, &TIME_S, 2), "1.50m");
    }

    #[test]
    fn columns_line_up_as_wrks_do() {
        // Lines Debian's wrk 4.1 printed.
        let line = |name: &str, a: &str, b: &str, c: &str, w: &str| {
            format!(
                "    {name:<10}{}{}{}{w}",
                cell(a, 8),
                cell(b, 10),
                cell(c, 9)
            )
        };
        assert_eq!(
            line("Latency", "252.82us", "551.08us", "8.15ms", "   94.63%"),
            "    Latency   252.82us  551.08us   8.15ms   94.63%"
        );
        assert_eq!(
            line("Req/Sec", "32.91k", "12.24k", "82.28k", "   82.93%"),
            "    Req/Sec    32.91k    12.24k   82.28k    82.93%"
        );
        assert_eq!(
            line("Req/Sec", "789.14", "160.32", "1.45k", "   90.48%"),
            "    Req/Sec   789.14    160.32     1.45k    90.48%"
        );
        assert_eq!(
            format!("{:>7.0}%{}", 99.0, cell("3.20ms", 10)),
            "     99%    3.20ms"
        );
    }

    #[test]
    fn the_spread_counts_values_within_one_deviation() {
        let s = Spread::of(&[(1.0, 1), (2.0, 2), (3.0, 1)]);
        assert_eq!(s.mean, 2.0);
        assert!((s.stdev - (2.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(s.max, 3.0);
        assert_eq!(s.within, 50.0);
        assert_eq!(Spread::of(&[]), Spread::default());
    }

    #[test]
    fn the_layout_is_wrks() {
        let mut run = RunOutput::empty(2);
        run.elapsed = std::time::Duration::from_millis(1100);
        for us in [300u64, 400, 500, 9000] {
            run.stats.latency.record(us * 1000);
        }
        run.stats.completed = 1648;
        run.stats.status[404] = 1648;
        run.stats.bytes_in = 856_960;
        run.stats.rate_samples = vec![1500.0, 1600.0];
        run.stats.failures.add_with(Failure::Timeout, String::new);
        let text = render(&run, true);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "  Thread Stats   Avg      Stdev     Max   +/- Stdev"
        );
        assert!(lines[1].starts_with("    Latency   "), "{}", lines[1]);
        assert_eq!(
            lines[1].len(),
            "    Latency   615.27us  473.62us   8.78ms   97.31%".len()
        );
        assert!(
            lines[2].starts_with("    Req/Sec     1.55k "),
            "{}",
            lines[2]
        );
        assert_eq!(lines[3], "  Latency Distribution");
        assert!(lines[4].starts_with("     50%"), "{}", lines[4]);
        assert_eq!(lines[8], "  1648 requests in 1.10s, 836.88KB read");
        assert_eq!(
            lines[9],
            "  Socket errors: connect 0, read 0, write 0, timeout 1"
        );
        assert_eq!(lines[10], "  Non-2xx or 3xx responses: 1648");
        assert_eq!(lines[11], "Requests/sec:   1498.18");
        assert_eq!(lines[12], "Transfer/sec:    760.80KB");
    }
}
