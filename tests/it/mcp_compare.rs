//! `spate compare` of MCP servers against the official MCP Python SDK (tests/it/mcp.rs's
//! server): rounds of the same calls on each, the verdict, the servers' own counts, each run's
//! sessions its own, and a target that cannot be run stopping the comparison before any load.

use serde_json::Value;

use crate::mcp::{server, server_with};
use crate::support::spate;

/// `spate compare --no-progress ARGS`.
fn compare(args: &[&str]) -> std::process::Output {
    spate(&[&["compare", "--no-progress"][..], args].concat())
}

fn row<'a>(doc: &'a Value, target: usize, measure: &str) -> &'a Value {
    doc["targets"][target]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["measure"] == measure)
        .unwrap()
}

#[test]
fn a_server_that_answers_later_is_slower_and_every_call_is_the_servers() {
    let (Some(a), Some(b)) = (
        server("cmp-a", false),
        server_with("cmp-b", true, &["lag=40"]),
    ) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("spate-mcp-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = compare(&[
        "-n",
        "12",
        "-c",
        "2",
        "--rounds",
        "4",
        "--format",
        "json",
        "--save-dir",
        dir.to_str().unwrap(),
        "--tool",
        "slow",
        "--args",
        r#"slow={"ms":1}"#,
        &format!("a={}", a.url),
        &format!("b={}", b.url),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for name in ["a", "b"] {
        assert!(
            err.contains(&format!(
                "spate compare: {name}: MCP 2026-07-28 over streamable-http"
            )),
            "{err}"
        );
    }
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::schema::validate_against("docs/compare-schema.json", &doc);
    let p50 = row(&doc, 1, "p50");
    assert_eq!(p50["change"]["verdict"], "worse", "{p50}");
    assert!(p50["median"].as_f64().unwrap() >= 41.0, "{p50}");
    assert_eq!(row(&doc, 1, "errors")["median"], 0.0);
    // Four rounds of twelve calls each, all of them executed by the server.
    assert_eq!(a.executed().get("slow"), Some(&48));
    assert_eq!(b.executed().get("slow"), Some(&48));
    // Each run is an MCP run of its own, saved with its per-tool row.
    let run: Value = serde_json::from_slice(&std::fs::read(dir.join("b-3.json")).unwrap()).unwrap();
    crate::schema::validate(&run);
    let slow = &run["mcp"]["tools"][0];
    assert_eq!(slow["tool"], "slow");
    assert_eq!(
        (slow["calls"].as_u64(), slow["succeeded"].as_u64()),
        (Some(12), Some(12))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn each_run_makes_its_own_sessions() {
    let (Some(a), Some(b)) = (server("cmp-conn", false), server("cmp-shared", true)) else {
        return;
    };
    let run = |session: &str, url: &str| {
        let out = compare(&[
            "-n",
            "10",
            "-c",
            "2",
            "--rounds",
            "2",
            "--protocol-version",
            "2025-11-25",
            "--session",
            session,
            "--tool",
            "add",
            "--args",
            r#"add={"a":1,"b":2}"#,
            url,
            url,
        ]);
        crate::support::succeeded(&out);
    };
    // The probe's handshake, then one a connection: 2 connections, 2 runs of each twin target.
    run("per-connection", &a.url);
    let ran = a.executed();
    assert_eq!(ran.get("rpc initialize"), Some(&(2 + 2 * 2 * 2)), "{ran:?}");
    assert_eq!(ran.get("add"), Some(&40), "{ran:?}");
    // Shared: one session a run, opened before it, besides the probes'.
    run("shared", &b.url);
    let ran = b.executed();
    assert_eq!(ran.get("rpc initialize"), Some(&(2 + 2 * 2)), "{ran:?}");
    assert_eq!(ran.get("add"), Some(&40), "{ran:?}");
}

#[test]
fn a_target_that_cannot_be_run_stops_the_comparison_before_any_load() {
    let Some(a) = server("cmp-stop", true) else {
        return;
    };
    let not_mcp =
        crate::support::Scripted::constant(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
    let out = compare(&[
        "-n",
        "10",
        "--tool",
        "add",
        &a.url,
        &format!("other={}mcp", not_mcp.url()),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("spate compare: other: http://") && last.contains("HTTP 404"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    let out = compare(&["-n", "10", "--tool", "sub", &a.url, &a.url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no tool named \"sub\""), "{err}");
    let ran = a.executed();
    assert_eq!(ran.get("rpc tools/call"), None, "no load: {ran:?}");
    assert!(ran.contains_key("rpc tools/list"), "{ran:?}");
}
