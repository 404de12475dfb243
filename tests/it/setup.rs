//! The connection phase before the clock: bounded by --setup-timeout against a server that drops
//! connection attempts, reported on a non-terminal stderr while it lasts, and accounted for in
//! the result (what became of every connection that did not open).

use std::net::SocketAddr;
use std::process::Command;

use serde_json::Value;

/// A listener that never accepts, with the smallest backlog: once its queue is full, the kernel
/// drops further SYNs and those connects hang, as against an overloaded server.
fn black_hole() -> (socket2::Socket, SocketAddr) {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    s.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    s.listen(1).unwrap();
    let addr = s.local_addr().unwrap().as_socket().unwrap();
    (s, addr)
}

#[test]
fn the_connection_phase_ends_at_setup_timeout_and_says_what_became_of_the_rest() {
    let (_listener, addr) = black_hole();
    let out = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args([
            "-c",
            "40",
            "--threads",
            "2",
            "-z",
            "300ms",
            "-t",
            "200ms",
            // Without the phase's own bound, the hanging connects would wait this long.
            "--connect-timeout",
            "60s",
            "--setup-timeout",
            "2500ms",
            "--format",
            "json",
        ])
        .arg(format!("http://{addr}/"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("a JSON result");
    let c = &doc["connections"];
    let n = &c["not_opened"];
    let established = c["established"].as_u64().unwrap();
    assert!(established > 0, "the queued connects opened: {c:#}");
    assert!(established < 40, "{c:#}");
    assert!(n["cut_off"].as_u64().unwrap() > 0, "{c:#}");
    let sum: u64 = ["timed_out", "failed", "cut_off", "not_tried"]
        .iter()
        .map(|k| n[k].as_u64().unwrap())
        .sum();
    assert_eq!(established + sum, 40, "every connection is accounted for");
    assert_eq!(doc["config"]["setup_timeout_s"], 2.5);
    assert!(
        doc["insight"]
            .to_string()
            .contains("connection phase ended")
    );
    // stderr is not a terminal: a line every two seconds while connecting.
    assert!(
        stderr.contains("spate: connecting: "),
        "no progress while connecting:\n{stderr}"
    );

    // The listener's queue now holds the connections of that run, closed but never accepted:
    // no connect completes any more, and the phase ends with none open.
    let out = quick(addr);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "none of 20 connections opened: 20 still connecting when --setup-timeout 300ms ended"
        ),
        "{stderr}"
    );
}

/// A short run against `addr` whose connects hang: 20 connections, 300 ms to open them.
fn quick(addr: SocketAddr) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(["-c", "20", "-z", "200ms", "-t", "100ms"])
        .args(["--connect-timeout", "60s", "--setup-timeout", "300ms"])
        .args(["--no-progress", &format!("http://{addr}/")])
        .output()
        .unwrap()
}

#[test]
fn the_text_report_says_what_became_of_the_connections_that_did_not_open() {
    let (_listener, addr) = black_hole();
    let out = quick(addr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("still connecting when the connection phase ended"),
        "{text}"
    );
    assert!(text.contains("(--setup-timeout 300"), "{text}");
}
