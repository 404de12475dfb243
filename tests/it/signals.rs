//! Interrupts against a running spate child: SIGINT, SIGTERM and SIGHUP print the full report,
//! write --save and exit 130; signals that arrive together (one Ctrl-C under GNU timeout) are one
//! request; a deliberate second SIGINT exits at once; SIGHUP ignored by nohup stays ignored; a
//! closed stdout ends quietly. A sweep and a comparison report their whole levels and rounds.
#![cfg(unix)]

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use spate::serve::{ServeConfig, Server};

use crate::support::{Scripted, have};

fn slow_server() -> Server {
    let config = ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        delay: Duration::from_millis(5),
        ..ServeConfig::default()
    };
    Server::start(&config).unwrap()
}

fn spawn(args: &[&str]) -> Child {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_spate"));
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    // Under `nohup` the tests inherit an ignored SIGHUP, which spate rightly keeps ignoring; the
    // child gets the default, as from a terminal.
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            Ok(())
        });
    }
    cmd.spawn().unwrap()
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

/// Exit 130 and a report holding every one of `parts`.
fn stopped_with_a_report(out: &Output, parts: &[&str]) {
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for part in parts {
        assert!(text.contains(part), "missing {part:?} in\n{text}");
    }
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
    stopped_with_a_report(
        &out,
        &[
            "stopped early",
            "Summary",
            "Latency distribution",
            "Insight",
            "The run was stopped early",
        ],
    );
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
fn sighup_does_the_same() {
    interrupt_with(libc::SIGHUP, 4);
}

#[test]
fn a_second_sigint_exits_at_once() {
    // A server that never answers: the first SIGINT starts a drain that cannot finish early.
    let server = Scripted::start(|p| while p.read_request().is_some() {});
    let child = spawn(&["-c", "2", "-z", "60s", "-t", "60s", &server.url()]);
    wait_for(|| server.requests() >= 2);
    signal(&child, libc::SIGINT);
    // Later than signals that belong to the same request: a person pressing again.
    std::thread::sleep(spate::ui::SAME_REQUEST + Duration::from_millis(300));
    signal(&child, libc::SIGINT);
    let out = finish(child);
    assert_eq!(out.status.code(), Some(130));
    assert!(out.stdout.is_empty(), "no report after the second Ctrl-C");
}

/// The report of a run stopped by `signals`, sent back to back.
fn stopped_together(signals: &[i32]) -> Output {
    spate::engine::raise_nofile();
    let server = slow_server();
    let child = spawn(&["-c", "4", "-z", "60s", &server.url()]);
    wait_for(|| server.requests() > 24);
    for &s in signals {
        signal(&child, s);
    }
    finish(child)
}

#[test]
fn two_signals_together_are_one_request_to_stop() {
    for pair in [[libc::SIGINT, libc::SIGINT], [libc::SIGTERM, libc::SIGINT]] {
        stopped_with_a_report(&stopped_together(&pair), &["Summary"]);
    }
}

#[test]
fn one_ctrl_c_under_gnu_timeout_still_prints_the_report() {
    // As a terminal does: SIGINT to the whole foreground group, which holds timeout and spate;
    // timeout then sends its own copies to spate.
    if !have("timeout") {
        return;
    }
    spate::engine::raise_nofile();
    let server = slow_server();
    let child = Command::new("timeout")
        .args(["40", env!("CARGO_BIN_EXE_spate"), "-c", "4", "-z", "20s"])
        .arg(server.url())
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(|| server.requests() > 24);
    // SAFETY: kill(2) on the process group our own child leads.
    assert_eq!(unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) }, 0);
    stopped_with_a_report(&finish(child), &["Summary", "stopped early"]);
}

#[test]
fn sighup_ignored_by_nohup_stays_ignored() {
    spate::engine::raise_nofile();
    let server = slow_server();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_spate"));
    cmd.args(["-c", "2", "-n", "200", &server.url()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: signal(2) is async-signal-safe; it runs in the child before exec, as nohup does.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    wait_for(|| server.requests() > 10);
    signal(&child, libc::SIGHUP);
    let out = finish(child);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("stopped early"), "{text}");
    assert!(text.contains("200"), "{text}");
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

/// A scratch directory for the runs' JSON.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("spate-signals-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn sigint_ends_a_sweep_with_the_whole_levels_so_far() {
    let server = slow_server();
    let dir = scratch("sweep");
    let child = spawn(&[
        "sweep",
        "--no-progress",
        "--conc",
        "1,2,3",
        "-z",
        "800ms",
        "--save-dir",
        dir.to_str().unwrap(),
        &format!("http://{}/", server.addr()),
    ]);
    wait_for(|| dir.join("c-1.json").exists());
    signal(&child, libc::SIGINT);
    let out = finish(child);
    stopped_with_a_report(&out, &["Knee: 1,"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(", 1 level, each -z 800ms\n"), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    assert_eq!(rows.len(), 1, "the level under way is left out:\n{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("stopped by a signal; 1 of 3 levels swept"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigint_ends_a_comparison_with_the_whole_rounds_so_far_and_its_page() {
    let server = slow_server();
    let dir = scratch("compare");
    let page = dir.join("compare.html");
    let url = format!("http://{}/", server.addr());
    let child = spawn(&[
        "compare",
        "--no-progress",
        "--rounds",
        "5",
        "-z",
        "400ms",
        "--format",
        "json",
        "--save-dir",
        dir.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
        &format!("a={url}"),
        &format!("b={url}"),
    ]);
    wait_for(|| dir.join("b-2.json").exists());
    signal(&child, libc::SIGINT);
    let out = finish(child);
    stopped_with_a_report(&out, &[]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rounds = doc["targets"][0]["rounds"].as_u64().unwrap();
    assert!((2..5).contains(&rounds), "whole rounds only: {rounds}");
    assert_eq!(doc["targets"][1]["rounds"], rounds);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(&format!("{rounds} rounds each")),
        "the page of the same rounds"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
