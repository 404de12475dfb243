//! Requests per connection: every connection's completions are counted, add up to the total, and
//! a connection the server never answers shows as starved in the numbers and in the insight.

use std::sync::atomic::{AtomicBool, Ordering};
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
    let per = &out.stats.per_connection;
    assert_eq!(per.len(), 8, "one count per established connection");
    assert_eq!(per.iter().sum::<u64>(), 4_000);
    let f = summary.connections.requests_per_connection.unwrap();
    assert!(f.min > 0 && f.starved == 0, "{f:?}");
    assert!(f.min <= f.p50 && f.p50 <= f.max);
}

#[test]
fn a_connection_the_server_never_answers_is_starved() {
    let first = AtomicBool::new(true);
    let server = Scripted::start(move |peer| {
        if first.swap(false, Ordering::SeqCst) {
            // Read the requests of this one connection and never answer.
            while peer.read_request().is_some() {}
            return;
        }
        while peer.read_request().is_some() {
            if !peer.write(OK) {
                return;
            }
        }
    });
    let mut p = plan(&server.url(), 4, Stop::Duration(Duration::from_millis(700)));
    p.threads = 1;
    p.timeout = Duration::from_secs(30);
    let (out, summary) = run(&p);
    assert_eq!(out.stats.failed(), 0);
    assert_eq!(
        out.stats.interrupted, 1,
        "the unanswered request is in flight at the end"
    );
    let f = summary.connections.requests_per_connection.unwrap();
    assert_eq!((f.starved, f.min, f.max_over_min), (1, 0, None), "{f:?}");
    assert!(f.p50 >= 10, "the others were served: {f:?}");
    let text = render(&summary, Palette::None);
    let line = format!(
        "requests per connection: min 0, median {}, max {}, 1 completed none",
        spate::report::count(f.p50),
        spate::report::count(f.max)
    );
    assert!(text.contains(&line), "{text}");
    assert!(
        summary
            .insight
            .iter()
            .any(|s| s.starts_with("1 of 4 connections completed no request")),
        "{:?}",
        summary.insight
    );
}
