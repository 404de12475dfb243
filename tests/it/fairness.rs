//! Requests per client and per TCP connection: every client's completions are counted and add up
//! to the total, and clients the server never answers show as unanswered in the summary and the
//! insight, without the insight blaming spate for them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use spate::plan::Stop;
use spate::report::{Palette, render};
use spate::serve::ServeConfig;

use crate::support::{Scripted, builtin, plan, requests, run};

const OK: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";

#[test]
fn every_connection_is_counted_and_the_counts_add_up() {
    let server = builtin(ServeConfig::default());
    let mut p = plan(&server.url(), 8, requests(4_000));
    p.threads = 3;
    let (out, summary) = run(&p);
    let per = &out.stats.per_client;
    assert_eq!(per.len(), 8, "one count per established connection");
    assert_eq!(per.iter().sum::<u64>(), 4_000);
    let f = summary.connections.requests_per_client.unwrap();
    assert!(f.min > 0 && f.starved == 0, "{f:?}");
    assert!(f.min <= f.p50 && f.p50 <= f.max);
    // Keep-alive throughout: each client kept its one TCP connection.
    let t = summary.connections.requests_per_connection.unwrap();
    assert_eq!(t.connections, 8, "{t:?}");
    assert_eq!((t.min, t.max), (f.min, f.max), "{t:?} {f:?}");
    // Three threads: their rates add up to the run's.
    assert_eq!(out.stats.per_thread.iter().sum::<u64>(), 4_000);
    let th = summary.totals.per_thread.unwrap();
    let total = summary.totals.requests_per_sec;
    assert!(
        (th.mean * 3.0 - total).abs() < 1e-6 * total,
        "{th:?} vs {total}"
    );
    assert!(
        th.min <= th.mean && th.mean <= th.max && th.stdev >= 0.0,
        "{th:?}"
    );
}

#[test]
fn connections_the_server_never_answers_are_unanswered_not_spates_gaps() {
    // The first three connections are read and never answered, as a server whose listen backlog
    // holds connections it never accepts; the fourth is served.
    let seen = AtomicUsize::new(0);
    let server = Scripted::start(move |peer| {
        if seen.fetch_add(1, Ordering::SeqCst) < 3 {
            while peer.read_request().is_some() {}
            return;
        }
        while peer.read_request().is_some() {
            if !peer.write(OK) {
                return;
            }
        }
    });
    let mut p = plan(
        &server.url(),
        4,
        Stop::Duration(Duration::from_millis(1200)),
    );
    p.threads = 1;
    p.timeout = Duration::from_secs(30);
    let (out, summary) = run(&p);
    assert_eq!(out.stats.failed(), 0);
    assert_eq!(
        out.stats.interrupted, 3,
        "the unanswered requests are in flight at the end"
    );
    let f = summary.connections.requests_per_client.unwrap();
    assert_eq!(
        (f.starved, f.min, f.p50, f.max_over_min),
        (3, 0, 0, None),
        "{f:?}"
    );
    assert!(f.p50_answered >= 10, "the fourth was served: {f:?}");
    assert!(
        out.stats.completed >= 1000,
        "enough for Little's law to apply"
    );
    let text = render(&summary, Palette::None);
    let line = format!(
        "requests per client: min 0, median 0, max {}, 3 completed none",
        spate::report::count(f.max)
    );
    assert!(text.contains(&line), "{text}");
    assert!(
        text.contains("  Unanswered      3 of 4 connections got no response in the whole run"),
        "{text}"
    );
    let said = summary.insight.join("\n");
    assert!(
        said.contains("3 of 4 connections got no response in the whole run while the others completed a median of"),
        "{said}"
    );
    assert!(
        !said.contains("left gaps"),
        "the server's doing, not spate's: {said}"
    );
    assert!(
        said.contains("Nothing indicates that spate limited this result."),
        "{said}"
    );
}
