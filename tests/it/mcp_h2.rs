//! `spate mcp` over HTTP/2 and HTTP/3 against the official MCP SDK's Streamable HTTP app
//! served by PyPI's hypercorn, which no one here wrote: h2c with prior knowledge, h2 over TLS
//! and HTTP/3 over QUIC. Calls of the stateless revision are counted exactly as the server
//! executed them; a server of a revision with sessions is refused with one line, since spate
//! opens sessions on HTTP/1.1 connections. The SDK and hypercorn live in target/test-venv.

use serde_json::Value;

use crate::mcp::{Server, server_with};
use crate::pki::Pki;
use crate::support::spate;

/// `spate mcp --no-progress --format json ARGS`, which must succeed: its result.
fn run(args: &[&str]) -> Value {
    let mut all = vec!["mcp", "--no-progress", "--format", "json"];
    all.extend_from_slice(args);
    let out = spate(&all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// 120 calls of `add` (and 40 of `fails`, a tool's error) with -p streams a connection: each
/// executed once, each counted as it ended.
fn calls_count_exactly(s: &Server, url: &str, more: &[&str], protocol: &str) {
    let mut args = vec![
        "-n",
        "160",
        "-c",
        "2",
        "-p",
        "4",
        "--tool",
        "add:3",
        "--args",
        r#"add={"a":2,"b":3}"#,
        "--tool",
        "fails",
        "--connect-timeout",
        "10s",
    ];
    args.extend_from_slice(more);
    args.push(url);
    // A tool's error is a failure, and the run, with successes, exits 0.
    let doc = run(&args);
    assert_eq!(doc["config"]["protocol"], protocol, "{}", doc["config"]);
    assert_eq!(
        doc["mcp"]["protocol_version"], "2026-07-28",
        "{}",
        doc["mcp"]
    );
    assert_eq!(doc["mcp"]["sessions"], false);
    let r = &doc["requests"];
    assert_eq!(
        (r["completed"].as_u64(), r["failed"].as_u64()),
        (Some(120), Some(40)),
        "{r}"
    );
    let tools = doc["mcp"]["tools"].as_array().unwrap();
    let row = |t: &str| tools.iter().find(|r| r["tool"] == t).unwrap();
    assert_eq!(
        (&row("add")["calls"], &row("add")["succeeded"]),
        (&120.into(), &120.into()),
        "{}",
        row("add")
    );
    assert_eq!(row("fails")["tool_errors"], 40, "{}", row("fails"));
    let executed = s.executed();
    assert_eq!(executed.get("add"), Some(&120), "{executed:?}");
    assert_eq!(executed.get("fails"), Some(&40), "{executed:?}");
    assert_eq!(executed.get("rpc tools/call"), Some(&160), "{executed:?}");
}

#[test]
fn calls_over_h2c_are_counted_as_hypercorn_executed_them() {
    let Some(s) = server_with("h2c", true, &["hypercorn"]) else {
        return;
    };
    calls_count_exactly(&s, &s.url, &["--http2"], "HTTP/2 (h2c)");
    // -v sends the first call as the run does: a stream, its fields in lower case.
    let out = spate(&[
        "mcp",
        "--no-progress",
        "--http2",
        "-v",
        "-n",
        "1",
        "--tool",
        "add",
        "--args",
        r#"add={"a":1,"b":1}"#,
        &s.url,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    for line in [
        "> :method: POST",
        "> mcp-method: tools/call",
        "< :status: 200",
    ] {
        assert!(err.lines().any(|l| l == line), "{line}: {err}");
    }
}

#[test]
fn calls_over_h2_with_tls_and_over_http3_are_counted_as_hypercorn_executed_them() {
    let pki = Pki::new("mcp-h2");
    let (cert, key) = (pki.dir.join("server.pem"), pki.dir.join("server.key"));
    std::fs::write(&cert, &pki.server_cert).unwrap();
    std::fs::write(&key, &pki.server_key).unwrap();
    let served = format!("hypercorn={},{}", cert.display(), key.display());
    for (flag, protocol) in [("--http2", "HTTP/2"), ("--http3", "HTTP/3")] {
        let Some(s) = server_with(&format!("tls{flag}"), true, &[served.as_str()]) else {
            return;
        };
        let url = s.url.replace("http://127.0.0.1", "https://localhost");
        let ca = pki.path("ca.pem");
        calls_count_exactly(&s, &url, &[flag, "--cacert", &ca], protocol);
    }
}

#[test]
fn a_revision_with_sessions_over_http2_is_one_line_and_exit_2() {
    let Some(s) = server_with("h2-sessions", true, &["hypercorn", "refuse-stateless"]) else {
        return;
    };
    let out = spate(&["mcp", "--http2", "-n", "4", "--tool", "add", &s.url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("whose sessions spate opens on HTTP/1.1 connections"),
        "{err}"
    );
    assert_eq!(s.executed().get("add"), None, "nothing was called");
    // Without --http2 the same server is called over HTTP/1.1, in sessions.
    let doc = run(&[
        "-n",
        "4",
        "--tool",
        "add",
        "--args",
        r#"add={"a":1,"b":1}"#,
        &s.url,
    ]);
    assert_eq!(doc["requests"]["completed"], 4);
}
