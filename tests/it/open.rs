//! The open model (-q) and connection churn against the built-in server: exact counts, the
//! schedule's accounting, --max-lag, a server stall against its analytic percentiles, the
//! closed model's coordinated omission pointed out, --rpc, --warmup, --busy-poll, and a stall of
//! spate itself. Time-based checks are lower bounds or wide tolerances against known truths.

use std::process::Command;
use std::time::Duration;

use spate::plan::{Protocol, Rate, Stop};
use spate::serve::{ServeConfig, Server, Stall};

use crate::support::{plan, requests, run};

fn server(delay: Duration, stall: Option<Stall>, h2c: bool) -> Server {
    Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        delay,
        stall,
        h2c,
        ..ServeConfig::default()
    })
    .unwrap()
}

fn rate(per_second: u64) -> Option<Rate> {
    Some(Rate {
        num: per_second,
        den: 1,
    })
}

#[test]
fn open_model_counts_are_exact_for_both_protocols() {
    for h2c in [false, true] {
        let s = server(Duration::ZERO, None, h2c);
        let mut p = plan(&s.url(), 8, requests(500));
        p.rate = rate(2_000);
        if h2c {
            p.protocol = Protocol::Http2;
            p.h2.streams = 4;
        }
        let (out, summary) = run(&p);
        assert_eq!(s.requests(), 500, "h2c={h2c}");
        assert_eq!(out.stats.attempts, 500);
        let o = summary.open_model.as_ref().unwrap();
        assert_eq!(
            (o.scheduled, o.sent, o.dropped, o.missed),
            (500, 500, 0, 0),
            "h2c={h2c}"
        );
        assert_eq!(summary.config.model, "open");
        assert_eq!(out.stats.service.len(), 500);
        assert_eq!(out.stats.lag.len(), 500);
    }
}

#[test]
fn a_duration_schedule_has_exactly_rate_x_duration_requests() {
    let s = server(Duration::ZERO, None, false);
    let mut p = plan(&s.url(), 16, Stop::Duration(Duration::from_secs(1)));
    p.rate = Some(Rate { num: 801, den: 2 }); // 400.5 per second
    let (_, summary) = run(&p);
    let o = summary.open_model.as_ref().unwrap();
    assert_eq!(
        o.scheduled, 401,
        "intended times in [0, 1 s) at 400.5/s: 0, 1/400.5 s, ... 400/400.5 s"
    );
    assert_eq!(o.sent + o.dropped + o.missed, o.scheduled);
    assert!(
        (o.rate_achieved - 400.5).abs() / 400.5 < 0.05,
        "achieved {}",
        o.rate_achieved
    );
    assert_eq!(s.requests(), o.sent);
}

#[test]
fn requests_never_sent_are_missed_and_lower_the_achieved_rate() {
    // Two connections and a server that answers nothing within the run: two requests leave,
    // the other 48 of the 0.5 s schedule wait until the run ends.
    let s = server(Duration::from_secs(10), None, false);
    let mut p = plan(&s.url(), 2, Stop::Duration(Duration::from_millis(500)));
    p.rate = rate(100);
    let (out, summary) = run(&p);
    let o = summary.open_model.as_ref().unwrap();
    assert_eq!((o.scheduled, o.sent, o.missed), (50, 2, 48), "{o:?}");
    assert_eq!(out.stats.interrupted, 2);
    assert!(
        o.rate_achieved <= 2.0 / 0.5 + 1e-9,
        "2 sent over a 0.5 s schedule, achieved {}",
        o.rate_achieved
    );
    assert!(
        summary
            .insight
            .iter()
            .any(|l| l.contains("48 not sent before the end")),
        "{:?}",
        summary.insight
    );
}

/// The backlog waiting for a connection at the end of -z is missed, never sent during the
/// drain: 10 connections to a 30 ms server can send at most 10 x (1 s / 30 ms + 1) = 350 of
/// the 1,000 intended requests, and the server receives exactly what was sent.
#[test]
fn nothing_is_sent_after_the_end_of_a_timed_run() {
    let s = server(Duration::from_millis(30), None, false);
    let mut p = plan(&s.url(), 10, Stop::Duration(Duration::from_secs(1)));
    p.threads = 2;
    p.rate = rate(1000);
    let (out, summary) = run(&p);
    let o = summary.open_model.as_ref().unwrap();
    assert_eq!(o.scheduled, 1000, "{o:?}");
    assert!(o.sent <= 350, "sent {} after the end: {o:?}", o.sent);
    assert_eq!(o.sent + o.dropped + o.missed, o.scheduled, "{o:?}");
    assert!(o.missed >= 650, "{o:?}");
    assert_eq!(out.stats.attempts, o.sent);
    assert_eq!(
        s.requests(),
        o.sent,
        "the server received what was sent, no more"
    );
}

#[test]
fn max_lag_drops_and_counts_what_cannot_leave_in_time() {
    // One connection, 20 ms per response, 200 requests/s due: most must wait far too long.
    let s = server(Duration::from_millis(20), None, false);
    let mut p = plan(&s.url(), 1, Stop::Duration(Duration::from_millis(500)));
    p.threads = 1;
    p.rate = rate(200);
    p.max_lag = Some(Duration::from_millis(5));
    let (out, summary) = run(&p);
    let o = summary.open_model.as_ref().unwrap();
    assert!(o.dropped > 50, "{o:?}");
    assert_eq!(o.sent + o.dropped + o.missed, o.scheduled);
    assert_eq!(o.scheduled, 100);
    assert!(
        out.stats.lag.hdr().max() <= 6_000_000,
        "nothing sent later than --max-lag"
    );
    assert!(
        summary
            .insight
            .iter()
            .any(|l| l.contains("fell behind its schedule")),
        "{:?}",
        summary.insight
    );
}

#[test]
fn a_server_stall_in_the_open_model_matches_the_analytic_percentiles() {
    // The server answers nothing in [1.2 s, 1.6 s) of its life (and every 1.2 s after); the 2 s
    // run sees that stall. Requests intended during a stall wait until it ends: their latency is
    // uniform on [d, S + d], a fraction f = S / T of all requests, so for q > 1 - f the
    // q-quantile is about d + S (q - (1 - f)) / f. Where the stalls fall in the run depends on
    // how long the run took to start (on a loaded machine, long enough for the next stall to
    // begin before the end), so the expected quantiles come from the latency each intended time
    // gets, given that offset.
    let (every, stall_for, total) = (1.2, 0.4, 2.0);
    let born = std::time::Instant::now();
    let s = server(
        Duration::from_millis(1),
        Some(Stall {
            every: Duration::from_secs_f64(every),
            length: Duration::from_secs_f64(stall_for),
        }),
        false,
    );
    let mut p = plan(
        &s.url(),
        300,
        Stop::Duration(Duration::from_secs_f64(total)),
    );
    p.threads = 1;
    p.rate = rate(500);
    let (out, summary) = run(&p);
    let offset = out.window_start.duration_since(born).as_secs_f64();
    let d = 0.001;
    let latency_of = |t: f64| {
        let life = t + offset;
        let since = life % every;
        if life >= every && since < stall_for {
            d + stall_for - since
        } else {
            d
        }
    };
    let n = 100_000;
    let mut model: Vec<f64> = (0..n)
        .map(|i| latency_of((f64::from(i) + 0.5) / f64::from(n) * total))
        .collect();
    model.sort_by(f64::total_cmp);
    if offset < 0.1 {
        // Nothing delayed the start: the closed form holds.
        let f = stall_for / total;
        let q = 0.95;
        let closed = d + stall_for * (q - (1.0 - f)) / f;
        assert!((model[(q * f64::from(n)) as usize] - closed).abs() < 0.01);
    }
    let h = out.stats.latency.hdr();
    for q in [0.9, 0.95, 0.99] {
        let expected = model[(q * f64::from(n)) as usize];
        let got = h.value_at_quantile(q) as f64 / 1e9;
        assert!(
            (got - expected).abs() / expected < 0.10,
            "q{q}: {got:.4} s, expected {expected:.4} s (the run started {offset:.3} s after the server)"
        );
    }
    assert!(
        summary
            .insight
            .iter()
            .any(|l| l.contains("the server stalled")),
        "{:?}",
        summary.insight
    );
}

#[test]
fn a_server_stall_in_the_closed_model_is_pointed_out() {
    let s = server(
        Duration::from_millis(1),
        Some(Stall {
            every: Duration::from_millis(600),
            length: Duration::from_millis(300),
        }),
        false,
    );
    let p = plan(&s.url(), 4, Stop::Duration(Duration::from_millis(1100)));
    let (_, summary) = run(&p);
    assert_eq!(summary.config.model, "closed");
    assert!(
        summary.totals.longest_gap_ms.unwrap() >= 250.0,
        "{:?}",
        summary.totals.longest_gap_ms
    );
    let line = summary
        .insight
        .iter()
        .find(|l| l.contains("the server stalled"))
        .expect("a stall sentence");
    assert!(
        line.contains("coordinated omission") && line.contains("-q RATE"),
        "{line}"
    );
}

#[test]
fn rpc_reopens_connections_for_both_protocols() {
    for h2c in [false, true] {
        let s = server(Duration::ZERO, None, h2c);
        let mut p = plan(&s.url(), 2, requests(100));
        p.rpc = Some(10);
        if h2c {
            p.protocol = Protocol::Http2;
            p.h2.streams = 2;
        }
        let (out, summary) = run(&p);
        assert_eq!(out.stats.completed, 100, "h2c={h2c}");
        assert_eq!(out.stats.failed(), 0, "h2c={h2c}: {:?}", out.stats.failures);
        assert_eq!(
            out.stats.conns.reconnects, 8,
            "h2c={h2c}: 10 connections of 10 requests, 2 opened first"
        );
        assert_eq!(summary.config.rpc, Some(10));
    }
}

#[test]
fn warmup_is_sent_but_not_recorded() {
    let s = server(Duration::from_millis(1), None, false);
    let mut p = plan(&s.url(), 4, requests(200));
    p.warmup = Duration::from_millis(200);
    let (out, summary) = run(&p);
    assert_eq!(out.stats.attempts, 200, "-n counts recorded requests");
    assert!(
        out.stats.warmup_requests > 20,
        "{}",
        out.stats.warmup_requests
    );
    assert_eq!(s.requests(), 200 + out.stats.warmup_requests);
    assert_eq!(summary.config.warmup_requests, out.stats.warmup_requests);

    let mut p = plan(&s.url(), 4, requests(100));
    p.rate = rate(500);
    p.warmup = Duration::from_millis(100);
    let before = s.requests();
    let (out, _) = run(&p);
    assert_eq!(out.stats.attempts, 100);
    assert_eq!(out.stats.warmup_requests, 50, "100 ms of 500/s");
    assert_eq!(s.requests() - before, 150);
}

#[test]
fn a_warm_up_that_fell_behind_leaves_the_measured_part_measured() {
    // One connection cannot send a million requests a second: the warm-up falls behind at once.
    let s = server(Duration::ZERO, None, false);
    let mut p = plan(&s.url(), 1, Stop::Duration(Duration::from_millis(300)));
    p.threads = 1;
    p.rate = rate(1_000_000);
    p.warmup = Duration::from_millis(300);
    let (out, summary) = run(&p);
    assert!(
        out.stats.attempts > 0,
        "nothing of the measured part was sent"
    );
    assert!(out.stats.completed > 0);
    let o = summary.run.open_model.unwrap();
    assert_eq!(o.scheduled, o.sent + o.dropped + o.missed);
    // Every answer is a recorded or a warm-up request (one in flight at the end may be answered
    // after spate stopped waiting for it).
    let answered = s.requests();
    assert!(answered >= out.stats.completed + out.stats.warmup_requests);
    assert!(answered <= out.stats.attempts + out.stats.warmup_requests);
}

#[test]
fn busy_poll_runs_and_says_so() {
    let s = server(Duration::ZERO, None, false);
    let mut p = plan(&s.url(), 2, requests(300));
    p.busy_poll = true;
    let (out, summary) = run(&p);
    assert_eq!(out.stats.completed, 300);
    assert!(summary.generator.busy_poll);
    assert!(
        summary.insight.iter().any(|l| l.contains("busy-polled")),
        "{:?}",
        summary.insight
    );
}

#[test]
#[cfg(unix)]
fn a_stall_of_spate_itself_shows_in_latency_and_send_lag() {
    let s = server(Duration::ZERO, None, false);
    let child = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args([
            "-q",
            "200",
            "-z",
            "1500ms",
            "-c",
            "10",
            "--format",
            "json",
            &s.url(),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while s.requests() < 20 {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let pid = child.id() as i32;
    // SAFETY: signals to our own child.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let lag_max = doc["open_model"]["send_lag"]["max_ms"].as_f64().unwrap();
    let latency_max = doc["latency"]["max_ms"].as_f64().unwrap();
    assert!(
        lag_max >= 250.0,
        "send lag max {lag_max} ms after a 300 ms SIGSTOP"
    );
    assert!(latency_max >= 250.0, "latency max {latency_max} ms");
    // The sweeper wakes at most a tick (100 ms) into the stop, and late by the rest of it.
    let stall = doc["generator"]["longest_stall_ms"].as_f64().unwrap();
    assert!(stall >= 150.0, "spate's own stall measured as {stall} ms");
    let insight = doc["insight"].to_string();
    assert!(
        insight.contains("the server is not to blame: spate itself did not run"),
        "{insight}"
    );
    assert!(!insight.contains("the server stalled"), "{insight}");
}

#[test]
fn a_duration_run_lasts_its_duration_even_when_the_schedule_ends_earlier() {
    // -q 3 -z 2s: sends at 0, 1/3, ... 5/3 s; the last answer comes long before 2 s.
    let s = server(Duration::ZERO, None, false);
    let mut p = plan(&s.url(), 2, Stop::Duration(Duration::from_secs(2)));
    p.rate = rate(3);
    let (out, summary) = run(&p);
    assert_eq!(out.stats.completed, 6);
    assert_eq!(out.elapsed, Duration::from_secs(2));
    assert_eq!(summary.totals.elapsed_s, 2.0);
    assert_eq!(summary.totals.requests_per_sec, 3.0);
    let o = summary.run.open_model.unwrap();
    // The report agrees with itself: both print 3.0 (the achieved rate counts send lag).
    assert!((o.rate_achieved - 3.0).abs() < 0.01, "{}", o.rate_achieved);

    // -q 0.5 -z 5s: three sends, five seconds.
    let mut p = plan(&s.url(), 1, Stop::Duration(Duration::from_secs(5)));
    p.rate = Some(Rate { num: 1, den: 2 });
    let (out, summary) = run(&p);
    assert_eq!(out.stats.completed, 3);
    assert_eq!(summary.totals.elapsed_s, 5.0);
    assert_eq!(summary.totals.requests_per_sec, 0.6);
}
