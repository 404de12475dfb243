//! `--stages`: the breaking point, the load at which the service stopped keeping up, read from
//! the timeline. The first whole second whose p99 crossed the `--slo` p99 target or, without
//! one, that had errors (a failure or a status of 400 or more), or whose completions fell below
//! 95 % of what its load asked: of the requests it scheduled (rates), or of what its
//! connections would have completed at the best rate per connection of the seconds before it
//! (connections: more connections stopped bringing more responses). A typed finding with its
//! evidence; no words.

use serde::{Deserialize, Serialize};

use crate::stats::timeline::Entry;

/// Of the requests a second scheduled, the share that must complete in it for it to hold.
pub const HELD_SHARE: f64 = 0.95;

/// Where the load broke the service, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakingPoint {
    /// The second's start, seconds into the measured window.
    pub t_s: f64,
    /// A rate profile: the rate that second scheduled, requests per second; and the rate the
    /// last second that held scheduled (`None` when the first second broke).
    pub target_rate: Option<f64>,
    pub last_held_rate: Option<f64>,
    /// A connection profile: the connections that second's target averaged, and the last
    /// second's that held.
    #[serde(default)]
    pub target_connections: Option<f64>,
    #[serde(default)]
    pub last_held_connections: Option<f64>,
    pub evidence: Evidence,
}

/// What the second that broke showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Evidence {
    /// Its p99 was above the `--slo` p99 target.
    P99 { p99_ms: f64, target_ms: f64 },
    /// Its completions fell below `HELD_SHARE` of what it scheduled.
    Rate { completed: u64, scheduled: u64 },
    /// Connections: its completions fell below `HELD_SHARE` of what its connections would
    /// have completed at the best rate per connection before it (`expected`).
    Throughput { completed: u64, expected: u64 },
    /// Requests failed, or responses had a status of 400 or more.
    Errors { failed: u64, error_status: u64 },
}

/// What one second of the profile asked for.
#[derive(Clone, Copy)]
enum Load {
    Rate { scheduled: u64 },
    Connections(f64),
}

/// The breaking point of a `timeline` that followed a profile (its seconds carry what they
/// scheduled, or their target connections), judged against `p99_target_ms` when the run has
/// one; `None` when every whole second held (or the run had no profile).
pub fn breaking_point(timeline: &[Entry], p99_target_ms: Option<f64>) -> Option<BreakingPoint> {
    let mut last_held = None;
    // Connections: the best completions per connection-second so far.
    let mut best = None::<f64>;
    for e in timeline {
        let load = match (e.scheduled, e.target_connections) {
            (Some(scheduled), _) => Load::Rate { scheduled },
            (None, Some(c)) => Load::Connections(c),
            (None, None) => return None,
        };
        // A last, partial second (the drain), or one that asked for nothing (or for less than
        // a connection), says nothing.
        let level = match load {
            Load::Rate { scheduled } => scheduled as f64 / e.span_s.max(1e-9),
            Load::Connections(c) => c,
        };
        let empty = match load {
            Load::Rate { scheduled } => scheduled == 0,
            Load::Connections(c) => c < 1.0,
        };
        if e.span_s < 0.999 || empty {
            continue;
        }
        let per_connection = e.completed as f64 / e.span_s / level;
        let evidence = match p99_target_ms {
            Some(target) => e
                .latency_ms
                .filter(|q| q.p99 > target)
                .map(|q| Evidence::P99 {
                    p99_ms: q.p99,
                    target_ms: target,
                }),
            None if e.failed + e.error_status > 0 => Some(Evidence::Errors {
                failed: e.failed,
                error_status: e.error_status,
            }),
            // One request of slack: the second's last response may complete just after it.
            None => match load {
                Load::Rate { scheduled }
                    if ((e.completed + 1) as f64) < HELD_SHARE * scheduled as f64 =>
                {
                    Some(Evidence::Rate {
                        completed: e.completed,
                        scheduled,
                    })
                }
                Load::Connections(c) => best
                    .map(|b| b * c * e.span_s)
                    .filter(|&expected| ((e.completed + 1) as f64) < HELD_SHARE * expected)
                    .map(|expected| Evidence::Throughput {
                        completed: e.completed,
                        expected: expected.round() as u64,
                    }),
                Load::Rate { .. } => None,
            },
        };
        let rate = matches!(load, Load::Rate { .. });
        match evidence {
            Some(evidence) => {
                return Some(BreakingPoint {
                    t_s: e.t_s,
                    target_rate: rate.then_some(level),
                    last_held_rate: last_held.filter(|_| rate),
                    target_connections: (!rate).then_some(level),
                    last_held_connections: last_held.filter(|_| !rate),
                    evidence,
                });
            }
            None => {
                last_held = Some(level);
                best = Some(best.map_or(per_connection, |b: f64| b.max(per_connection)));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::timeline::Quantiles;

    /// A second scheduling `scheduled` requests, completing `completed`, with p99 `p99_ms`.
    fn second(t: f64, scheduled: u64, completed: u64, p99_ms: f64) -> Entry {
        Entry {
            t_s: t,
            span_s: 1.0,
            completed,
            error_status: 0,
            failed: 0,
            failures: Default::default(),
            bytes_in: 0,
            latency_ms: Some(Quantiles {
                p50: p99_ms / 2.0,
                p90: p99_ms,
                p99: p99_ms,
                max: p99_ms,
            }),
            connections_open: 0,
            target_connections: None,
            scheduled: Some(scheduled),
            sent: completed,
            dropped: Some(0),
            lag_p99_ms: None,
        }
    }

    #[test]
    fn the_first_second_over_the_p99_target_breaks_at_us_and_second_scales() {
        for scale in [0.001, 1.0, 1000.0] {
            // p99 of 0.2, 0.4, 0.9 and 3 of the unit against a target of 0.5 of it.
            let t: Vec<Entry> = [0.2, 0.4, 0.9, 3.0]
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    second(
                        i as f64,
                        100 * (i as u64 + 1),
                        100 * (i as u64 + 1),
                        p * scale,
                    )
                })
                .collect();
            let b = breaking_point(&t, Some(0.5 * scale)).unwrap();
            assert_eq!(b.t_s, 2.0, "{scale}");
            assert_eq!(b.target_rate, Some(300.0));
            assert_eq!(b.last_held_rate, Some(200.0));
            assert_eq!(
                b.evidence,
                Evidence::P99 {
                    p99_ms: 0.9 * scale,
                    target_ms: 0.5 * scale
                }
            );
            // Exactly at the target still holds.
            assert_eq!(breaking_point(&t[..2], Some(0.4 * scale)), None);
        }
    }

    #[test]
    fn without_a_target_a_shortfall_or_errors_break() {
        let held = [second(0.0, 100, 100, 1.0), second(1.0, 200, 196, 1.0)];
        assert_eq!(breaking_point(&held, None), None, "98 % holds");
        let short = [held[0].clone(), held[1].clone(), second(2.0, 300, 280, 1.0)];
        let b = breaking_point(&short, None).unwrap();
        assert_eq!(
            (b.t_s, b.target_rate, b.last_held_rate),
            (2.0, Some(300.0), Some(200.0))
        );
        assert_eq!(
            b.evidence,
            Evidence::Rate {
                completed: 280,
                scheduled: 300
            }
        );
        let mut failing = short.clone();
        failing[1].error_status = 3;
        let b = breaking_point(&failing, None).unwrap();
        assert_eq!(b.t_s, 1.0);
        assert_eq!(b.last_held_rate, Some(100.0));
        // At 5 a second, one response late is not a shortfall.
        assert_eq!(breaking_point(&[second(0.0, 5, 4, 1.0)], None), None);
        // A partial last second and the closed model say nothing.
        let mut partial = second(3.0, 300, 10, 1.0);
        partial.span_s = 0.2;
        assert_eq!(breaking_point(&[held[0].clone(), partial], None), None);
        let mut closed = held[0].clone();
        closed.scheduled = None;
        assert_eq!(breaking_point(&[closed], None), None);
    }

    /// A second of a connection profile: `connections` on average, completing `completed`.
    fn staffed(t: f64, connections: f64, completed: u64, p99_ms: f64) -> Entry {
        Entry {
            scheduled: None,
            dropped: None,
            target_connections: Some(connections),
            ..second(t, 0, completed, p99_ms)
        }
    }

    #[test]
    fn connections_break_where_more_of_them_stop_bringing_more_responses() {
        for scale in [0.001, 1.0, 1000.0] {
            // 100 a second per connection up to 4 connections; then the server is full.
            let t: Vec<Entry> = [(0.5, 50), (2.0, 200), (4.0, 400), (6.0, 400), (8.0, 400)]
                .iter()
                .enumerate()
                .map(|(i, &(c, done))| staffed(i as f64, c, done, scale))
                .collect();
            let b = breaking_point(&t, None).unwrap();
            assert_eq!(b.t_s, 3.0, "{scale}");
            assert_eq!(
                (b.target_connections, b.last_held_connections),
                (Some(6.0), Some(4.0))
            );
            assert_eq!((b.target_rate, b.last_held_rate), (None, None));
            assert_eq!(
                b.evidence,
                Evidence::Throughput {
                    completed: 400,
                    expected: 600
                }
            );
            // With a p99 target, the latency decides: it crosses at 8 connections.
            let mut slow = t.clone();
            for (e, p) in slow.iter_mut().zip([1.0, 1.0, 1.0, 1.4, 2.1]) {
                e.latency_ms.as_mut().unwrap().p99 = p * scale;
            }
            let b = breaking_point(&slow, Some(2.0 * scale)).unwrap();
            assert_eq!((b.t_s, b.target_connections), (4.0, Some(8.0)));
            // Responses that keep up with the connections hold, 4 % short included.
            let held: Vec<Entry> = (1..6)
                .map(|c| staffed(f64::from(c), f64::from(c), 96 * c as u64, scale))
                .collect();
            assert_eq!(breaking_point(&held, None), None);
        }
    }
}
