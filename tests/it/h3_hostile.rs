//! --http3 against servers that misbehave at the QUIC and HTTP/3 level, scripted on PyPI's
//! aioquic (tests/it/servers/h3_server.py): one that never answers, one that closes the
//! connection with an error, one that resets every stream, one that allows no stream, and the
//! refusals that promise a request was not processed (H3_REQUEST_REJECTED, GOAWAY), which go
//! again. No panic, no hang past the timeout, each failure in its class, and exact counts where
//! the server answers.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::pki::Pki;
use crate::support::{Child, failed_json, free_addr, spate_json, test_python};

/// The scripted server in `mode`, its URL, and the file it counts answered requests in.
struct Scripted {
    _child: Child,
    pki: Pki,
    url: String,
    log: std::path::PathBuf,
}

impl Scripted {
    fn start(mode: &str) -> Option<Scripted> {
        let python = test_python("aioquic")?;
        let pki = Pki::new(&format!("h3-{mode}"));
        let (cert, key) = (pki.dir.join("cert.pem"), pki.dir.join("key.pem"));
        std::fs::write(&cert, &pki.server_cert).unwrap();
        std::fs::write(&key, &pki.server_key).unwrap();
        let log = pki.dir.join("answered.log");
        std::fs::write(&log, "").unwrap();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/servers/h3_server.py");
        let port = free_addr().port().to_string();
        let mut child = Command::new(python)
            .args([script, mode, "127.0.0.1", &port])
            .args([&cert, &key, &log])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready", "the {mode} server did not start");
        Some(Scripted {
            _child: Child(child),
            url: format!("https://localhost:{port}/"),
            log,
            pki,
        })
    }

    fn answered(&self) -> usize {
        std::fs::read_to_string(&self.log).unwrap().lines().count()
    }

    /// `spate --http3 ARGS URL` with the server's CA; `ok`: whether it must exit 0 (else 1).
    fn run(&self, args: &[&str], ok: bool) -> Value {
        let ca = self.pki.path("ca.pem");
        let mut all = vec!["--http3", "--cacert", &ca];
        all.extend_from_slice(args);
        all.push(&self.url);
        let v = match ok {
            true => spate_json(&all),
            false => failed_json(&all),
        };
        crate::schema::validate(&v);
        v
    }
}

/// The count of failure class `class`, and its example.
fn errors(v: &Value, class: &str) -> (u64, String) {
    let e = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["class"] == class);
    match e {
        Some(e) => (
            e["count"].as_u64().unwrap(),
            e["example"].as_str().unwrap_or_default().to_owned(),
        ),
        None => (0, String::new()),
    }
}

#[test]
fn a_server_that_never_answers_times_out_every_request() {
    let Some(s) = Scripted::start("silent") else {
        return;
    };
    let v = s.run(
        &["-n", "8", "-c", "2", "-p", "2", "--timeout", "300ms"],
        false,
    );
    assert_eq!(v["requests"]["failed"], 8);
    assert_eq!(errors(&v, "timeout").0, 8, "{}", v["errors"]);
}

#[test]
fn a_connection_closed_with_an_error_fails_in_the_h3_class_with_its_code() {
    let Some(s) = Scripted::start("close") else {
        return;
    };
    let v = s.run(&["-n", "10", "-c", "1", "--timeout", "2s"], false);
    assert_eq!(v["requests"]["failed"], 10);
    let (n, example) = errors(&v, "h3");
    assert_eq!(n, 10, "{}", v["errors"]);
    assert!(example.contains("H3_GENERAL_PROTOCOL_ERROR"), "{example}");
    assert!(example.contains("closing on purpose"), "{example}");
    assert!(v["connections"]["reconnects"].as_u64().unwrap() >= 1);
}

#[test]
fn a_close_reason_with_terminal_escapes_is_printed_escaped() {
    let Some(s) = Scripted::start("close_poisoned") else {
        return;
    };
    let ca = s.pki.path("ca.pem");
    let out = crate::support::spate(&[
        "--http3",
        "--cacert",
        &ca,
        "--no-progress",
        "-n",
        "3",
        "-c",
        "1",
        &s.url,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("closing\\x1b]0;pwned\\x07\\x1b[2J\\nFORGED"),
        "{text}"
    );
    crate::outside_text::assert_shown_safely("the report", &text, false);
}

#[test]
fn streams_reset_by_the_server_fail_in_the_reset_class() {
    let Some(s) = Scripted::start("reset") else {
        return;
    };
    let v = s.run(
        &["-n", "12", "-c", "2", "-p", "3", "--timeout", "2s"],
        false,
    );
    let (n, example) = errors(&v, "reset");
    assert_eq!(n, 12, "{}", v["errors"]);
    assert!(example.contains("H3_INTERNAL_ERROR"), "{example}");
    assert_eq!(
        v["connections"]["reconnects"], 0,
        "a reset ends a stream only"
    );
}

#[test]
fn a_server_that_allows_no_stream_fails_each_request_at_its_timeout() {
    let Some(s) = Scripted::start("nostreams") else {
        return;
    };
    let v = s.run(
        &["-n", "6", "-c", "1", "-p", "2", "--timeout", "300ms"],
        false,
    );
    let (n, example) = errors(&v, "timeout");
    assert_eq!(n, 6, "{}", v["errors"]);
    assert!(example.contains("could not be sent"), "{example}");
}

#[test]
fn rejected_requests_go_again_and_the_counts_stay_exact() {
    let Some(s) = Scripted::start("reject") else {
        return;
    };
    let v = s.run(&["-n", "40", "-c", "1", "-p", "2"], true);
    assert_eq!(v["requests"]["completed"], 40);
    assert_eq!(v["requests"]["retried"], 5, "the server rejected 5");
    assert_eq!(s.answered(), 40);
}

#[test]
fn a_goaway_moves_the_next_requests_to_a_new_connection() {
    let Some(s) = Scripted::start("goaway") else {
        return;
    };
    let v = s.run(&["-n", "60", "-c", "2", "-p", "2"], true);
    assert_eq!(v["requests"]["completed"], 60);
    assert_eq!(v["requests"]["failed"], 0);
    let c = &v["connections"];
    assert!(c["goaways"].as_u64().unwrap() >= 2, "{c}");
    assert!(c["reconnects"].as_u64().unwrap() >= 2, "{c}");
    assert_eq!(s.answered(), 60);
}

#[test]
fn every_connection_is_closed_with_h3_no_error_not_left_to_time_out() {
    let Some(s) = Scripted::start("answer") else {
        return;
    };
    let v = s.run(&["-n", "200", "-c", "8", "-p", "2", "--rpc", "50"], true);
    assert_eq!(v["requests"]["completed"], 200);
    assert_eq!(s.answered(), 200);
    // 8 connections of 25 requests: none reaches --rpc; then 4 of 50 each with --rpc 25.
    let v = s.run(&["-n", "100", "-c", "2", "--rpc", "25"], true);
    assert_eq!(v["connections"]["reconnects"], 2);
    // The server reads the last closes a moment after spate exits: waited for, within a bound.
    let file = s.log.with_extension("log.closed");
    let t = std::time::Instant::now();
    let closed = loop {
        let closed = std::fs::read_to_string(&file).unwrap_or_default();
        if closed.lines().count() >= 8 + 4 || t.elapsed() > std::time::Duration::from_secs(5) {
            break closed;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let codes: Vec<&str> = closed.lines().collect();
    assert_eq!(codes.len(), 8 + 4, "{closed}");
    assert!(codes.iter().all(|c| *c == "0x100"), "{closed}");
}
