//! `spate mcp` against a second MCP implementation no one here wrote: the reference
//! "everything" server of the TypeScript SDK (npm `@modelcontextprotocol/server-everything`,
//! installed in target/test-node by scripts/test-node.sh). It listens on every interface, so
//! it runs in a private network namespace (`unshare -rn`, loopback only) together with spate.

use std::path::PathBuf;

use serde_json::Value;

/// The server's entry point, or `None` (skipped) without it or without namespaces.
fn everything() -> Option<PathBuf> {
    let entry = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "target/test-node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    let required = std::env::var_os("SPATE_REQUIRE_TOOLS").is_some();
    if !entry.exists() {
        assert!(
            !required,
            "SPATE_REQUIRE_TOOLS is set but {} is missing: run scripts/test-node.sh",
            entry.display()
        );
        eprintln!("skipped: the MCP everything server is not installed (scripts/test-node.sh)");
        return None;
    }
    let netns = std::process::Command::new("unshare")
        .args(["-rn", "ip", "link", "set", "lo", "up"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !netns {
        assert!(
            !required,
            "SPATE_REQUIRE_TOOLS is set but no private network namespace can be made (unshare -rn, ip)"
        );
        eprintln!("skipped: no private network namespace for the MCP everything server");
        return None;
    }
    Some(entry)
}

/// In a new network namespace: the server in `mode` (`streamableHttp` or `sse`) on
/// 127.0.0.1:3001, then `spate mcp --format json ARGS URL` with `path` on it: spate's exit code
/// and its JSON.
fn run(entry: &PathBuf, mode: &str, path: &str, args: &[&str]) -> (Option<i32>, Value) {
    // Waits for the port with bash's /dev/tcp; the server is stopped when spate is done.
    let script = r#"
        set -u
        ip link set lo up
        node "$1" "$2" >/dev/null 2>&1 &
        server=$!
        for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/3001) 2>/dev/null && break; sleep 0.1; done
        spate=$3
        shift 3
        "$spate" mcp --no-progress --format json "$@"
        code=$?
        kill "$server"
        exit "$code"
    "#;
    let url = format!("http://127.0.0.1:3001/{path}");
    let mut cmd = std::process::Command::new("unshare");
    cmd.args(["-rn", "bash", "-c", script, "bash"])
        .arg(entry)
        .arg(mode)
        .arg(env!("CARGO_BIN_EXE_spate"))
        .args(args)
        .arg(&url);
    let out = cmd.output().unwrap();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), doc)
}

fn row<'a>(doc: &'a Value, tool: &str) -> &'a Value {
    doc["mcp"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["tool"] == tool)
        .unwrap_or_else(|| panic!("no row for {tool}: {}", doc["mcp"]))
}

/// Two tools: `echo` at once, and one that reports 4 progress steps over 1 s.
const CALLS: [&str; 13] = [
    "-n",
    "16",
    "-c",
    "4",
    "--progress",
    "--tool",
    "echo",
    "--args",
    r#"echo={"message":"hi"}"#,
    "--tool",
    "trigger-long-running-operation",
    "--args",
    r#"trigger-long-running-operation={"duration":1,"steps":4}"#,
];

/// The server in `mode` loaded with `CALLS` at `path`: spate's JSON, once checked against
/// what the calls must give whatever the transport.
fn loaded(mode: &str, path: &str) -> Option<Value> {
    let entry = everything()?;
    let (code, doc) = run(&entry, mode, path, &CALLS);
    assert_eq!(code, Some(0), "{doc}");
    crate::schema::validate(&doc);
    assert_eq!(doc["requests"]["successful"], 16, "{}", doc["errors"]);
    let server = doc["mcp"]["server"].as_str().unwrap();
    assert!(server.starts_with("mcp-servers/everything"), "{server}");
    assert_eq!(row(&doc, "echo")["succeeded"], 8);
    let long = row(&doc, "trigger-long-running-operation");
    assert_eq!(long["succeeded"], 8);
    // The answer comes after the steps: timed to it, not to the first event.
    assert!(long["p50_ms"].as_f64().unwrap() >= 1_000.0, "{long}");
    // Its 4 progress notifications came before each answer (the server may add log messages).
    assert!(long["progress_per_call"].as_f64().unwrap() >= 4.0, "{long}");
    Some(doc)
}

#[test]
fn the_reference_server_over_streamable_http_with_its_sessions() {
    let Some(doc) = loaded("streamableHttp", "mcp") else {
        return;
    };
    // It speaks a revision with sessions: one per connection, as asked by default.
    assert_eq!(doc["mcp"]["transport"], "streamable-http");
    assert_eq!(doc["mcp"]["session"], "per-connection");
    assert_eq!(doc["mcp"]["handshakes"], 4);
}

#[test]
fn the_reference_server_over_the_legacy_sse_transport() {
    let Some(doc) = loaded("sse", "sse") else {
        return;
    };
    assert_eq!(doc["mcp"]["transport"], "sse");
    assert_eq!(doc["mcp"]["protocol_version"], "2024-11-05");
}
