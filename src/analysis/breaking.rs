//! `--stages`: the breaking point, the load at which the service stopped keeping up, read from
//! the timeline. The first whole second whose p99 crossed the `--slo` p99 target or, without
//! one, whose completions fell below 95 % of the requests it scheduled, or that had errors (a
//! failure or a status of 400 or more). A typed finding with its evidence; no words.

use serde::{Deserialize, Serialize};

use crate::stats::timeline::Entry;

/// Of the requests a second scheduled, the share that must complete in it for it to hold.
pub const HELD_SHARE: f64 = 0.95;

/// Where the load broke the service, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakingPoint {
    /// The second's start, seconds into the measured window.
    pub t_s: f64,
    /// The rate that second scheduled, requests per second.
    pub target_rate: f64,
    /// The rate the last second that held scheduled; `None` when the first second broke.
    pub last_held_rate: Option<f64>,
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
    /// Requests failed, or responses had a status of 400 or more.
    Errors { failed: u64, error_status: u64 },
}

/// The breaking point of an open-model `timeline`, judged against `p99_target_ms` when the run
/// has one; `None` when every whole second held (or the run was not paced).
pub fn breaking_point(timeline: &[Entry], p99_target_ms: Option<f64>) -> Option<BreakingPoint> {
    let mut last_held = None;
    for e in timeline {
        // The closed model schedules nothing.
        let scheduled = e.scheduled?;
        // A last, partial second (the drain) or one that scheduled nothing says nothing.
        if e.span_s < 0.999 || scheduled == 0 {
            continue;
        }
        let rate = scheduled as f64 / e.span_s;
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
            None if ((e.completed + 1) as f64) < HELD_SHARE * scheduled as f64 => {
                Some(Evidence::Rate {
                    completed: e.completed,
                    scheduled,
                })
            }
            None => None,
        };
        match evidence {
            Some(evidence) => {
                return Some(BreakingPoint {
                    t_s: e.t_s,
                    target_rate: rate,
                    last_held_rate: last_held,
                    evidence,
                });
            }
            None => last_held = Some(rate),
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
            assert_eq!(b.target_rate, 300.0);
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
            (2.0, 300.0, Some(200.0))
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
}
