//! The insight section: plain sentences about the run, each from one documented rule with its
//! threshold (docs/MEASUREMENT.md), ending with a verdict on spate itself. No rule may claim
//! more than its numbers show.

use crate::numbers::{count, counted, millis, per_second};
use crate::stats::{
    Connections, ErrorRow, Generator, OpenModel, Percentiles, Phases, Requests, StatusRow,
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
}

pub fn insight(f: &Facts<'_>) -> Vec<String> {
    let mut out = Vec::new();
    errors(f, &mut out);
    shape(f, &mut out);
    tail_phase(f, &mut out);
    stall(f, &mut out);
    super::fairness::fairness(f.connections, f.open.is_none(), &mut out);
    schedule(f, &mut out);
    super::generator::generator(f, &mut out);
    out
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn errors(f: &Facts<'_>, out: &mut Vec<String>) {
    let r = f.requests;
    if r.attempted == 0 {
        out.push("No request was sent.".into());
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
        out.push(format!(
            "Requests were sent again {} on a new connection: the server had not processed them (a GOAWAY, or a kept-alive connection it had closed without saying so). Each request counts once, and none of these as a failure; their latency includes the new connection.",
            counted(r.retried, "time", "times")
        ));
    }
    if r.failed == 0 && bad_status == 0 {
        out.push(match r.completed {
            0 => format!(
                "No response arrived: {} requests were still waiting when the run ended (counted as interrupted).",
                count(r.interrupted)
            ),
            _ => "No request failed, and every response had a status below 400.".into(),
        });
        return;
    }
    if r.failed > 0 {
        let classes: Vec<String> = f
            .errors
            .iter()
            .map(|e| format!("{} {}", e.class, count(e.count)))
            .collect();
        out.push(format!(
            "{:.2} % of requests failed ({}).",
            pct(r.failed, r.attempted),
            classes.join(", ")
        ));
    }
    if bad_status > 0 {
        let mut codes: Vec<&StatusRow> = f.status_codes.iter().filter(|s| s.code >= 400).collect();
        codes.sort_by(|a, b| b.count.cmp(&a.count).then(a.code.cmp(&b.code)));
        let top: Vec<String> = codes
            .iter()
            .take(3)
            .map(|s| format!("{} x {}", s.code, count(s.count)))
            .collect();
        out.push(format!(
            "{:.2} % of responses had an error status (top: {}).",
            pct(bad_status, r.completed),
            top.join(", ")
        ));
    }
    let rate = (r.failed + bad_status) as f64 / r.attempted as f64;
    if rate > HIGH_ERROR_RATE {
        out.push(format!(
            "The error rate ({:.2} %) is above {:.0} %: look at the errors before trusting the latency figures.",
            rate * 100.0,
            HIGH_ERROR_RATE * 100.0
        ));
    }
}

/// 3xx responses are successes to the accounting (status below 400), but not what a person who
/// asked for the URL wanted: say that they were not followed, and why.
fn redirects(f: &Facts<'_>, out: &mut Vec<String>) {
    let n: u64 = f
        .status_codes
        .iter()
        .filter(|s| (300..400).contains(&s.code) && s.code != 304)
        .map(|s| s.count)
        .sum();
    if n == 0 {
        return;
    }
    let (n, share) = (count(n), pct(n, f.requests.completed));
    out.push(match f.redirect_limit {
        0 => format!(
            "{n} responses ({share:.2} %) were redirects (3xx): spate counts them as they came and does not follow them (--redirect N does), so what they point to was neither requested nor measured."
        ),
        _ => format!(
            "{n} responses ({share:.2} %) were 3xx that spate did not follow (not 301, 302, 303, 307 or 308, or without a Location): counted as they came."
        ),
    });
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

fn shape(f: &Facts<'_>, out: &mut Vec<String>) {
    let p = f.percentiles;
    let Some(spread) = ratio(p.p99, p.p50) else {
        out.push("No response completed, so there is no latency to describe.".into());
        return;
    };
    let (p50, p99) = (p.p50.unwrap_or(0.0), p.p99.unwrap_or(0.0));
    out.push(if spread <= SPREAD_TIGHT {
        format!("Latency is consistent: p99 ({}) is {spread:.1}x p50 ({}).", millis(p99), millis(p50))
    } else if spread <= SPREAD_WIDE {
        format!("Latency is moderately spread: p99 ({}) is {spread:.1}x p50 ({}).", millis(p99), millis(p50))
    } else {
        format!(
            "Latency is widely spread: p99 ({}) is {spread:.1}x p50 ({}); the slowest 1 % wait far longer than a typical request.",
            millis(p99),
            millis(p50)
        )
    });
    let mut notable = false;
    if let Some(q) = ratio(p.p95, p.p50).filter(|&q| q > QUEUEING) {
        notable = true;
        out.push(format!(
            "Latency grows under load: p95 is {q:.1}x p50, a sign of requests queueing in or in front of the server."
        ));
    }
    if let Some(t) = ratio(p.p99, p.p95).filter(|&t| t > TAIL_LONG) {
        notable = true;
        out.push(format!("The tail is long: p99 is {t:.1}x p95, so about 1 request in 100 is much slower than the rest."));
    }
    if f.latency_count >= OUTLIER_MIN_SAMPLES
        && let Some(o) = ratio(p.p99_9, p.p99).filter(|&o| o > OUTLIERS)
    {
        notable = true;
        out.push(format!(
            "There are rare outliers: p99.9 is {o:.1}x p99 (about 1 request in 1,000)."
        ));
    }
    let rare = (f.latency_count >= RARE_OUTLIER_MIN_SAMPLES)
        .then(|| ratio(p.p99_99, p.p99_9))
        .flatten();
    if let Some(o) = rare.filter(|&o| o > OUTLIERS) {
        notable = true;
        out.push(format!(
            "There are very rare outliers: p99.99 is {o:.1}x p99.9 (about 1 request in 10,000)."
        ));
    }
    if !notable {
        let rare = rare.map_or_else(String::new, |r| format!(", p99.99/p99.9 {r:.1}"));
        out.push(format!(
            "No long tail, outliers or queueing (p95/p50 {:.1}, p99/p95 {:.1}, p99.9/p99 {:.1}{rare}).",
            ratio(p.p95, p.p50).unwrap_or(1.0),
            ratio(p.p99, p.p95).unwrap_or(1.0),
            ratio(p.p99_9, p.p99).unwrap_or(1.0)
        ));
    }
}

fn tail_phase(f: &Facts<'_>, out: &mut Vec<String>) {
    let Some(p99) = f.percentiles.p99.filter(|&v| v > 0.0) else {
        return;
    };
    let ph = f.phases;
    let mut candidates = vec![
        (
            "waiting for the first byte (time the server took to answer)",
            ph.wait.p99_ms,
        ),
        ("reading the response body", ph.read.p99_ms),
        ("writing the request", ph.write.p99_ms),
    ];
    if let Some(o) = f.open {
        candidates.push((
            // A cause only where one was measured: a stall of spate's own.
            if spate_stall(f).is_some() {
                "waiting to be sent (send lag: spate itself did not run for a while)"
            } else {
                "waiting to be sent (send lag)"
            },
            o.send_lag.p99_ms,
        ));
    }
    // Connects inside latency only: the ones before the clock are in no request's latency.
    let connect = &f.phases.connect;
    let reconnecting = connect.count as f64 > RECONNECT_SHARE * f.requests.completed as f64;
    if reconnecting {
        candidates.push(("opening new connections", connect.p99_ms));
    }
    let Some((name, Some(v))) = candidates
        .into_iter()
        .filter(|(_, v)| v.is_some())
        .max_by(|a, b| a.1.unwrap_or(0.0).total_cmp(&b.1.unwrap_or(0.0)))
    else {
        return;
    };
    out.push(if reconnecting && name == "opening new connections" {
        // Of a subset of the requests: its p99 is not a part of the latency p99, so it is not
        // said to be one.
        format!(
            "The tail is in opening new connections: {} of {} requests ({:.1} %) opened one inside their latency, and opening it took {} at p99 (latency p99 {}).",
            count(connect.count),
            count(f.requests.completed),
            pct(connect.count, f.requests.completed),
            millis(v),
            millis(p99)
        )
    } else {
        format!(
            "The tail is in {name}: its p99 is {} of the {} latency p99.",
            millis(v),
            millis(p99)
        )
    });
}

fn stall(f: &Facts<'_>, out: &mut Vec<String>) {
    let Some((gap, at)) = f.longest_gap else {
        return;
    };
    let p50 = f.percentiles.p50.unwrap_or(0.0);
    if gap < STALL_MS || gap < STALL_P50_FACTOR * p50 {
        return;
    }
    if let Some((own, own_at)) = spate_stall(f) {
        let overlap = (at + gap / 1e3).min(own_at + own / 1e3) - at.max(own_at);
        if overlap * 1e3 >= 0.5 * gap {
            out.push(format!(
                "No response completed for {} (from {:.1} s into the run), but the server is not to blame: spate itself did not run for {} from {:.1} s (stopped, starved of CPU or swapped out). Requests in flight or due meanwhile count that time in their latency.",
                millis(gap),
                at,
                millis(own),
                own_at
            ));
            return;
        }
    }
    let when = format!(
        "No response completed for {} (from {:.1} s into the run): the server stalled.",
        millis(gap),
        at
    );
    out.push(if f.open.is_some() {format!("{when} The open-model latency includes the wait of every request intended meanwhile.")
    } else {
        format!(
            "{when} In the closed model spate sends nothing while every connection waits, so the requests a steady stream of clients would have sent meanwhile are missing from the percentiles (coordinated omission): they understate the stall. Use -q RATE (the open model) to measure it."
        )
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

fn schedule(f: &Facts<'_>, out: &mut Vec<String>) {
    let Some(o) = f.open else { return };
    let lag = o.send_lag.p99_ms;
    let rates = format!(
        "{} of the target {} requests/s",
        per_second(o.rate_achieved),
        per_second(o.rate_target)
    );
    if o.dropped > 0 || o.missed > 0 {
        let mut parts = Vec::new();
        if o.dropped > 0 {
            parts.push(format!("{} dropped for --max-lag", count(o.dropped)));
        }
        if o.missed > 0 {
            parts.push(format!("{} not sent before the end", count(o.missed)));
        }
        out.push(format!(
            "spate fell behind its schedule: {} of {} scheduled requests ({}); achieved {rates}. A due request waits while every connection is busy: the open model needs about rate x latency connections (-c, or -p with HTTP/2).",
            count(o.dropped + o.missed),
            count(o.scheduled),
            parts.join(", ")
        ));
    } else if lag.is_some_and(|l| l > SEND_LAG_MS) {
        out.push(format!(
            "Requests left late: send lag p99 {} (above {} ms); achieved {rates}. Their latency counts from the intended time, so the lag is inside it.",
            opt_ms(lag),
            SEND_LAG_MS
        ));
    } else {
        out.push(format!(
            "spate kept to its schedule: send lag p99 {}, {rates}.",
            opt_ms(lag)
        ));
    }
}

fn opt_ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), millis)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::stats::{Phase, StatusRow};

    fn phase(p99: Option<f64>) -> Phase {
        Phase {
            count: 1,
            mean_ms: p99,
            p50_ms: p99,
            p99_ms: p99,
            max_ms: p99,
            hdr_base64: String::new(),
        }
    }

    /// The connection figures of a healthy run, for the rules' tests.
    pub(in crate::analysis) fn connections() -> Connections {
        Connections {
            requested: 50,
            established: 50,
            reconnects: 0,
            connect_failures: 0,
            connect_error: None,
            dns_ms: 0.1,
            setup_ms: 2.0,
            not_opened: Default::default(),
            connect: phase(Some(0.2)),
            tls: Phase {
                count: 0,
                mean_ms: None,
                p50_ms: None,
                p99_ms: None,
                max_ms: None,
                hdr_base64: String::new(),
            },
            proxy: Phase {
                count: 0,
                ..phase(None)
            },
            tls_resumed: 0,
            http1: 50,
            http2: 0,
            server_max_streams: None,
            goaways: 0,
            requests_per_connection: None,
            requests_per_client: None,
        }
    }

    struct F {
        requests: Requests,
        percentiles: Percentiles,
        count: u64,
        statuses: Vec<StatusRow>,
        errors: Vec<ErrorRow>,
        phases: Phases,
        connections: Connections,
        generator: Generator,
        gap: Option<(f64, f64)>,
        redirect_limit: u32,
    }

    impl F {
        fn new() -> F {
            F {
                requests: Requests {
                    attempted: 10_000,
                    completed: 10_000,
                    successful: 10_000,
                    error_status: 0,
                    failed: 0,
                    interrupted: 0,
                    retried: 0,
                    redirects_followed: 0,
                },
                percentiles: Percentiles {
                    p10: Some(1.0),
                    p25: Some(1.0),
                    p50: Some(1.0),
                    p75: Some(1.1),
                    p90: Some(1.2),
                    p95: Some(1.3),
                    p99: Some(1.5),
                    p99_9: Some(2.0),
                    p99_99: Some(3.0),
                },
                count: 10_000,
                statuses: vec![StatusRow {
                    code: 200,
                    count: 10_000,
                }],
                errors: vec![],
                phases: Phases {
                    connect: phase(None),
                    write: phase(Some(0.01)),
                    wait: phase(Some(1.4)),
                    read: phase(Some(0.05)),
                },
                connections: connections(),
                generator: Generator {
                    threads: 2,
                    cpu_s: Some(1.0),
                    cpu_busy_percent: Some(40.0),
                    busy_connections_ratio: Some(0.998),
                    nofile_limit: Some(1024),
                    cores: Some(8),
                    fd_exhausted: 0,
                    stopped_by_signal: false,
                    busy_poll: false,
                    longest_stall_ms: Some(1.2),
                    longest_stall_at_s: Some(3.0),
                },
                gap: None,
                redirect_limit: 0,
            }
        }

        fn run(&self) -> Vec<String> {
            insight(&Facts {
                requests: &self.requests,
                percentiles: &self.percentiles,
                latency_count: self.count,
                status_codes: &self.statuses,
                errors: &self.errors,
                phases: &self.phases,
                connections: &self.connections,
                generator: &self.generator,
                elapsed_s: 10.0,
                open: None,
                longest_gap: self.gap,
                redirect_limit: self.redirect_limit,
            })
        }

        fn text(&self) -> String {
            self.run().join("\n")
        }
    }

    #[test]
    fn busy_polling_on_every_core_is_named() {
        let mut f = F::new();
        f.generator.busy_poll = true;
        f.generator.threads = 2;
        f.generator.cores = Some(2);
        let t = f.text();
        assert!(
            t.contains(
                "its 2 busy-polling load threads (--busy-poll) spun on all 2 of the machine's cores"
            ),
            "{t}"
        );
        assert!(!t.contains("Nothing indicates"), "{t}");
        f.generator.cores = Some(8);
        assert!(!f.text().contains("spun on all"));
    }

    #[test]
    fn redirects_are_said_to_be_unfollowed_and_no_response_is_not_success() {
        let mut f = F::new();
        f.statuses = vec![StatusRow {
            code: 301,
            count: 10_000,
        }];
        let t = f.text();
        assert!(
            t.contains("10,000 responses (100.00 %) were redirects (3xx): spate counts them as they came and does not follow them"),
            "{t}"
        );
        // Followed, what remains was not followable.
        f.redirect_limit = 5;
        f.statuses[0].code = 300;
        let t = f.text();
        assert!(
            t.contains("10,000 responses (100.00 %) were 3xx that spate did not follow"),
            "{t}"
        );
        // 304 Not Modified is an answer, not a redirect.
        f.redirect_limit = 0;
        f.statuses[0].code = 304;
        assert!(!f.text().contains("redirects"));

        let mut f = F::new();
        f.requests.completed = 0;
        f.requests.successful = 0;
        f.requests.interrupted = 10_000;
        f.statuses.clear();
        let t = f.text();
        assert!(!t.contains("No request failed"), "{t}");
        assert!(
            t.contains("No response arrived: 10,000 requests were still waiting"),
            "{t}"
        );
    }

    #[test]
    fn a_healthy_run() {
        let t = F::new().run();
        assert_eq!(
            t[0],
            "No request failed, and every response had a status below 400."
        );
        assert!(
            t[1].starts_with("Latency is consistent: p99 (1.500 ms) is 1.5x p50"),
            "{t:?}"
        );
        assert!(
            t[2].starts_with("No long tail, outliers or queueing"),
            "{t:?}"
        );
        assert!(
            t[3].starts_with("The tail is in waiting for the first byte"),
            "{t:?}"
        );
        assert_eq!(
            t.last().unwrap(),
            "Nothing indicates that spate limited this result."
        );
    }

    #[test]
    fn errors_and_error_statuses() {
        let mut f = F::new();
        f.requests = Requests {
            attempted: 1000,
            completed: 990,
            successful: 960,
            error_status: 30,
            failed: 10,
            interrupted: 0,
            retried: 0,
            redirects_followed: 0,
        };
        f.errors = vec![ErrorRow {
            class: "timeout".into(),
            count: 10,
            example: None,
        }];
        f.statuses = vec![
            StatusRow {
                code: 200,
                count: 960,
            },
            StatusRow {
                code: 404,
                count: 5,
            },
            StatusRow {
                code: 503,
                count: 25,
            },
        ];
        let t = f.text();
        assert!(t.contains("1.00 % of requests failed (timeout 10)."), "{t}");
        assert!(
            t.contains("3.03 % of responses had an error status (top: 503 x 25, 404 x 5)."),
            "{t}"
        );
        assert!(t.contains("The error rate (4.00 %) is above 1 %"), "{t}");
    }

    #[test]
    fn spread_bands() {
        let mut f = F::new();
        f.percentiles.p99 = Some(3.0);
        assert!(
            f.text()
                .contains("moderately spread: p99 (3.000 ms) is 3.0x")
        );
        f.percentiles.p99 = Some(8.0);
        assert!(f.text().contains("widely spread: p99 (8.000 ms) is 8.0x"));
    }

    #[test]
    fn queueing_tail_and_outliers() {
        let mut f = F::new();
        f.percentiles.p95 = Some(4.0);
        f.percentiles.p99 = Some(9.0);
        f.percentiles.p99_9 = Some(30.0);
        let t = f.text();
        assert!(
            t.contains("Latency grows under load: p95 is 4.0x p50"),
            "{t}"
        );
        assert!(t.contains("The tail is long: p99 is 2.2x p95"), "{t}");
        assert!(t.contains("rare outliers: p99.9 is 3.3x p99"), "{t}");
        assert!(!t.contains("No long tail"));
        f.count = 999;
        assert!(!f.text().contains("outliers:"), "too few samples for p99.9");
    }

    #[test]
    fn resends_are_said_and_are_not_failures() {
        let mut f = F::new();
        assert!(!f.text().contains("sent again"));
        f.requests.retried = 12;
        let t = f.text();
        assert!(
            t.contains("Requests were sent again 12 times on a new connection"),
            "{t}"
        );
        assert!(t.contains("No request failed"), "{t}");
    }

    #[test]
    fn a_long_way_from_p99_9_to_p99_99_is_not_no_long_tail() {
        // The run that was summed up as "No long tail": p99.9 11.7 ms, p99.99 214.8 ms.
        let mut f = F::new();
        f.percentiles.p99_9 = Some(2.0);
        f.percentiles.p99_99 = Some(36.7);
        let t = f.text();
        assert!(
            t.contains(
                "There are very rare outliers: p99.99 is 18.4x p99.9 (about 1 request in 10,000)."
            ),
            "{t}"
        );
        assert!(!t.contains("No long tail"), "{t}");
        f.count = 9_999;
        let t = f.text();
        assert!(!t.contains("very rare"), "too few samples for p99.99: {t}");
        assert!(t.contains("No long tail"), "{t}");
        assert!(!t.contains("p99.99/p99.9"), "{t}");
        f.count = 10_000;
        f.percentiles.p99_99 = Some(3.0);
        assert!(f.text().contains("p99.9/p99 1.3, p99.99/p99.9 1.5)."));
    }

    #[test]
    fn tail_phase_can_be_the_body_or_reconnects() {
        let mut f = F::new();
        f.phases.read = phase(Some(1.45));
        assert!(
            f.text()
                .contains("The tail is in reading the response body")
        );
        // Connects before the clock are in no request's latency: never the tail.
        f.connections.reconnects = 500;
        f.connections.connect = phase(Some(900.0));
        assert!(!f.text().contains("opening new connections"));
        f.phases.connect = Phase {
            count: 500,
            ..phase(Some(2.0))
        };
        assert!(
            f.text().contains(
                "The tail is in opening new connections: 500 of 10,000 requests (5.0 %) opened one inside their latency, and opening it took 2.000 ms at p99 (latency p99 1.500 ms)."
            ),
            "{}",
            f.text()
        );
        f.phases.connect.count = 100;
        assert!(
            !f.text().contains("opening new connections"),
            "1 % or fewer reconnects"
        );
    }

    #[test]
    fn spate_as_the_bottleneck() {
        let mut f = F::new();
        f.generator.cpu_busy_percent = Some(97.0);
        let t = f.text();
        assert!(t.contains("may be limited by spate rather than by the server: its 2 load threads were busy 97 %"), "{t}");
        f.generator.threads = 1;
        assert!(f.text().contains("its load thread was busy 97 %"));

        let mut f = F::new();
        f.generator.busy_connections_ratio = Some(0.7);
        assert!(
            f.text()
                .contains("connections were busy only 70 % of the time")
        );

        let mut f = F::new();
        f.connections.established = 30;
        f.connections.connect_error = Some("Too many open files (os error 24)".into());
        f.generator.fd_exhausted = 20;
        let t = f.text();
        assert!(
            t.contains(
                "only 30 of 50 connections could be opened (first error: Too many open files"
            ),
            "{t}"
        );
        assert!(
            t.contains("the file-descriptor limit was reached (ulimit -n is 1024)"),
            "{t}"
        );
        assert!(!t.contains("Nothing indicates"));

        let mut f = F::new();
        f.connections.established = 2;
        f.connections.connect_error = Some("connect timed out after 10s".into());
        f.connections.not_opened.timed_out = 8;
        f.connections.not_opened.cut_off = 10;
        f.connections.not_opened.not_tried = 30;
        f.connections.setup_ms = 30_000.0;
        let t = f.text();
        assert!(
            t.contains(
                "only 2 of 50 connections could be opened (first error: connect timed out after \
                 10s; 40 were not open when the connection phase ended after 30.000 s)"
            ),
            "{t}"
        );
    }

    #[test]
    fn a_stall_is_put_on_the_server_or_on_spate() {
        let mut f = F::new();
        f.gap = Some((1_000.0, 4.0));
        let t = f.text();
        assert!(
            t.contains(
                "No response completed for 1.000 s (from 4.0 s into the run): the server stalled."
            ),
            "{t}"
        );
        assert!(t.contains("coordinated omission"), "closed model: {t}");
        assert!(t.contains("Nothing indicates that spate limited"), "{t}");

        // spate did not run for most of that second: not the server's stall.
        f.generator.longest_stall_ms = Some(900.0);
        f.generator.longest_stall_at_s = Some(4.1);
        let t = f.text();
        assert!(
            t.contains(
                "but the server is not to blame: spate itself did not run for 900.000 ms from 4.1 s"
            ),
            "{t}"
        );
        assert!(!t.contains("the server stalled"), "{t}");
        assert!(
            t.contains("may be limited by spate rather than by the server: a load thread did not run for 900.000 ms"),
            "{t}"
        );

        // A stall of spate at another time leaves the server's stall to the server.
        f.generator.longest_stall_at_s = Some(8.0);
        let t = f.text();
        assert!(t.contains("the server stalled"), "{t}");
        assert!(
            t.contains("a load thread did not run for 900.000 ms from 8.0 s"),
            "{t}"
        );

        // Below 100 ms a late timer is not a stall.
        f.generator.longest_stall_ms = Some(60.0);
        assert!(f.text().contains("Nothing indicates that spate limited"));
    }

    #[test]
    fn stopped_runs_and_missing_data() {
        let mut f = F::new();
        f.generator.stopped_by_signal = true;
        assert!(
            f.text()
                .contains("stopped early (Ctrl-C, SIGTERM or SIGHUP) after 10.000 s")
        );
        let mut f = F::new();
        f.requests.interrupted = 7;
        assert!(f.text().contains("7 requests were still in flight"));
        f.generator.cpu_busy_percent = None;
        assert!(f.text().contains("not known on this platform"));
        f.requests = Requests {
            attempted: 0,
            completed: 0,
            successful: 0,
            error_status: 0,
            failed: 0,
            interrupted: 0,
            retried: 0,
            redirects_followed: 0,
        };
        assert!(f.text().starts_with("No request was sent."));
        f.percentiles.p50 = None;
        assert!(f.text().contains("No response completed"));
    }
}
