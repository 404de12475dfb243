//! The insight rules: each documented rule with its threshold (docs/MEASUREMENT.md) turns the
//! run's numbers into typed findings, ending with a verdict on spate itself. No rule may claim
//! more than its numbers show; no rule writes a sentence (that is `report::insight`).

use super::finding::{ClassCount, CodeCount, Finding, Spread, TailPhase};
use crate::stats::{
    Connections, ErrorRow, Generator, OpenModel, Percentiles, Phases, Requests, StatusRow,
    Streaming,
};

/// Share of failed or >= 400 requests above which the error rate is called high.
pub const HIGH_ERROR_RATE: f64 = 0.01;
/// p99/p50 at most this: consistent latency.
pub const SPREAD_TIGHT: f64 = 2.0;
/// p99/p50 above this: widely spread latency.
pub const SPREAD_WIDE: f64 = 5.0;
/// p99/p95 above this: a long tail.
pub const TAIL_LONG: f64 = 2.0;
/// p99.9/p99 above this (with at least `OUTLIER_MIN_SAMPLES` samples): rare outliers.
pub const OUTLIERS: f64 = 3.0;
pub const OUTLIER_MIN_SAMPLES: u64 = 1000;
/// p99.99/p99.9 above `OUTLIERS`, with at least this many samples: very rare outliers.
pub const RARE_OUTLIER_MIN_SAMPLES: u64 = 10_000;
/// p95/p50 above this: latency grows under load (queueing).
pub const QUEUEING: f64 = 3.0;
/// Reconnects above this share of completed requests make connect a candidate tail phase.
pub const RECONNECT_SHARE: f64 = 0.01;
/// Load threads busy at least this share of the time: spate was CPU-bound.
pub const CPU_BOUND: f64 = 0.90;
/// Connections busy less than this share of the time (Little's law): spate left gaps.
pub const BUSY_CONNECTIONS: f64 = 0.90;
/// Open model: a send lag p99 above this (ms) means requests left late.
pub const SEND_LAG_MS: f64 = 1.0;
/// No completion for at least this long (ms), and this many times the typical latency (p50;
/// not p99, which in the open model contains the stall itself): a stall.
pub const STALL_MS: f64 = 100.0;
pub const STALL_P50_FACTOR: f64 = 10.0;

/// Everything the rules read.
pub struct Facts<'a> {
    pub requests: &'a Requests,
    pub percentiles: &'a Percentiles,
    pub latency_count: u64,
    pub status_codes: &'a [StatusRow],
    pub errors: &'a [ErrorRow],
    pub phases: &'a Phases,
    pub connections: &'a Connections,
    pub generator: &'a Generator,
    pub elapsed_s: f64,
    /// The open model's schedule; `None` in the closed model.
    pub open: Option<&'a OpenModel>,
    /// The longest time without a completion (ms) and when it began (s into the measurement).
    pub longest_gap: Option<(f64, f64)>,
    /// Redirects followed per request at most (--redirect); 0: not followed.
    pub redirect_limit: u32,
    /// --stream: what the measured streams did.
    pub streaming: Option<&'a Streaming>,
    /// `spate mcp`: the tools (and other calls) whose latencies the percentiles mix.
    pub tools: u64,
}

pub fn insight(f: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    errors(f, &mut out);
    shape(f, &mut out);
    tail_phase(f, &mut out);
    stall(f, &mut out);
    streams(f, &mut out);
    super::fairness::fairness(f.connections, f.open.is_none(), &mut out);
    schedule(f, &mut out);
    super::generator::generator(f, &mut out);
    out
}

pub(super) fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn errors(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let r = f.requests;
    if r.attempted == 0 {
        out.push(Finding::NothingSent);
        return;
    }
    let bad_status: u64 = f
        .status_codes
        .iter()
        .filter(|s| s.code >= 400)
        .map(|s| s.count)
        .sum();
    redirects(f, out);
    if r.retried > 0 {
        out.push(Finding::Resent { times: r.retried });
    }
    if r.failed == 0 && bad_status == 0 {
        out.push(match r.completed {
            0 => Finding::NoResponse {
                interrupted: r.interrupted,
            },
            _ => Finding::NoErrors,
        });
        return;
    }
    if r.failed > 0 {
        out.push(Finding::Failed {
            share: pct(r.failed, r.attempted),
            classes: f
                .errors
                .iter()
                .map(|e| ClassCount {
                    class: e.class.clone(),
                    count: e.count,
                })
                .collect(),
        });
    }
    if bad_status > 0 {
        let mut codes: Vec<&StatusRow> = f.status_codes.iter().filter(|s| s.code >= 400).collect();
        codes.sort_by(|a, b| b.count.cmp(&a.count).then(a.code.cmp(&b.code)));
        out.push(Finding::ErrorStatus {
            share: pct(bad_status, r.completed),
            top: codes
                .iter()
                .take(3)
                .map(|s| CodeCount {
                    code: s.code,
                    count: s.count,
                })
                .collect(),
        });
    }
    let rate = (r.failed + bad_status) as f64 / r.attempted as f64;
    if rate > HIGH_ERROR_RATE {
        out.push(Finding::HighErrorRate {
            share: rate * 100.0,
        });
    }
}

/// 3xx responses are successes to the accounting (status below 400), but not what a person who
/// asked for the URL wanted: say that they were not followed.
fn redirects(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let n: u64 = f
        .status_codes
        .iter()
        .filter(|s| (300..400).contains(&s.code) && s.code != 304)
        .map(|s| s.count)
        .sum();
    if n > 0 {
        out.push(Finding::Redirects {
            count: n,
            share: pct(n, f.requests.completed),
            followed: f.redirect_limit > 0,
        });
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

fn shape(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let p = f.percentiles;
    let Some(spread) = ratio(p.p99, p.p50) else {
        out.push(Finding::NoLatency);
        return;
    };
    out.push(Finding::Spread {
        band: if spread <= SPREAD_TIGHT {
            Spread::Consistent
        } else if spread <= SPREAD_WIDE {
            Spread::Moderate
        } else {
            Spread::Wide
        },
        p50: p.p50.unwrap_or(0.0),
        p99: p.p99.unwrap_or(0.0),
        ratio: spread,
    });
    let before = out.len();
    if f.tools > 1 {
        out.push(Finding::Mixed { kinds: f.tools });
    } else if let Some(q) = ratio(p.p95, p.p50).filter(|&q| q > QUEUEING) {
        out.push(Finding::Queueing { ratio: q });
    }
    if let Some(t) = ratio(p.p99, p.p95).filter(|&t| t > TAIL_LONG) {
        out.push(Finding::LongTail { ratio: t });
    }
    if f.latency_count >= OUTLIER_MIN_SAMPLES
        && let Some(o) = ratio(p.p99_9, p.p99).filter(|&o| o > OUTLIERS)
    {
        out.push(Finding::Outliers { ratio: o });
    }
    let rare = (f.latency_count >= RARE_OUTLIER_MIN_SAMPLES)
        .then(|| ratio(p.p99_99, p.p99_9))
        .flatten();
    if let Some(o) = rare.filter(|&o| o > OUTLIERS) {
        out.push(Finding::RareOutliers { ratio: o });
    }
    if out.len() == before {
        out.push(Finding::NoTail {
            p95_p50: ratio(p.p95, p.p50).unwrap_or(1.0),
            p99_p95: ratio(p.p99, p.p95).unwrap_or(1.0),
            p99_9_p99: ratio(p.p99_9, p.p99).unwrap_or(1.0),
            p99_99_p99_9: rare,
        });
    }
}

/// A candidate for the tail: a phase, or the reconnects inside latency.
#[derive(Clone, Copy)]
enum Part {
    Phase(TailPhase),
    Connects,
}

fn tail_phase(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(latency_p99) = f.percentiles.p99.filter(|&v| v > 0.0) else {
        return;
    };
    let ph = f.phases;
    let mut candidates = vec![
        (Part::Phase(TailPhase::Wait), ph.wait.p99_ms),
        (Part::Phase(TailPhase::Read), ph.read.p99_ms),
        (Part::Phase(TailPhase::Write), ph.write.p99_ms),
    ];
    if let Some(o) = f.open {
        // A cause only where one was measured: a stall of spate's own.
        let lag = match spate_stall(f) {
            Some(_) => TailPhase::SendLagSpateStalled,
            None => TailPhase::SendLag,
        };
        candidates.push((Part::Phase(lag), o.send_lag.p99_ms));
    }
    // Connects inside latency only: the ones before the clock are in no request's latency.
    let connect = &f.phases.connect;
    if connect.count as f64 > RECONNECT_SHARE * f.requests.completed as f64 {
        candidates.push((Part::Connects, connect.p99_ms));
    }
    let Some((part, p99)) = candidates
        .into_iter()
        .filter_map(|(part, v)| v.map(|v| (part, v)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return;
    };
    out.push(match part {
        // Of a subset of the requests: its p99 is not a part of the latency p99.
        Part::Connects => Finding::TailInConnects {
            count: connect.count,
            completed: f.requests.completed,
            share: pct(connect.count, f.requests.completed),
            p99,
            latency_p99,
        },
        Part::Phase(phase) => Finding::TailPhase {
            phase,
            p99,
            latency_p99,
        },
    });
}

fn stall(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some((gap_ms, at_s)) = f.longest_gap else {
        return;
    };
    let p50 = f.percentiles.p50.unwrap_or(0.0);
    if gap_ms < STALL_MS || gap_ms < STALL_P50_FACTOR * p50 {
        return;
    }
    if let Some((own_ms, own_at_s)) = spate_stall(f) {
        let overlap = (at_s + gap_ms / 1e3).min(own_at_s + own_ms / 1e3) - at_s.max(own_at_s);
        if overlap * 1e3 >= 0.5 * gap_ms {
            out.push(Finding::SpateStalled {
                gap_ms,
                at_s,
                own_ms,
                own_at_s,
            });
            return;
        }
    }
    out.push(Finding::ServerStalled {
        gap_ms,
        at_s,
        open_model: f.open.is_some(),
    });
}

/// The longest time a load thread did not run (ms, s into the run), if it is long enough to
/// matter.
pub(super) fn spate_stall(f: &Facts<'_>) -> Option<(f64, f64)> {
    let g = f.generator;
    g.longest_stall_ms
        .zip(g.longest_stall_at_s)
        .filter(|&(ms, _)| ms >= STALL_MS)
}

fn schedule(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(o) = f.open else { return };
    let lag_p99 = o.send_lag.p99_ms;
    let (achieved, target) = (o.rate_achieved, o.rate_target);
    out.push(if o.dropped > 0 || o.missed > 0 {
        Finding::BehindSchedule {
            dropped: o.dropped,
            missed: o.missed,
            scheduled: o.scheduled,
            achieved,
            target,
        }
    } else if lag_p99.is_some_and(|l| l > SEND_LAG_MS) {
        Finding::LateSends {
            lag_p99,
            achieved,
            target,
        }
    } else {
        Finding::OnSchedule {
            lag_p99,
            achieved,
            target,
        }
    });
}

/// --stream: the pace of the streams (first token, then the gaps), and a stall in one of them.
fn streams(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let Some(st) = f.streaming else {
        return;
    };
    let (Some(first_data_ms), Some(gap_ms)) = (st.first_data.p50_ms, st.gap.p50_ms) else {
        return;
    };
    let gaps_per_stream = match st.responses {
        0 => 0.0,
        n => st.gap.count as f64 / n as f64,
    };
    let grpc = st.mode == crate::plan::StreamMode::Grpc;
    out.push(Finding::StreamPace {
        first_data_ms,
        gap_ms,
        after_first_ms: st.mean_gap.mean_ms.unwrap_or(0.0) * gaps_per_stream,
        grpc,
    });
    if let Some(longest_ms) = st.longest_gap.max_ms
        && longest_ms >= STALL_MS
        && longest_ms >= STALL_P50_FACTOR * gap_ms
    {
        out.push(Finding::StreamStalled {
            longest_ms,
            gap_ms,
            grpc,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::F;
    use super::*;

    #[test]
    fn a_healthy_run_is_found_healthy_in_rule_order() {
        let found = F::new().run();
        assert_eq!(found[0], Finding::NoErrors);
        assert!(matches!(
            found[1],
            Finding::Spread {
                band: Spread::Consistent,
                ratio: 1.5,
                ..
            }
        ));
        assert!(matches!(found[2], Finding::NoTail { p99_99_p99_9: Some(r), .. } if r == 1.5));
        assert_eq!(
            found[3],
            Finding::TailPhase {
                phase: TailPhase::Wait,
                p99: 1.4,
                latency_p99: 1.5
            }
        );
        assert_eq!(found.last(), Some(&Finding::NotLimited));
    }

    #[test]
    fn a_script_run_says_what_its_lua_cost_and_a_plain_run_says_nothing() {
        let mut f = F::new();
        assert!(
            !f.run()
                .iter()
                .any(|x| matches!(x, Finding::ScriptCost { .. }))
        );
        f.generator.script_us_per_request = Some(1.25);
        f.generator.script_cpu_percent = Some(12.0);
        assert!(f.run().contains(&Finding::ScriptCost {
            us_per_request: 1.25,
            cpu_share: Some(12.0)
        }));
        assert_eq!(
            crate::report::sentence(&Finding::ScriptCost {
                us_per_request: 1.25,
                cpu_share: Some(12.0),
            }),
            "The script's Lua (delay, request, response) took 1.25 µs per request, 12 % of spate's CPU time."
        );
    }

    #[test]
    fn the_tail_is_the_largest_phase_and_reconnects_only_inside_latency() {
        let mut f = F::new();
        f.phases.read = super::super::fixture::phase(Some(1.45));
        assert!(f.run().iter().any(|x| matches!(
            x,
            Finding::TailPhase {
                phase: TailPhase::Read,
                ..
            }
        )));
        f.phases.connect.count = 500;
        f.phases.connect.p99_ms = Some(2.0);
        assert!(f.run().iter().any(|x| matches!(
            x,
            Finding::TailInConnects {
                count: 500,
                share: 5.0,
                ..
            }
        )));
    }

    /// Streams of `first` ms to the first token and `gap` ms gaps, `n` gaps each, one with a
    /// longest gap of `longest` ms.
    fn streams(first: u64, gap: u64, n: u64, longest: u64) -> crate::stats::Streaming {
        let ms = 1_000_000;
        let mut st = crate::stats::StreamStats {
            responses: 10,
            ..Default::default()
        };
        for _ in 0..10 {
            st.first_data.record(first * ms);
            st.mean_gap.record(gap * ms);
            st.longest_gap.record(gap * ms);
            for _ in 0..n {
                st.gap.record(gap * ms);
            }
        }
        st.longest_gap.record(longest * ms);
        let plan = crate::plan::StreamPlan {
            mode: crate::plan::StreamMode::Auto,
            rules: Default::default(),
            max_events: None,
            max_time: None,
            idle: None,
        };
        crate::stats::Streaming::of(&plan, &st, (0, 0), 10.0)
    }

    fn stream_findings(st: crate::stats::Streaming) -> Vec<Finding> {
        let mut f = F::new();
        f.streaming = Some(st);
        f.run()
            .into_iter()
            .filter(|x| {
                matches!(
                    x,
                    Finding::StreamPace { .. } | Finding::StreamStalled { .. }
                )
            })
            .collect()
    }

    #[test]
    fn streams_say_where_their_time_goes_and_when_one_stalled() {
        // 200 ms to the first token, then 5 gaps of 20 ms: the wait dominates.
        let found = stream_findings(streams(200, 20, 5, 20));
        assert!(
            matches!(found[..], [Finding::StreamPace { first_data_ms, after_first_ms, .. }]
                if first_data_ms > after_first_ms && (after_first_ms - 100.0).abs() < 1.0),
            "{found:?}"
        );
        // 50 ms, then 100 gaps of 20 ms: the tokens dominate; one stream waited 400 ms once.
        let found = stream_findings(streams(50, 20, 100, 400));
        assert!(
            matches!(found[..], [Finding::StreamPace { first_data_ms, after_first_ms, .. }, Finding::StreamStalled { longest_ms, .. }]
                if first_data_ms < after_first_ms && longest_ms > 399.0),
            "{found:?}"
        );
        // A longest gap of 150 ms is 7.5x the 20 ms gaps: not a stall.
        let found = stream_findings(streams(50, 20, 5, 150));
        assert_eq!(found.len(), 1, "{found:?}");
    }
}
