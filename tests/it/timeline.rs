//! The timeline: a server process stopped from outside (SIGSTOP, then SIGCONT) in the middle of
//! a run shows as seconds without a completed response, followed by one whose slowest response
//! waited the whole stop; the seconds add up to the run's totals; `--csv-timeline` writes the
//! same seconds as CSV.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use spate::report::timeline_header;

#[test]
fn a_stopped_server_shows_in_the_seconds_it_was_stopped() {
    // A server process of its own, so that stopping it stops nothing of the run.
    let mut server = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(["serve", "--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url
        .trim()
        .rsplit(' ')
        .next()
        .expect("the URL the server listens on")
        .to_string();
    let csv = std::env::temp_dir().join(format!("spate-timeline-{}.csv", std::process::id()));
    let page = csv.with_extension("html");
    let run = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(["--no-progress", "--format", "json", "-c", "4", "-z", "6s"])
        .args(["--csv-timeline", csv.to_str().unwrap()])
        .args(["--html", page.to_str().unwrap(), &url])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Stopped from about 1.5 s to 4 s: the second from 2 s to 3 s lies inside the stop even if
    // the run started a few hundred ms after it was spawned.
    let pid = server.id() as libc::pid_t;
    std::thread::sleep(Duration::from_millis(1_500));
    // SAFETY: a signal to a child process of this test.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(Duration::from_millis(2_500));
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let out = run.wait_with_output().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let seconds = doc["timeline"].as_array().unwrap();

    assert_eq!(seconds.len(), 6, "{seconds:?}");
    for (i, s) in seconds.iter().enumerate() {
        assert_eq!(s["t_s"].as_f64(), Some(i as f64));
        assert_eq!(s["span_s"].as_f64(), Some(1.0));
    }
    let completed: Vec<u64> = seconds
        .iter()
        .map(|s| s["completed"].as_u64().unwrap())
        .collect();
    let total: u64 = completed.iter().sum();
    let in_window = doc["requests"]["completed"].as_u64().unwrap()
        - doc["totals"]["completed_in_drain"].as_u64().unwrap();
    assert_eq!(total, in_window);
    assert_eq!(completed[2], 0, "{completed:?}");
    assert!(seconds[2]["latency_ms"].is_null());
    assert!(completed[0] > 0 && completed[5] > 0, "{completed:?}");
    // The requests in flight when the server stopped waited until it went on.
    let slowest = seconds
        .iter()
        .filter_map(|s| s["latency_ms"]["max"].as_f64())
        .fold(0.0, f64::max);
    assert!(slowest >= 2_000.0, "{slowest} ms");
    for s in seconds.iter().filter(|s| !s["latency_ms"].is_null()) {
        let q = &s["latency_ms"];
        assert!(q["p50"].as_f64() <= q["p99"].as_f64() && q["p99"].as_f64() <= q["max"].as_f64());
    }

    // The CSV: the same seconds, a column per failure class after the fixed ones.
    let text = std::fs::read_to_string(&csv).unwrap();
    let _ = std::fs::remove_file(&csv);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.trim_end_matches('\r').split(',').collect())
        .collect();
    let header = timeline_header();
    assert_eq!(rows[0], header);
    assert_eq!(rows.len(), 7);
    for (row, n) in rows[1..].iter().zip(&completed) {
        assert_eq!(row.len(), header.len());
        assert_eq!(row[2], n.to_string());
    }
    assert_eq!(rows[3][5], "", "no latency in a second without a response");

    // The page shows the dip: the responses' line touches the axis, the latency lines break
    // in the second without a response, and the slowest second's max is drawn above 2 s.
    let browsed = crate::html::check_page(&page, &doc);
    let _ = std::fs::remove_file(&page);
    let Some(b) = browsed else { return };
    let axis_y: f64 = b
        .dom
        .split("<line class=\"axis\" x1=\"72\" y1=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|v| v.parse().ok())
        .expect("the x axis of the throughput chart");
    let ok = crate::html::series(&b.dom, "ok");
    assert_eq!(ok.len(), 6, "{ok:?}");
    assert_eq!(ok[2].1, axis_y, "the stalled second is at zero: {ok:?}");
    assert!(
        ok[0].1 < axis_y - 50.0,
        "and the first is well above it: {ok:?}"
    );
    let p50 = b.dom.split("data-series=\"p50\" d=\"").nth(1).unwrap();
    let p50 = p50.split('"').next().unwrap();
    assert_eq!(p50.matches('M').count(), 2, "the line breaks once: {p50}");
    assert!(
        b.dom.contains(">2 s<") || b.dom.contains(">5 s<"),
        "the axis reaches the stall"
    );
}

/// A server that answers 3 requests in 10 with a 500: each second of the timeline counts its
/// error responses, the seconds add up to the run's, and the CSV and the page carry them.
#[test]
fn error_responses_are_counted_second_by_second() {
    let served = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let server = crate::support::Scripted::start(move |p| {
        while p.read_request().is_some() {
            let i = served.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let status = if i % 10 < 3 { "500 Oops" } else { "200 OK" };
            let reply = format!("HTTP/1.1 {status}\r\nContent-Length: 2\r\n\r\nok");
            if !p.write(reply.as_bytes()) {
                return;
            }
        }
    });
    let dir = crate::support::ScratchDir::new("timeline-errors");
    let (csv, page) = (dir.file("t.csv"), dir.file("t.html"));
    let out = crate::support::spate(&[
        "--no-progress",
        "--format",
        "json",
        "-c",
        "3",
        "-n",
        "300",
        "--csv-timeline",
        &csv,
        "--html",
        &page,
        &server.url(),
    ]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::schema::validate(&doc);
    let seconds = doc["timeline"].as_array().unwrap();
    let sum = |k: &str| -> u64 { seconds.iter().map(|s| s[k].as_u64().unwrap()).sum() };
    assert_eq!(sum("completed"), 300);
    assert_eq!(sum("error_status"), 90, "{seconds:#?}");
    assert_eq!(
        sum("failed"),
        0,
        "an error status is a response, not a failure"
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = text.lines().map(|l| l.trim_end_matches('\r'));
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let at = header.iter().position(|c| *c == "error_status").unwrap();
    let column: u64 = rows
        .map(|r| r.split(',').nth(at).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(column, 90);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(r#"data-series="errors""#),
        "error responses are drawn"
    );
}
