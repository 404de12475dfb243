//! `-v` shows the request the run sends first, whatever makes it: a request list's first entry,
//! a script's first `request()` (in a state of its own, so the run's first request is the same),
//! and an MCP server's handshake and first call in each of its revisions, against the official
//! SDK's server. A script whose `request()` never returns ends `-v`'s look with one line.

use crate::script::{Own, recorder};
use crate::support::spate;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_scripts_first_request_is_what_v_shows_and_what_the_run_sends_first() {
    let (server, seen) = recorder();
    let script = Own::new(
        "v-counter.lua",
        "n = 0\nfunction request()\n  n = n + 1\n  return wrk.format('POST', '/r' .. n, nil, 'body ' .. n)\nend\n",
    );
    let out = spate(&[
        "-v",
        "--no-progress",
        "-n",
        "3",
        "-c",
        "1",
        "-s",
        script.path(),
        &server.url(),
    ]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("* the script's first request()"), "{err}");
    assert!(err.contains("> POST /r1 HTTP/1.1"), "{err}");
    assert!(err.contains("> body 1"), "the body as sent: {err}");
    assert!(
        !err.contains("> GET / HTTP/1.1"),
        "not the plan's request: {err}"
    );
    let seen = seen.lock().unwrap();
    let lines: Vec<&str> = seen
        .iter()
        .map(|(h, _)| h.lines().next().unwrap())
        .collect();
    // -v's own, then the run's three from a fresh state: /r1 again first.
    assert_eq!(
        lines,
        [
            "POST /r1 HTTP/1.1",
            "POST /r1 HTTP/1.1",
            "POST /r2 HTTP/1.1",
            "POST /r3 HTTP/1.1"
        ]
    );
}

#[test]
fn a_request_that_never_returns_ends_the_look_with_one_line() {
    let (server, seen) = recorder();
    let script = Own::new(
        "v-loop.lua",
        "function request()\n  while true do end\nend\n",
    );
    let out = spate(&[
        "-v",
        "--no-progress",
        "--timeout",
        "300ms",
        "-z",
        "200ms",
        "-c",
        "1",
        "-s",
        script.path(),
        &server.url(),
    ]);
    let err = stderr(&out);
    assert!(
        err.contains("request() did not return in time and was stopped"),
        "{err}"
    );
    // The run's own state loops too, and is stopped at the end of the run: no response at all.
    assert!(err.contains("was interrupted there"), "{err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(seen.lock().unwrap().is_empty());
}

#[test]
fn a_lists_first_entry_is_what_v_shows() {
    let (server, seen) = recorder();
    let (a, b) = (format!("{}a", server.url()), format!("{}b", server.url()));
    let out = spate(&["-v", "--no-progress", "-n", "2", "-c", "1", &a, &b]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("* the list's first request (1 of 2)"), "{err}");
    assert!(err.contains("> GET /a HTTP/1.1"), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 3);
}

/// `spate mcp -v` against the SDK's server: the first call as the run sends it, after the
/// handshake its revision needs; the server executes the call -v sends too.
#[test]
fn mcp_v_shows_the_handshake_and_the_first_call_in_every_revision() {
    for (options, args, handshake) in [
        (&[][..], &[][..], false),
        (&[][..], &["--protocol-version", "2025-06-18"][..], true),
        (&["sse"][..], &["--transport", "sse"][..], true),
    ] {
        let Some(server) = crate::mcp::server_with("verbose", false, options) else {
            return;
        };
        let mut all = vec![
            "mcp",
            "-v",
            "--no-progress",
            "-n",
            "3",
            "-c",
            "1",
            "--tool",
            "add",
            "--args",
            r#"add={"a":2,"b":3}"#,
        ];
        all.extend_from_slice(args);
        all.push(&server.url);
        let out = spate(&all);
        let err = stderr(&out);
        assert!(out.status.success(), "{options:?}: {err}");
        assert!(
            err.contains(r#""method":"tools/call""#),
            "{options:?}: the call's body: {err}"
        );
        assert!(
            err.contains(r#""structuredContent":{"result":5}"#),
            "{options:?}: its answer: {err}"
        );
        assert!(!err.contains("HTTP/1.1 400"), "{options:?}: {err}");
        assert_eq!(
            err.contains(r#""method":"initialize""#),
            handshake,
            "{options:?}: {err}"
        );
        let executed = server.executed();
        assert_eq!(
            executed.get("add"),
            Some(&4),
            "3 of the run and -v's: {executed:?}"
        );
        if handshake && options.is_empty() {
            assert!(
                err.contains("> DELETE /mcp HTTP/1.1"),
                "-v ends its session: {err}"
            );
            assert!(err.contains("> Mcp-Session-Id: "), "{err}");
        }
    }
}
