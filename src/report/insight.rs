//! The insight's sentences: each typed finding of `analysis` in words, the same for the text
//! report, the HTML report and the JSON's `insight`. Judges nothing: every threshold and
//! every figure said here comes with the finding.

use super::limits::{busy_what, limit};
use crate::analysis::{Finding, HIGH_ERROR_RATE, SEND_LAG_MS, Spread, TailPhase};
use crate::numbers::{count, counted, millis, per_second};

/// Every finding as its sentence, in order.
pub fn sentences(findings: &[Finding]) -> Vec<String> {
    findings.iter().map(sentence).collect()
}

pub fn sentence(f: &Finding) -> String {
    use Finding as F;
    match f {
        F::DidNotStart { message } => format!("The run did not start: {message}"),
        F::BreakingPoint(b) => super::stages::breaking_point(b),
        F::NothingSent => "No request was sent.".into(),
        F::Redirects {
            count: n,
            share,
            followed: false,
        } => format!(
            "{} responses ({share:.2} %) were redirects (3xx): spate counts them as they came and does not follow them (--redirect N does), so what they point to was neither requested nor measured.",
            count(*n)
        ),
        F::Redirects {
            count: n,
            share,
            followed: true,
        } => format!(
            "{} responses ({share:.2} %) were 3xx that spate did not follow (not 301, 302, 303, 307 or 308, or without a Location): counted as they came.",
            count(*n)
        ),
        F::Resent { times } => format!(
            "Requests were sent again {} on a new connection: the server had not processed them (a GOAWAY, or a kept-alive connection it had closed without saying so). Each request counts once, and none of these as a failure; their latency includes the new connection.",
            counted(*times, "time", "times")
        ),
        F::NoResponse { interrupted } => format!(
            "No response arrived: {} requests were still waiting when the run ended (counted as interrupted).",
            count(*interrupted)
        ),
        F::StreamPace {
            first_data_ms,
            gap_ms,
            after_first_ms,
            grpc: true,
        } => {
            let most = match first_data_ms >= after_first_ms {
                true => "most of a call's time is the wait for its first message",
                false => {
                    "most of a call's time comes after its first message (the pace the server sends at, not its first answer)"
                }
            };
            format!(
                "Server-streaming calls: the first message came after {} (p50), then one every {} (p50 gap): {most}.",
                millis(*first_data_ms),
                millis(*gap_ms)
            )
        }
        F::StreamPace {
            first_data_ms,
            gap_ms,
            after_first_ms,
            grpc: false,
        } => {
            let most = match first_data_ms >= after_first_ms {
                true => {
                    "most of a stream's time is the wait for its first token (the server's queue and prompt processing, not its token rate)"
                }
                false => {
                    "most of a stream's time comes after its first token (the server's token rate, not its first answer)"
                }
            };
            format!(
                "Streams: the first data event came after {} (p50), then one every {} (p50 gap): {most}.",
                millis(*first_data_ms),
                millis(*gap_ms)
            )
        }
        F::StreamStalled {
            longest_ms,
            gap_ms,
            grpc,
        } => format!(
            "A stream stalled: its longest gap between {} was {}, {:.0}x the median gap ({}); the streams' longest gaps are in the Streaming section.",
            if *grpc { "messages" } else { "events" },
            millis(*longest_ms),
            longest_ms / gap_ms.max(1e-9),
            millis(*gap_ms)
        ),
        F::NoErrors => "No request failed, and every response had a status below 400.".into(),
        F::Failed { share, classes } => {
            let classes: Vec<String> = classes
                .iter()
                .map(|c| format!("{} {}", c.class, count(c.count)))
                .collect();
            format!("{share:.2} % of requests failed ({}).", classes.join(", "))
        }
        F::ErrorStatus { share, top } => {
            let top: Vec<String> = top
                .iter()
                .map(|c| format!("{} x {}", c.code, count(c.count)))
                .collect();
            format!(
                "{share:.2} % of responses had an error status (top: {}).",
                top.join(", ")
            )
        }
        F::HighErrorRate { share } => format!(
            "The error rate ({share:.2} %) is above {:.0} %: look at the errors before trusting the latency figures.",
            HIGH_ERROR_RATE * 100.0
        ),
        F::NoLatency => "No response completed, so there is no latency to describe.".into(),
        F::Spread {
            band,
            p50,
            p99,
            ratio,
        } => {
            let (p50, p99) = (millis(*p50), millis(*p99));
            match band {
                Spread::Consistent => {
                    format!("Latency is consistent: p99 ({p99}) is {ratio:.1}x p50 ({p50}).")
                }
                Spread::Moderate => {
                    format!("Latency is moderately spread: p99 ({p99}) is {ratio:.1}x p50 ({p50}).")
                }
                Spread::Wide => format!(
                    "Latency is widely spread: p99 ({p99}) is {ratio:.1}x p50 ({p50}); the slowest 1 % wait far longer than a typical request."
                ),
            }
        }
        F::Mixed { kinds } => format!(
            "These figures mix the latencies of {} tools, each with its own: see Per tool before reading queueing into their spread.",
            count(*kinds)
        ),
        F::Queueing { ratio } => format!(
            "Latency grows under load: p95 is {ratio:.1}x p50, a sign of requests queueing in or in front of the server."
        ),
        F::LongTail { ratio } => format!(
            "The tail is long: p99 is {ratio:.1}x p95, so about 1 request in 100 is much slower than the rest."
        ),
        F::Outliers { ratio } => {
            format!("There are rare outliers: p99.9 is {ratio:.1}x p99 (about 1 request in 1,000).")
        }
        F::RareOutliers { ratio } => format!(
            "There are very rare outliers: p99.99 is {ratio:.1}x p99.9 (about 1 request in 10,000)."
        ),
        F::NoTail {
            p95_p50,
            p99_p95,
            p99_9_p99,
            p99_99_p99_9,
        } => {
            let rare = p99_99_p99_9.map_or_else(String::new, |r| format!(", p99.99/p99.9 {r:.1}"));
            format!(
                "No long tail, outliers or queueing (p95/p50 {p95_p50:.1}, p99/p95 {p99_p95:.1}, p99.9/p99 {p99_9_p99:.1}{rare})."
            )
        }
        F::TailPhase {
            phase,
            p99,
            latency_p99,
        } => format!(
            "The tail is in {}: its p99 is {} of the {} latency p99.",
            phase_name(*phase),
            millis(*p99),
            millis(*latency_p99)
        ),
        // Of a subset of the requests: its p99 is not said to be a part of the latency p99.
        F::TailInConnects {
            count: n,
            completed,
            share,
            p99,
            latency_p99,
        } => format!(
            "The tail is in opening new connections: {} of {} requests ({share:.1} %) opened one inside their latency, and opening it took {} at p99 (latency p99 {}).",
            count(*n),
            count(*completed),
            millis(*p99),
            millis(*latency_p99)
        ),
        F::SpateStalled {
            gap_ms,
            at_s,
            own_ms,
            own_at_s,
        } => format!(
            "No response completed for {} (from {at_s:.1} s into the run), but the server is not to blame: spate itself did not run for {} from {own_at_s:.1} s (stopped, starved of CPU or swapped out). Requests in flight or due meanwhile count that time in their latency.",
            millis(*gap_ms),
            millis(*own_ms),
        ),
        F::ServerStalled {
            gap_ms,
            at_s,
            open_model,
        } => {
            let when = format!(
                "No response completed for {} (from {at_s:.1} s into the run): the server stalled.",
                millis(*gap_ms)
            );
            match open_model {
                true => format!(
                    "{when} The open-model latency includes the wait of every request intended meanwhile."
                ),
                false => format!(
                    "{when} In the closed model spate sends nothing while every connection waits, so the requests a steady stream of clients would have sent meanwhile are missing from the percentiles (coordinated omission): they understate the stall. Use -q RATE (the open model) to measure it."
                ),
            }
        }
        F::Starved {
            starved,
            established,
            median_answered,
        } => format!(
            "{} of {} connections got no response in the whole run while the others completed \
             a median of {} each: the server never answered them (look at its listen backlog, \
             connection limit or event loop). The latency figures describe only the answered \
             connections; the unanswered requests ended as interrupted or timed out.",
            count(*starved),
            count(*established),
            count(*median_answered)
        ),
        F::Uneven { min, max, median } => format!(
            "Connections were served unevenly: from {} to {} requests each (median {}).",
            count(*min),
            count(*max),
            count(*median)
        ),
        F::BehindSchedule {
            dropped,
            missed,
            scheduled,
            achieved,
            target,
        } => {
            let mut parts = Vec::new();
            if *dropped > 0 {
                parts.push(format!("{} dropped for --max-lag", count(*dropped)));
            }
            if *missed > 0 {
                parts.push(format!("{} not sent before the end", count(*missed)));
            }
            format!(
                "spate fell behind its schedule: {} of {} scheduled requests ({}); achieved {}. A due request waits while every connection is busy: the open model needs about rate x latency connections (-c, or -p with HTTP/2 or HTTP/3).",
                count(dropped + missed),
                count(*scheduled),
                parts.join(", "),
                rates(*achieved, *target)
            )
        }
        F::LateSends {
            lag_p99,
            achieved,
            target,
        } => format!(
            "Requests left late: send lag p99 {} (above {SEND_LAG_MS} ms); achieved {}. Their latency counts from the intended time, so the lag is inside it.",
            opt_ms(*lag_p99),
            rates(*achieved, *target)
        ),
        F::OnSchedule {
            lag_p99,
            achieved,
            target,
        } => format!(
            "spate kept to its schedule: send lag p99 {}, {}.",
            opt_ms(*lag_p99),
            rates(*achieved, *target)
        ),
        F::StoppedEarly { elapsed_s } => format!(
            "The run was stopped early (Ctrl-C, SIGTERM or SIGHUP) after {}; the numbers cover that part only.",
            millis(elapsed_s * 1e3)
        ),
        F::InFlight { interrupted } => format!(
            "{} requests were still in flight when the drain after the deadline ended; they are counted as interrupted.",
            count(*interrupted)
        ),
        F::BusyPolled { cpu_busy } => format!(
            "spate busy-polled (--busy-poll), so its CPU use ({cpu_busy:.0} %) does not show whether it was saturated."
        ),
        F::CpuUse {
            threads: 1,
            cpu_busy,
        } => format!("spate's load thread used {cpu_busy:.0} % of its CPU time."),
        F::CpuUse { threads, cpu_busy } => {
            format!("spate's {threads} load threads used {cpu_busy:.0} % of their CPU time.")
        }
        F::CpuUnknown => "spate's CPU use is not known on this platform.".into(),
        F::ScriptCost {
            us_per_request,
            cpu_share,
        } => format!(
            "The script's Lua (delay, request, response) took {us_per_request:.2} µs per request{}.",
            cpu_share.map_or(String::new(), |c| format!(", {c:.0} % of spate's CPU time"))
        ),
        // The law's estimate can pass 100 % by its error: no connection is busier than always.
        F::ConnectionsLoaded { busy, streams } if *busy > 100.0 => format!(
            "{} were busy all of the time ({} gives {busy:.1} %, 100 % within its error): spate kept them loaded.",
            busy_what(*streams).0,
            busy_what(*streams).1
        ),
        F::ConnectionsLoaded { busy, streams } => format!(
            "{} were busy {busy:.1} % of the time ({}): spate kept them loaded.",
            busy_what(*streams).0,
            busy_what(*streams).1
        ),
        F::PortsExhausted { connects } => format!(
            "{} connects found no free local port (EADDRNOTAVAIL): every closed connection keeps its \
             port in TIME_WAIT for about a minute, so opening a connection per request (--rpc 1, \
             --disable-keepalive) at this rate uses up the ephemeral port range \
             (net.ipv4.ip_local_port_range on Linux). Keep connections alive (a larger --rpc), lower \
             the rate, or widen the port range.",
            count(*connects)
        ),
        F::SpateLimited { limits } => {
            let limits: Vec<String> = limits.iter().map(limit).collect();
            format!(
                "This result may be limited by spate rather than by the server: {}.",
                limits.join("; ")
            )
        }
        F::NotLimited => "Nothing indicates that spate limited this result.".into(),
    }
}

fn phase_name(p: TailPhase) -> &'static str {
    match p {
        TailPhase::Wait => "waiting for the first byte (time the server took to answer)",
        TailPhase::Read => "reading the response body",
        TailPhase::Write => "writing the request",
        TailPhase::SendLag => "waiting to be sent (send lag)",
        TailPhase::SendLagSpateStalled => {
            "waiting to be sent (send lag: spate itself did not run for a while)"
        }
    }
}

fn rates(achieved: f64, target: f64) -> String {
    format!(
        "{} of the target {} requests/s",
        per_second(achieved),
        per_second(target)
    )
}

fn opt_ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), millis)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixture::{F, phase};
    use crate::stats::{ErrorRow, Phase, Requests, StatusRow};

    trait Said {
        fn sentences(&self) -> Vec<String>;
        fn said(&self) -> String {
            self.sentences().join("\n")
        }
    }

    impl Said for F {
        fn sentences(&self) -> Vec<String> {
            sentences(&self.run())
        }
    }

    #[test]
    fn busy_polling_on_every_core_is_named() {
        let mut f = F::new();
        f.generator.busy_poll = true;
        f.generator.threads = 2;
        f.generator.cores = Some(2);
        let t = f.said();
        assert!(
            t.contains(
                "its 2 busy-polling load threads (--busy-poll) spun on all 2 of the machine's cores"
            ),
            "{t}"
        );
        assert!(!t.contains("Nothing indicates"), "{t}");
        f.generator.cores = Some(8);
        assert!(!f.said().contains("spun on all"));
    }

    #[test]
    fn redirects_are_said_to_be_unfollowed_and_no_response_is_not_success() {
        let mut f = F::new();
        f.statuses = vec![StatusRow {
            code: 301,
            count: 10_000,
        }];
        let t = f.said();
        assert!(
            t.contains("10,000 responses (100.00 %) were redirects (3xx): spate counts them as they came and does not follow them"),
            "{t}"
        );
        // Followed, what remains was not followable.
        f.redirect_limit = 5;
        f.statuses[0].code = 300;
        let t = f.said();
        assert!(
            t.contains("10,000 responses (100.00 %) were 3xx that spate did not follow"),
            "{t}"
        );
        // 304 Not Modified is an answer, not a redirect.
        f.redirect_limit = 0;
        f.statuses[0].code = 304;
        assert!(!f.said().contains("redirects"));

        let mut f = F::new();
        f.requests.completed = 0;
        f.requests.successful = 0;
        f.requests.interrupted = 10_000;
        f.statuses.clear();
        let t = f.said();
        assert!(!t.contains("No request failed"), "{t}");
        assert!(
            t.contains("No response arrived: 10,000 requests were still waiting"),
            "{t}"
        );
    }

    #[test]
    fn a_healthy_run() {
        let t = F::new().sentences();
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
        let t = f.said();
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
            f.said()
                .contains("moderately spread: p99 (3.000 ms) is 3.0x")
        );
        f.percentiles.p99 = Some(8.0);
        assert!(f.said().contains("widely spread: p99 (8.000 ms) is 8.0x"));
    }

    #[test]
    fn queueing_tail_and_outliers() {
        let mut f = F::new();
        f.percentiles.p95 = Some(4.0);
        f.percentiles.p99 = Some(9.0);
        f.percentiles.p99_9 = Some(30.0);
        let t = f.said();
        assert!(
            t.contains("Latency grows under load: p95 is 4.0x p50"),
            "{t}"
        );
        assert!(t.contains("The tail is long: p99 is 2.2x p95"), "{t}");
        assert!(t.contains("rare outliers: p99.9 is 3.3x p99"), "{t}");
        assert!(!t.contains("No long tail"));
        f.count = 999;
        assert!(!f.said().contains("outliers:"), "too few samples for p99.9");
    }

    #[test]
    fn resends_are_said_and_are_not_failures() {
        let mut f = F::new();
        assert!(!f.said().contains("sent again"));
        f.requests.retried = 12;
        let t = f.said();
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
        let t = f.said();
        assert!(
            t.contains(
                "There are very rare outliers: p99.99 is 18.4x p99.9 (about 1 request in 10,000)."
            ),
            "{t}"
        );
        assert!(!t.contains("No long tail"), "{t}");
        f.count = 9_999;
        let t = f.said();
        assert!(!t.contains("very rare"), "too few samples for p99.99: {t}");
        assert!(t.contains("No long tail"), "{t}");
        assert!(!t.contains("p99.99/p99.9"), "{t}");
        f.count = 10_000;
        f.percentiles.p99_99 = Some(3.0);
        assert!(f.said().contains("p99.9/p99 1.3, p99.99/p99.9 1.5)."));
    }

    #[test]
    fn tail_phase_can_be_the_body_or_reconnects() {
        let mut f = F::new();
        f.phases.read = phase(Some(1.45));
        assert!(
            f.said()
                .contains("The tail is in reading the response body")
        );
        // Connects before the clock are in no request's latency: never the tail.
        f.connections.reconnects = 500;
        f.connections.connect = phase(Some(900.0));
        assert!(!f.said().contains("opening new connections"));
        f.phases.connect = Phase {
            count: 500,
            ..phase(Some(2.0))
        };
        assert!(
            f.said().contains(
                "The tail is in opening new connections: 500 of 10,000 requests (5.0 %) opened one inside their latency, and opening it took 2.000 ms at p99 (latency p99 1.500 ms)."
            ),
            "{}",
            f.said()
        );
        f.phases.connect.count = 100;
        assert!(
            !f.said().contains("opening new connections"),
            "1 % or fewer reconnects"
        );
    }

    #[test]
    fn spate_as_the_bottleneck() {
        let mut f = F::new();
        f.generator.cpu_busy_percent = Some(97.0);
        let t = f.said();
        assert!(t.contains("may be limited by spate rather than by the server: its 2 load threads were busy 97 %"), "{t}");
        f.generator.threads = 1;
        assert!(f.said().contains("its load thread was busy 97 %"));

        let mut f = F::new();
        f.generator.busy_connections_ratio = Some(0.7);
        assert!(
            f.said()
                .contains("connections were busy only 70 % of the time")
        );
        // An estimate past 100 % by its error says so, not that connections were busier than
        // always.
        f.generator.busy_connections_ratio = Some(1.001);
        let t = f.said();
        assert!(t.contains("Connections were busy all of the time"), "{t}");
        assert!(!t.contains("busy 100.1 % of the time"), "{t}");
        // Over HTTP/2 the law counts each connection's streams, and says so.
        f.generator.busy_connections_ratio = Some(0.985);
        f.generator.busy_streams = Some(8);
        let t = f.said();
        assert!(
            t.contains("Streams were busy 98.5 % of the time (mean latency x rate / (connections x 8 streams))"),
            "{t}"
        );
        f.generator.busy_connections_ratio = Some(0.5);
        let t = f.said();
        assert!(
            t.contains("its streams were busy only 50 % of the time (mean latency x rate / (connections x 8 streams))"),
            "{t}"
        );

        let mut f = F::new();
        f.connections.established = 30;
        f.connections.connect_error = Some("Too many open files (os error 24)".into());
        f.generator.fd_exhausted = 20;
        let t = f.said();
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
        let t = f.said();
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
        let t = f.said();
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
        let t = f.said();
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
        let t = f.said();
        assert!(t.contains("the server stalled"), "{t}");
        assert!(
            t.contains("a load thread did not run for 900.000 ms from 8.0 s"),
            "{t}"
        );

        // Below 100 ms a late timer is not a stall.
        f.generator.longest_stall_ms = Some(60.0);
        assert!(f.said().contains("Nothing indicates that spate limited"));
    }

    #[test]
    fn stopped_runs_and_missing_data() {
        let mut f = F::new();
        f.generator.stopped_by_signal = true;
        assert!(
            f.said()
                .contains("stopped early (Ctrl-C, SIGTERM or SIGHUP) after 10.000 s")
        );
        let mut f = F::new();
        f.requests.interrupted = 7;
        assert!(f.said().contains("7 requests were still in flight"));
        f.generator.cpu_busy_percent = None;
        assert!(f.said().contains("not known on this platform"));
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
        assert!(f.said().starts_with("No request was sent."));
        f.percentiles.p50 = None;
        assert!(f.said().contains("No response completed"));
    }
}
