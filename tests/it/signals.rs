//! Interrupts against a running spate child: SIGINT and SIGTERM print the full report, write
//! --save and exit 130; a second SIGINT exits at once; a closed stdout ends quietly.
#![cfg(unix)]

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use spate::serve::{ServeConfig, Server};

use crate::support::Scripted;

fn slow_server() -> Server {
    let config = ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        delay: Duration::from_millis(5),
        ..ServeConfig::default()
    };
    Server::start(&config).unwrap()
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (bounded) until `ready` holds, so that a signal hits a run that is under way.
fn wait_for(ready: impl Fn() -> bool) {
    let t = Instant::now();
    while !ready() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

fn finish(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

fn interrupt_with(sig: i32, connections: u32) {
    // The in-process server needs a descriptor per connection too.
    spate::engine::raise_nofile();
    let server = slow_server();
    let file = std::env::temp_dir().join(format!(
        "spate-int-{}-{sig}-{connections}.json",
        std::process::id()
    ));
    let c = connections.to_string();
    let child = spawn(&[
        "-c",
        &c,
        "-z",
        "60s",
        "--save",
        file.to_str().unwrap(),
        &server.url(),
    ]);
    wait_for(|| server.requests() > 20 + u64::from(connections));
    signal(&child, sig);
    let out = finish(child);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for part in [
        "stopped early",
        "Summary",
        "Latency distribution",
        "Insight",
        "The run was stopped early",
    ] {
        assert!(text.contains(part), "missing {part:?} in\n{text}");
    }
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    std::fs::remove_file(&file).unwrap();
    assert_eq!(doc["generator"]["stopped_by_signal"], true);
    let r = &doc["requests"];
    let completed = r["completed"].as_u64().unwrap();
    assert!(completed > 0);
    assert_eq!(
        r["attempted"].as_u64().unwrap(),
        completed + r["failed"].as_u64().unwrap() + r["interrupted"].as_u64().unwrap()
    );
    assert!(doc["totals"]["elapsed_s"].as_f64().unwrap() < 60.0);
    assert_eq!(
        doc["connections"]["established"].as_u64(),
        Some(u64::from(connections))
    );
}

#[test]
fn sigint_prints_the_report_saves_and_exits_130() {
    interrupt_with(libc::SIGINT, 4);
}

#[test]
fn sigterm_does_the_same() {
    interrupt_with(libc::SIGTERM, 4);
}

#[test]
fn sigint_under_load_at_c_1000() {
    interrupt_with(libc::SIGINT, 1000);
}

#[test]
fn sigterm_under_load_at_c_1000() {
    interrupt_with(libc::SIGTERM, 1000);
}

#[test]
fn a_second_sigint_exits_at_once() {
    // A server that never answers: the first SIGINT starts a drain that cannot finish early.
    let server = Scripted::start(|p| while p.read_request().is_some() {});
    let child = spawn(&["-c", "2", "-z", "60s", "-t", "60s", &server.url()]);
    wait_for(|| server.requests() >= 2);
    signal(&child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(100));
    signal(&child, libc::SIGINT);
    let out = finish(child);
    assert_eq!(out.status.code(), Some(130));
    assert!(out.stdout.is_empty(), "no report after the second Ctrl-C");
}

#[test]
fn a_closed_stdout_ends_quietly() {
    closed_stdout(4);
}

#[test]
fn a_closed_stdout_under_load_at_c_1000() {
    closed_stdout(1000);
}

fn closed_stdout(connections: u32) {
    spate::engine::raise_nofile();
    let server = slow_server();
    let (n, c) = ((connections * 10).to_string(), connections.to_string());
    let mut child = spawn(&["-n", &n, "-c", &c, &server.url()]);
    drop(child.stdout.take()); // the reader goes away before the report is written
    let out = finish(child);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
