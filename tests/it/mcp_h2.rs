//! `spate mcp` over HTTP/2 and HTTP/3 against the official MCP SDK's Streamable HTTP app
//! served by PyPI's hypercorn, which no one here wrote: h2c with prior knowledge, h2 over TLS
//! and HTTP/3 over QUIC. Calls of the stateless revision, and calls in sessions (one a
//! connection, opened as streams of it; the run's shared one; one per call), are counted
//! exactly as the server executed them, over the legacy HTTP+SSE transport too (its session's
//! stream a stream of the connection); a spoilt handshake fails each connection with its
//! reason. The SDK and
//! hypercorn live in target/test-venv.

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

/// `spate mcp --no-progress -v -n 1` of one `add` call with `flags` before the URL: its exit
/// code, and what -v showed (stderr).
fn verbose(flags: &[&str], url: &str) -> (Option<i32>, String) {
    let mut all = vec!["mcp", "--no-progress", "-v", "-n", "1"];
    all.extend_from_slice(flags);
    all.extend(["--tool", "add", "--args", r#"add={"a":1,"b":1}"#, url]);
    let out = spate(&all);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// 120 calls of `add` (and 40 of `fails`, a tool's error) with -p streams a connection: each
/// executed once, each counted as it ended. `more` may ask for a revision with sessions.
fn calls_count_exactly(s: &Server, url: &str, more: &[&str], protocol: &str) -> Value {
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
    let legacy = url.ends_with("/sse");
    let sessions = legacy || more.contains(&"2025-11-25");
    let version = match (legacy, sessions) {
        (true, _) => "2024-11-05",
        (false, true) => "2025-11-25",
        (false, false) => "2026-07-28",
    };
    assert_eq!(doc["mcp"]["protocol_version"], version, "{}", doc["mcp"]);
    assert_eq!(doc["mcp"]["sessions"], sessions);
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
    doc
}

/// The server option that serves the app over TLS (h2 by ALPN, and HTTP/3) with `pki`'s
/// server certificate.
fn served_over_tls(pki: &Pki) -> String {
    let (cert, key) = (pki.dir.join("server.pem"), pki.dir.join("server.key"));
    std::fs::write(&cert, &pki.server_cert).unwrap();
    std::fs::write(&key, &pki.server_key).unwrap();
    format!("hypercorn={},{}", cert.display(), key.display())
}

#[test]
fn calls_over_h2c_are_counted_as_hypercorn_executed_them() {
    let Some(s) = server_with("h2c", true, &["hypercorn"]) else {
        return;
    };
    calls_count_exactly(&s, &s.url, &["--http2"], "HTTP/2 (h2c)");
    // -v sends the first call as the run does: a stream, its fields in lower case.
    let (_, err) = verbose(&["--http2"], &s.url);
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
    let served = served_over_tls(&pki);
    for (flag, protocol) in [("--http2", "HTTP/2"), ("--http3", "HTTP/3")] {
        let Some(s) = server_with(&format!("tls{flag}"), true, &[served.as_str()]) else {
            return;
        };
        let url = s.url.replace("http://127.0.0.1", "https://localhost");
        let ca = pki.path("ca.pem");
        calls_count_exactly(&s, &url, &[flag, "--cacert", &ca], protocol);
    }
}

/// A revision with sessions over h2c: one session a connection, its handshake two streams
/// of it, the connection's four stream slots calling in it with ids of their own.
#[test]
fn calls_in_sessions_over_h2c_open_one_session_a_connection() {
    let Some(s) = server_with("h2c-sessions", true, &["hypercorn"]) else {
        return;
    };
    let doc = calls_count_exactly(
        &s,
        &s.url,
        &["--http2", "--protocol-version", "2025-11-25"],
        "HTTP/2 (h2c)",
    );
    assert_eq!(doc["mcp"]["handshakes"], 2, "{}", doc["mcp"]);
    let executed = s.executed();
    // The probe's session, then one per connection.
    assert_eq!(executed.get("rpc initialize"), Some(&3), "{executed:?}");
    assert_eq!(
        executed.get("rpc notifications/initialized"),
        Some(&3),
        "{executed:?}"
    );
    // -v makes the handshake and the call as the run does: streams.
    let (code, err) = verbose(&["--http2", "--protocol-version", "2025-11-25"], &s.url);
    assert_eq!(code, Some(0), "{err}");
    for line in ["> :method: POST", "< :status: 200", "< :status: 202"] {
        assert!(err.lines().any(|l| l == line), "{line}: {err}");
    }
    for part in [
        "< mcp-session-id: ",
        "> mcp-session-id: ",
        "\"method\":\"tools/call\"",
    ] {
        assert!(err.lines().any(|l| l.contains(part)), "{part}: {err}");
    }
    assert!(!err.contains("HTTP/1.1"), "{err}");
}

/// The run's one shared session over h2c, and sessions a connection over h2 with TLS and over
/// HTTP/3.
#[test]
fn calls_in_a_shared_session_and_over_tls_and_http3_count_exactly() {
    let Some(s) = server_with("h2c-shared", true, &["hypercorn"]) else {
        return;
    };
    let more = [
        "--http2",
        "--protocol-version",
        "2025-11-25",
        "--session",
        "shared",
    ];
    calls_count_exactly(&s, &s.url, &more, "HTTP/2 (h2c)");
    let executed = s.executed();
    assert_eq!(executed.get("rpc initialize"), Some(&2), "{executed:?}");

    let pki = Pki::new("mcp-h2-sessions");
    let served = served_over_tls(&pki);
    for (flag, protocol) in [("--http2", "HTTP/2"), ("--http3", "HTTP/3")] {
        let Some(s) = server_with(&format!("sessions{flag}"), true, &[served.as_str()]) else {
            return;
        };
        let url = s.url.replace("http://127.0.0.1", "https://localhost");
        let ca = pki.path("ca.pem");
        let more = [flag, "--cacert", &ca, "--protocol-version", "2025-11-25"];
        let doc = calls_count_exactly(&s, &url, &more, protocol);
        assert_eq!(doc["mcp"]["handshakes"], 2, "{flag}: {}", doc["mcp"]);
        assert_eq!(s.executed().get("rpc initialize"), Some(&3), "{flag}");
    }
}

/// A session per call over h2c and HTTP/3: each call's handshake, the call and the DELETE as
/// streams of the slot's connection, every session ended; no connection is opened for a call.
#[test]
fn a_session_per_call_over_http2_and_http3_is_opened_and_ended_in_streams() {
    let pki = Pki::new("mcp-per-call");
    let served = served_over_tls(&pki);
    let ca = pki.path("ca.pem");
    for (flag, protocol) in [("--http2", "HTTP/2 (h2c)"), ("--http3", "HTTP/3")] {
        let option = match flag {
            "--http2" => "hypercorn",
            _ => served.as_str(),
        };
        let Some(s) = server_with(&format!("per-call{flag}"), true, &[option]) else {
            return;
        };
        let url = match flag {
            "--http2" => s.url.clone(),
            _ => s.url.replace("http://127.0.0.1", "https://localhost"),
        };
        let mut args = vec![
            flag,
            "--connect-timeout",
            "10s",
            "-n",
            "12",
            "-c",
            "2",
            "-p",
            "2",
            "--protocol-version",
            "2025-11-25",
            "--session",
            "per-request",
            "--tool",
            "add",
            "--args",
            r#"add={"a":2,"b":3}"#,
        ];
        if flag == "--http3" {
            args.extend(["--cacert", &ca]);
        }
        args.push(&url);
        let doc = run(&args);
        crate::schema::validate(&doc);
        assert_eq!(doc["config"]["protocol"], protocol);
        assert_eq!(doc["requests"]["completed"], 12, "{flag}: {doc}");
        let m = &doc["mcp"];
        assert_eq!(m["session"], "per-request");
        assert_eq!(
            (&m["handshakes"], &m["sessions_ended"]),
            (&12.into(), &12.into()),
            "{m}"
        );
        assert_eq!(doc["connections"]["reconnects"], 0, "{flag}");
        let ran = s.executed();
        // The probe's session, then one per call.
        assert_eq!(ran.get("rpc initialize"), Some(&13), "{flag}: {ran:?}");
        assert_eq!(
            ran.get("rpc notifications/initialized"),
            Some(&13),
            "{flag}: {ran:?}"
        );
        assert_eq!(ran.get("add"), Some(&12), "{flag}: {ran:?}");
    }
}

/// The legacy HTTP+SSE transport over HTTP/2 and HTTP/3: each connection's session stream is
/// a stream of it beside the calls' (the slots share the session, with ids of their own), the
/// POSTs are streams too, and each answer, on the session's stream, ends its call: counted
/// exactly, one handshake a connection.
#[test]
fn the_legacy_transport_over_h2c_h2_and_http3_counts_exactly() {
    let check = |s: &Server, url: &str, more: &[&str], protocol: &str| {
        let doc = calls_count_exactly(s, url, more, protocol);
        // The probe's stream over HTTP/1.1; each connection's, one of its streams.
        let version = if more.contains(&"--http3") { "3" } else { "2" };
        let executed = s.executed();
        assert_eq!(executed.get("GET /sse HTTP/1.1"), Some(&1), "{executed:?}");
        assert_eq!(
            executed.get(&format!("GET /sse HTTP/{version}")),
            Some(&2),
            "{executed:?}"
        );
        assert_eq!(doc["mcp"]["transport"], "sse", "{}", doc["mcp"]);
        assert_eq!(doc["mcp"]["handshakes"], 2, "{}", doc["mcp"]);
        let executed = s.executed();
        // The probe's POST that found no Streamable HTTP, the probe's session, then one a
        // connection.
        assert_eq!(executed.get("rpc initialize"), Some(&4), "{executed:?}");
        assert_eq!(
            executed.get("rpc notifications/initialized"),
            Some(&3),
            "{executed:?}"
        );
    };
    let Some(s) = server_with("h2c-legacy", false, &["sse", "hypercorn"]) else {
        return;
    };
    check(&s, &s.url, &["--http2"], "HTTP/2 (h2c)");
    // -v opens the stream and POSTs as the run does: streams, the answers read from it.
    let (code, err) = verbose(&["--http2"], &s.url);
    assert_eq!(code, Some(0), "{err}");
    for line in [
        "> :method: GET",
        "> :path: /sse",
        "< :status: 202",
        "* its answer, on the stream",
    ] {
        assert!(err.lines().any(|l| l == line), "{line}: {err}");
    }
    assert!(!err.contains("HTTP/1.1"), "{err}");
    let pki = Pki::new("mcp-h2-legacy");
    let served = served_over_tls(&pki);
    for (flag, protocol) in [("--http2", "HTTP/2"), ("--http3", "HTTP/3")] {
        let Some(s) = server_with(&format!("tls-legacy{flag}"), false, &["sse", &served]) else {
            return;
        };
        let url = s.url.replace("http://127.0.0.1", "https://localhost");
        let ca = pki.path("ca.pem");
        check(&s, &url, &[flag, "--cacert", &ca], protocol);
        let (code, err) = verbose(&[flag, "--cacert", &ca], &url);
        assert_eq!(code, Some(0), "{flag}: {err}");
        assert!(err.lines().any(|l| l == "> :path: /sse"), "{flag}: {err}");
        assert!(
            err.contains("* its answer, on the stream\n< event: message"),
            "{flag}: {err}"
        );
    }
}

/// A session the server forgot, over h2c: the call that finds it is counted as
/// `session_expired`, its connection ends for new calls, and the next connection opens another
/// session for the slots on it.
#[test]
fn an_expired_session_over_http2_is_counted_and_the_next_connection_opens_another() {
    // The SDK forgets a session idle for 0.3 s; calls come every 0.5 s.
    let Some(s) = server_with("expiry-h2", true, &["hypercorn", "idle=0.3"]) else {
        return;
    };
    let doc = run(&[
        "--http2",
        "-p",
        "2",
        "-q",
        "2",
        "-n",
        "6",
        "-c",
        "1",
        "--protocol-version",
        "2025-11-25",
        "--tool",
        "add",
        "--args",
        r#"add={"a":2,"b":3}"#,
        &s.url,
    ]);
    let add = &doc["mcp"]["tools"][0];
    let (ok, expired) = (
        add["succeeded"].as_u64().unwrap(),
        add["sessions_expired"].as_u64().unwrap(),
    );
    assert!(expired >= 1 && ok >= 1, "{add}");
    assert_eq!(ok + expired, 6, "{add}");
    // A new session after an expiry; a slot that had taken its call on the connection before
    // it ended sends it in the old session, which the server answers with a 404 of its own.
    let h = doc["mcp"]["handshakes"].as_u64().unwrap();
    assert!(
        h >= 2 && h <= expired + 1,
        "{h} handshakes, {expired} expired"
    );
    assert_eq!(s.executed().get("add"), Some(&ok));
    assert_eq!(
        s.executed().get("rpc initialize"),
        Some(&(h + 1)),
        "the probe's and the run's"
    );
}

/// A server whose answer to `initialize` over HTTP/2 is spoilt (the probe's, over HTTP/1.1, is
/// not): each connection's handshake fails as a connect does, with its reason, and nothing is
/// called.
#[test]
fn a_spoilt_handshake_over_http2_fails_each_connection_with_its_reason() {
    for (kind, says) in [
        ("long-id", "Mcp-Session-Id is 5000 bytes long"),
        (
            "bad-id",
            "Mcp-Session-Id has characters other than visible ASCII",
        ),
        ("404", "answered initialize with HTTP 404"),
        ("junk", "not a JSON-RPC response"),
    ] {
        let option = format!("hostile-init={kind}");
        let Some(s) = server_with(&format!("spoilt-{kind}"), true, &["hypercorn", &option]) else {
            return;
        };
        let out = spate(&[
            "mcp",
            "--no-progress",
            "--http2",
            "-n",
            "4",
            "-c",
            "2",
            "-p",
            "2",
            "--protocol-version",
            "2025-11-25",
            "--tool",
            "add",
            "--args",
            r#"add={"a":1,"b":1}"#,
            &s.url,
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{kind}: {err}");
        assert!(err.contains(says), "{kind}: {err}");
        assert_eq!(err.lines().count(), 1, "{kind}: {err}");
        assert_eq!(s.executed().get("add"), None, "{kind}: nothing was called");
    }
}

/// `--session per-request` over the legacy transport on HTTP/2 and HTTP/3: each call opens its
/// session's stream as a stream of the slot's connection (no connection of its own), POSTs its
/// handshake and itself, reads their answers from it, and closes it.
#[test]
fn a_legacy_session_per_call_over_http2_and_http3_is_a_stream_of_the_slots_connection() {
    let pki = Pki::new("mcp-legacy-per-call");
    let served = served_over_tls(&pki);
    let ca = pki.path("ca.pem");
    for (flag, version) in [("--http2", "2"), ("--http3", "3")] {
        let Some(s) = server_with(&format!("legacy-per-call{flag}"), false, &["sse", &served])
        else {
            return;
        };
        let url = s.url.replace("http://127.0.0.1", "https://localhost");
        let doc = run(&[
            flag,
            "--cacert",
            &ca,
            "--session",
            "per-request",
            "-n",
            "12",
            "-c",
            "1",
            "-p",
            "2",
            "--tool",
            "add",
            "--args",
            r#"add={"a":1,"b":1}"#,
            &url,
        ]);
        assert_eq!(
            doc["requests"]["successful"], 12,
            "{flag}: {}",
            doc["requests"]
        );
        assert_eq!(doc["mcp"]["handshakes"], 12, "{flag}: {}", doc["mcp"]);
        assert_eq!(doc["connections"]["reconnects"], 0, "{flag}");
        let ran = s.executed();
        assert_eq!(
            ran.get(&format!("GET /sse HTTP/{version}")),
            Some(&12),
            "{flag}: {ran:?}"
        );
        assert_eq!(ran.get("add"), Some(&12), "{flag}: {ran:?}");
        // The probe's two, then one a call.
        assert_eq!(ran.get("rpc initialize"), Some(&14), "{flag}: {ran:?}");
    }
}

/// A legacy session's stream that the server ends, over h2c: the calls that waited on it fail
/// as `session_expired`, the connection takes no new calls, and the next one opens another
/// session on a stream of its own; nothing hangs.
#[test]
fn a_legacy_session_stream_that_ends_over_http2_expires_its_calls_and_opens_another() {
    let Some(s) = server_with("h2c-legacy-end", false, &["sse", "hypercorn", "sse-end=5"]) else {
        return;
    };
    let doc = run(&[
        "--http2",
        "-n",
        "12",
        "-c",
        "1",
        "-p",
        "2",
        "--tool",
        "add",
        "--args",
        r#"add={"a":1,"b":1}"#,
        &s.url,
    ]);
    let r = &doc["requests"];
    let (ok, failed) = (
        r["successful"].as_u64().unwrap(),
        r["failed"].as_u64().unwrap(),
    );
    assert_eq!(ok + failed, 12, "{r}");
    // Each session's stream brings its handshake's answer and four calls' before it ends.
    assert!((4..12).contains(&ok) && failed >= 1, "{r}");
    let errors = doc["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["class"], "session_expired");
    assert_eq!(errors[0]["count"], failed);
    let handshakes = doc["mcp"]["handshakes"].as_u64().unwrap();
    assert!(handshakes >= 2, "{}", doc["mcp"]);
    assert_eq!(
        s.executed().get("GET /sse HTTP/2"),
        Some(&handshakes),
        "one stream a session"
    );
}
