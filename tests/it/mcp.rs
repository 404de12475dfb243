//! `spate mcp` against the official MCP Python SDK (PyPI `mcp`), which no one here wrote: a
//! server of a few lines on the SDK's own server class (tests/it/servers/mcp_server.py) that
//! writes each tool call it executes to a log. Counts must match the server's, errors must be
//! told apart from successes, the latency must end at the answer, and the calls must carry
//! what the SDK checks (the protocol version, the method and name headers, mirrored
//! arguments). The SDK lives in target/test-venv (scripts/test-venv.sh).

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::support::{Child, free_addr, spate, spawn_listening, test_python};

pub struct Server {
    _child: Child,
    pub url: String,
    log: PathBuf,
}

/// The SDK's server on a free port, answering in JSON (`json`) or with event streams where it
/// has notifications to send; `None` (skipped) without the test virtualenv.
pub fn server(name: &str, json: bool) -> Option<Server> {
    server_with(name, json, &[])
}

/// As [`server`], with more of the script's options (`idle=SECONDS`, `lag=MS`, ...).
pub fn server_with(name: &str, json: bool, options: &[&str]) -> Option<Server> {
    let python = test_python("mcp")?;
    let addr = free_addr();
    let log = std::env::temp_dir().join(format!("spate-it-mcp-{}-{name}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/servers/mcp_server.py"
    );
    let mut cmd = std::process::Command::new(python);
    cmd.args([script, &addr.port().to_string(), log.to_str().unwrap()]);
    if json {
        cmd.arg("json");
    }
    cmd.args(options);
    // The legacy transport's stream is at /sse; Streamable HTTP's endpoint at /mcp.
    let path = match options.contains(&"sse") {
        true => "sse",
        false => "mcp",
    };
    Some(Server {
        _child: Child(spawn_listening(&mut cmd, addr)),
        url: format!("http://{addr}/{path}"),
        log,
    })
}

impl Server {
    /// How many times the server executed each tool, and received each JSON-RPC method
    /// ("rpc METHOD").
    pub fn executed(&self) -> HashMap<String, u64> {
        let mut n = HashMap::new();
        for line in std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
        {
            *n.entry(line.to_string()).or_default() += 1;
        }
        n
    }
}

/// `spate mcp --no-progress --format json ARGS`: the exit code and the result.
fn mcp(args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["mcp", "--no-progress", "--format", "json"];
    all.extend_from_slice(args);
    let out = spate(&all);
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

#[test]
fn calls_count_as_the_server_executed_them_and_tool_errors_are_not_successes() {
    let Some(s) = server("counts", true) else {
        return;
    };
    let (code, doc) = mcp(&[
        "-n",
        "40",
        "-c",
        "4",
        "--tool",
        "add:3",
        "--args",
        r#"add={"a":2,"b":3}"#,
        "--tool",
        "fails",
        &s.url,
    ]);
    assert_eq!(code, Some(0));
    crate::schema::validate(&doc);
    let ran = s.executed();
    assert_eq!(ran.get("add"), Some(&30), "{ran:?}");
    assert_eq!(ran.get("fails"), Some(&10), "{ran:?}");
    let add = row(&doc, "add");
    assert_eq!(
        (add["calls"].as_u64(), add["succeeded"].as_u64()),
        (Some(30), Some(30))
    );
    let fails = row(&doc, "fails");
    assert_eq!(fails["succeeded"], 0);
    assert_eq!(fails["tool_errors"], 10);
    assert_eq!(doc["requests"]["successful"], 30);
    assert_eq!(doc["requests"]["failed"], 10);
    assert_eq!(doc["errors"][0]["class"], "tool_error");
    assert_eq!(doc["mcp"]["protocol_version"], "2026-07-28");
    assert_eq!(doc["mcp"]["transport"], "streamable-http");
    assert_eq!(doc["mcp"]["server"], "spate-test");
    // Each tool has its own latency, a failing tool's too: its calls were answered.
    assert!(add["p50_ms"].as_f64().is_some());
    assert!(fails["p50_ms"].as_f64().is_some(), "{fails}");
    // The run's percentiles mix the tools, and the insight says so instead of reading
    // queueing into them.
    let kinds: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"mixed"), "{kinds:?}");
    assert!(!kinds.contains(&"queueing"), "{kinds:?}");
}

#[test]
fn a_slow_tool_is_timed_to_its_answer() {
    let Some(s) = server("slow", false) else {
        return;
    };
    let (code, doc) = mcp(&[
        "-n",
        "8",
        "-c",
        "4",
        "--tool",
        "slow",
        "--args",
        r#"slow={"ms":300}"#,
        &s.url,
    ]);
    assert_eq!(code, Some(0));
    let p50 = row(&doc, "slow")["p50_ms"].as_f64().unwrap();
    assert!(p50 >= 300.0, "{p50}");
    // Just above: the answer, not something later (a generous bound for a loaded machine).
    assert!(p50 < 1_500.0, "{p50}");
    assert_eq!(s.executed().get("slow"), Some(&8));
    // The text report says where a call's latency ends.
    let saved = std::env::temp_dir().join(format!("spate-it-mcp-{}-slow.json", std::process::id()));
    std::fs::write(&saved, doc.to_string()).unwrap();
    let out = spate(&["report", saved.to_str().unwrap()]);
    let _ = std::fs::remove_file(&saved);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "Latency distribution (closed model: request start to the call's JSON-RPC answer)"
        ),
        "{text}"
    );
}

/// A tool that fails after 300 ms is seen to be slow: its failed calls were answered, and their
/// latency is its row's, in the JSON and in the table.
#[test]
fn a_slow_failing_tool_has_its_latency() {
    let Some(s) = server("slow-fails", false) else {
        return;
    };
    let (code, doc) = mcp(&[
        "-n",
        "4",
        "-c",
        "2",
        "--tool",
        "slow_fails",
        "--args",
        r#"slow_fails={"ms":300}"#,
        &s.url,
    ]);
    assert_eq!(code, Some(1), "no call succeeded");
    let r = row(&doc, "slow_fails");
    assert_eq!(r["tool_errors"], 4);
    let p50 = r["p50_ms"].as_f64().unwrap();
    assert!((300.0..1_500.0).contains(&p50), "{p50}");
    let saved = std::env::temp_dir().join(format!(
        "spate-it-mcp-{}-slow-fails.json",
        std::process::id()
    ));
    std::fs::write(&saved, doc.to_string()).unwrap();
    let out = spate(&["report", saved.to_str().unwrap()]);
    let _ = std::fs::remove_file(&saved);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.ends_with(" slow_fails"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains(" ms"), "the row has its percentiles: {line}");
}

#[test]
fn calls_without_their_required_arguments_are_tool_errors_and_exit_1() {
    let Some(s) = server("noargs", true) else {
        return;
    };
    let (code, doc) = mcp(&["-n", "6", "-c", "2", "--tool", "add", &s.url]);
    assert_eq!(code, Some(1));
    assert_eq!(row(&doc, "add")["tool_errors"], 6);
    assert_eq!(doc["requests"]["successful"], 0);
    // The SDK refused the arguments before the tool ran.
    assert_eq!(s.executed().get("add"), None);
}

#[test]
fn progress_notifications_on_an_event_stream_are_counted_per_call() {
    let Some(s) = server("progress", false) else {
        return;
    };
    let (code, doc) = mcp(&[
        "-n",
        "6",
        "-c",
        "2",
        "--progress",
        "--tool",
        "steps",
        "--args",
        r#"steps={"n":3}"#,
        &s.url,
    ]);
    assert_eq!(code, Some(0));
    let steps = row(&doc, "steps");
    assert_eq!(steps["succeeded"], 6);
    assert_eq!(steps["notifications_per_call"], 3.0);
    assert_eq!(steps["progress_per_call"], 3.0);
}

#[test]
fn arguments_the_schema_mirrors_into_headers_are_sent_there() {
    let Some(s) = server("headers", true) else {
        return;
    };
    // The SDK answers 400 to a call whose Mcp-Param-Region header is missing.
    let (code, doc) = mcp(&[
        "-n",
        "4",
        "-c",
        "1",
        "--tool",
        "regional",
        "--args",
        r#"regional={"region":"Zürich"}"#,
        &s.url,
    ]);
    assert_eq!(code, Some(0), "{}", doc["status_codes"]);
    assert_eq!(row(&doc, "regional")["succeeded"], 4);
}

#[test]
fn the_list_shows_each_tool_and_its_schema() {
    let Some(s) = server("list", true) else {
        return;
    };
    let out = spate(&["mcp", "--list", &s.url]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("spate-test at "), "{text}");
    assert!(
        text.contains("\nadd  Add two numbers.\n  input: {"),
        "{text}"
    );
    let out = spate(&["mcp", "--list", "--format", "json", &s.url]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for t in ["add", "slow", "fails", "crashes", "steps", "regional"] {
        assert!(names.contains(&t), "{names:?}");
    }
    assert_eq!(
        doc["tools"][0]["input_schema"]["required"],
        serde_json::json!(["a", "b"])
    );
}

#[test]
fn spate_refuses_to_guess_and_names_what_is_wrong() {
    let err = crate::support::usage_error(&["mcp", "http://127.0.0.1:9/mcp"]);
    assert!(err.contains("spate does not guess"), "{err}");
    let err =
        crate::support::usage_error(&["mcp", "--tool", "a", "-m", "PUT", "http://127.0.0.1:9/mcp"]);
    assert!(err.contains("-m does not apply"), "{err}");
    let err = crate::support::usage_error(&[
        "mcp",
        "--tool",
        "a",
        "--args",
        "b={}",
        "http://127.0.0.1:9/mcp",
    ]);
    assert!(err.contains("--args b names no --tool"), "{err}");
    let err = crate::support::usage_error(&[
        "mcp",
        "--tool",
        "a",
        "http://127.0.0.1:9/mcp",
        "http://127.0.0.1:10/mcp",
    ]);
    assert!(err.contains("one URL: to compare MCP servers"), "{err}");
    let Some(s) = server("unknown", true) else {
        return;
    };
    let err = crate::support::usage_error(&["mcp", "--tool", "sub", &s.url]);
    assert!(
        err.contains("no tool named \"sub\" (it has: add, echo, slow,"),
        "{err}"
    );
}

#[test]
fn a_server_that_is_not_mcp_is_one_line_and_exit_1() {
    let srv =
        crate::support::Scripted::constant(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
    let out = spate(&["mcp", "--tool", "add", &format!("{}mcp", srv.url())]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("answered tools/list with HTTP 404"), "{err}");
    assert!(err.contains("initialize with HTTP 404"), "{err}");
    // Programs reading the JSON still get a document that says why.
    let out = spate(&[
        "mcp",
        "--format",
        "json",
        "--tool",
        "add",
        &format!("{}mcp", srv.url()),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::schema::validate(&doc);
    assert_eq!(doc["error"]["kind"], "not_mcp");
}

#[test]
fn the_page_has_a_row_per_tool_with_the_jsons_figures() {
    let Some(s) = server("html", true) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("spate-it-mcp-html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (page, json) = (dir.join("mcp.html"), dir.join("mcp.json"));
    let out = spate(&[
        "mcp",
        "--no-progress",
        "-n",
        "30",
        "-c",
        "2",
        "--tool",
        "add:2",
        "--args",
        r#"add={"a":1,"b":1}"#,
        "--tool",
        "fails",
        "--html",
        page.to_str().unwrap(),
        "--save",
        json.to_str().unwrap(),
        &s.url,
    ]);
    crate::support::succeeded(&out);
    let html = std::fs::read_to_string(&page).unwrap();
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(html.contains("<section id=\"per-tool\">"));
    let keys: Vec<String> = crate::html::cells(&html)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    for key in [
        "mcp.tools.0.succeeded",
        "mcp.tools.1.tool_errors",
        "mcp.tools.0.p999_ms",
    ] {
        assert!(keys.iter().any(|k| k == key), "{key} not on the page");
    }
    assert_eq!(doc["mcp"]["tools"][1]["tool_errors"], 10);
    crate::html::figures_match(&html, &doc);
    crate::html::check_page(&page, &doc);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_revision_with_sessions_initializes_once_per_connection() {
    let Some(s) = server("sessions", false) else {
        return;
    };
    let (code, doc) = mcp(&[
        "-n",
        "30",
        "-c",
        "3",
        "--protocol-version",
        "2025-11-25",
        "--tool",
        "add",
        "--args",
        r#"add={"a":2,"b":3}"#,
        &s.url,
    ]);
    assert_eq!(code, Some(0));
    crate::schema::validate(&doc);
    let got = s.executed();
    // The probe's session, then one per connection.
    assert_eq!(got.get("rpc initialize"), Some(&4), "{got:?}");
    assert_eq!(
        got.get("rpc notifications/initialized"),
        Some(&4),
        "{got:?}"
    );
    assert_eq!(got.get("rpc tools/call"), Some(&30), "{got:?}");
    assert_eq!(got.get("add"), Some(&30), "{got:?}");
    let m = &doc["mcp"];
    assert_eq!(m["protocol_version"], "2025-11-25");
    assert_eq!(m["sessions"], true);
    assert_eq!(m["handshakes"], 3);
    assert!(m["handshake_p50_ms"].as_f64().is_some());
    assert_eq!(row(&doc, "add")["succeeded"], 30);
}

#[test]
fn auto_falls_back_to_a_handshake_where_the_stateless_revision_is_refused() {
    // The SDK's server behind a filter that answers the stateless revision as a server of an
    // earlier one does: 400 without a JSON-RPC error of that revision.
    let Some(s) = server_with("fallback", true, &["refuse-stateless"]) else {
        return;
    };
    let args = [
        "-n",
        "4",
        "-c",
        "1",
        "--tool",
        "add",
        "--args",
        r#"add={"a":2,"b":3}"#,
    ];
    let (code, doc) = mcp(&[&args[..], &[s.url.as_str()]].concat());
    assert_eq!(code, Some(0));
    assert_eq!(doc["mcp"]["sessions"], true);
    assert_eq!(doc["mcp"]["protocol_version"], "2025-11-25");
    assert_eq!(row(&doc, "add")["succeeded"], 4);
    let got = s.executed();
    assert_eq!(got.get("refused stateless"), Some(&1), "{got:?}");
    // Forced, the stateless revision is not given up: one line, exit 1.
    let out = spate(
        &[
            &["mcp", "--protocol-version", "2026-07-28"][..],
            &args[..],
            &[s.url.as_str()],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("HTTP 400"));
}

#[test]
fn the_stateless_revision_makes_no_handshake() {
    let Some(s) = server("stateless", true) else {
        return;
    };
    let (code, doc) = mcp(&[
        "-n",
        "4",
        "-c",
        "2",
        "--tool",
        "add",
        "--args",
        r#"add={"a":2,"b":3}"#,
        &s.url,
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(doc["mcp"]["sessions"], false);
    assert_eq!(doc["mcp"]["handshakes"], 0);
    let got = s.executed();
    assert_eq!(got.get("rpc initialize"), None, "{got:?}");
    assert_eq!(got.get("rpc tools/call"), Some(&4), "{got:?}");
}

#[test]
fn an_expired_session_is_counted_and_the_next_call_opens_another() {
    // The SDK forgets a session idle for 0.3 s; calls come every 0.5 s on one connection.
    let Some(s) = server_with("expiry", true, &["idle=0.3"]) else {
        return;
    };
    let (code, doc) = mcp(&[
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
    assert_eq!(code, Some(0));
    let add = row(&doc, "add");
    let (ok, expired) = (
        add["succeeded"].as_u64().unwrap(),
        add["sessions_expired"].as_u64().unwrap(),
    );
    assert!(expired >= 1, "{add}");
    assert!(ok >= 1, "{add}");
    assert_eq!(ok + expired, 6, "{add}");
    assert_eq!(doc["errors"][0]["class"], "session_expired");
    // The first session, and a new one after each expiry that another call followed.
    let h = doc["mcp"]["handshakes"].as_u64().unwrap();
    assert!(
        h == expired || h == expired + 1,
        "{h} handshakes, {expired} expired"
    );
    assert_eq!(s.executed().get("add"), Some(&ok));
}

#[test]
fn the_legacy_sse_transport_times_each_call_to_its_answer_on_the_stream() {
    let Some(s) = server_with("sse", false, &["sse"]) else {
        return;
    };
    let (code, doc) = mcp(&[
        "-n",
        "12",
        "-c",
        "4",
        "--transport",
        "sse",
        "--progress",
        "--tool",
        "slow:2",
        "--args",
        r#"slow={"ms":300}"#,
        "--tool",
        "steps",
        "--args",
        r#"steps={"n":3}"#,
        &s.url,
    ]);
    assert_eq!(code, Some(0), "{doc}");
    crate::schema::validate(&doc);
    assert_eq!(doc["mcp"]["transport"], "sse");
    assert_eq!(doc["mcp"]["protocol_version"], "2024-11-05");
    let ran = s.executed();
    assert_eq!(ran.get("slow"), Some(&8), "{ran:?}");
    assert_eq!(ran.get("steps"), Some(&4), "{ran:?}");
    // One session per connection, and the probe's.
    assert_eq!(ran.get("rpc initialize"), Some(&5), "{ran:?}");
    assert_eq!(doc["mcp"]["handshakes"], 4);
    let slow = row(&doc, "slow");
    assert_eq!(slow["succeeded"], 8);
    // Timed to the answer on the stream, not to the POST's 202 that comes at once.
    let p50 = slow["p50_ms"].as_f64().unwrap();
    assert!(p50 >= 300.0, "{p50}");
    assert!(p50 < 1_500.0, "{p50}");
    // The notifications arrive on the stream too.
    let steps = row(&doc, "steps");
    assert_eq!(steps["succeeded"], 4);
    assert_eq!(steps["progress_per_call"], 3.0);
    // Each POST was acknowledged with 202; the answers came on the streams.
    assert_eq!(
        doc["status_codes"],
        serde_json::json!([{"code": 202, "count": 12}])
    );
    // What the streams brought each call is data received too: its answer and the steps'
    // notifications, three events of over 100 bytes each, beside a 202 of about 100.
    let bytes_in = doc["totals"]["bytes_in"].as_u64().unwrap();
    assert!(bytes_in > 12 * 200 + 4 * 300, "{bytes_in}");
}

#[test]
fn auto_finds_the_legacy_transport_and_streamable_http_alone_refuses_it() {
    let Some(s) = server_with("sse-auto", false, &["sse"]) else {
        return;
    };
    let out = spate(&["mcp", "--list", "--format", "json", &s.url]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["transport"], "sse", "{doc}");
    assert!(
        doc["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "add")
    );
    let (code, doc) = mcp(&[
        "-n",
        "2",
        "--transport",
        "streamable-http",
        "--tool",
        "add",
        &s.url,
    ]);
    assert_eq!(code, Some(1));
    assert_eq!(doc["error"]["kind"], "not_mcp", "{doc}");
}

#[test]
fn calls_from_a_file_resources_prompts_and_tools_list_are_each_measured() {
    let Some(s) = server("mixed", true) else {
        return;
    };
    let file =
        std::env::temp_dir().join(format!("spate-it-mcp-{}-calls.jsonl", std::process::id()));
    std::fs::write(
        &file,
        concat!(
            r#"{"tool": "add", "arguments": {"a": 1, "b": 2}, "weight": 2}"#,
            "\n",
            r#"{"tool": "add", "arguments": {"a": 5, "b": 5}}"#,
            "\n",
            r#"{"prompt": "greet", "arguments": {"name": "Ada"}}"#,
            "\n",
        ),
    )
    .unwrap();
    let (code, doc) = mcp(&[
        "-n",
        "36",
        "-c",
        "2",
        "--args-file",
        file.to_str().unwrap(),
        "--resource",
        "config://motd",
        "--tools-list",
        &s.url,
    ]);
    let _ = std::fs::remove_file(&file);
    assert_eq!(code, Some(0), "{doc}");
    // Weights 1, 1, 2, 1, 1 (the flags' calls, then the file's) share 36 calls as 6, 6, 12,
    // 6, 6; both add lines share a row. The probe lists the tools once more.
    let ran = s.executed();
    assert_eq!(ran.get("add"), Some(&18), "{ran:?}");
    assert_eq!(ran.get("prompt greet"), Some(&6), "{ran:?}");
    assert_eq!(ran.get("resource motd"), Some(&6), "{ran:?}");
    assert_eq!(ran.get("rpc tools/list"), Some(&7), "{ran:?}");
    assert_eq!(row(&doc, "add")["succeeded"], 18);
    assert_eq!(row(&doc, "prompts/get greet")["succeeded"], 6);
    assert_eq!(row(&doc, "resources/read config://motd")["succeeded"], 6);
    assert_eq!(row(&doc, "tools/list")["succeeded"], 6);
    assert_eq!(doc["requests"]["successful"], 36);
}

#[test]
fn arguments_that_are_not_a_json_object_are_refused_before_anything_is_sent() {
    for (args, says) in [
        (r#"add={"a":"#, "JSON"),
        (r#"add=[1,2]"#, "object"),
        ("add", "NAME="),
    ] {
        let out = spate(&[
            "mcp",
            "--tool",
            "add",
            "--args",
            args,
            "http://127.0.0.1:9/mcp",
        ]);
        assert_eq!(out.status.code(), Some(2), "{args}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("spate: mcp: --args "), "{err}");
        assert!(err.contains(says), "{args}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn a_shared_session_carries_every_connections_calls_with_ids_of_their_own() {
    let Some(s) = server("shared", false) else {
        return;
    };
    let (code, doc) = mcp(&[
        "-n",
        "40",
        "-c",
        "4",
        "--protocol-version",
        "2025-11-25",
        "--session",
        "shared",
        "--progress",
        "--tool",
        "add",
        "--args",
        r#"add={"a":2,"b":3}"#,
        "--tool",
        "steps",
        "--args",
        r#"steps={"n":2}"#,
        &s.url,
    ]);
    assert_eq!(code, Some(0), "{doc}");
    crate::schema::validate(&doc);
    let ran = s.executed();
    // The probe's session and the run's one: none per connection.
    assert_eq!(ran.get("rpc initialize"), Some(&2), "{ran:?}");
    assert_eq!(ran.get("add"), Some(&20), "{ran:?}");
    assert_eq!(doc["mcp"]["session"], "shared");
    assert_eq!(doc["mcp"]["handshakes"], 1);
    // Calls in flight on four connections in one session: with one id for all, the server
    // would mix their answers up.
    assert_eq!(doc["requests"]["successful"], 40, "{}", doc["errors"]);
    assert_eq!(row(&doc, "steps")["progress_per_call"], 2.0);
}

#[test]
fn a_shared_sessions_ids_never_change_a_tools_arguments() {
    let Some(s) = server("shared-args", false) else {
        return;
    };
    // The second call's id is 1000000001 before each connection takes ids of its own: an
    // argument equal to it must reach the tool as it was given.
    let (code, doc) = mcp(&[
        "-n",
        "20",
        "-c",
        "4",
        "--protocol-version",
        "2025-11-25",
        "--session",
        "shared",
        "--tool",
        "add",
        "--args",
        r#"add={"a":2,"b":3}"#,
        "--tool",
        "echo",
        "--args",
        r#"echo={"n":1000000001}"#,
        &s.url,
    ]);
    assert_eq!(code, Some(0), "{doc}");
    let ran = s.executed();
    assert_eq!(ran.get("echo 1000000001"), Some(&10), "{ran:?}");
}

#[test]
fn a_session_per_request_makes_a_handshake_for_each_call_and_ends_it() {
    let Some(s) = server("per-request", true) else {
        return;
    };
    let (code, doc) = mcp(&[
        "-n",
        "12",
        "-c",
        "2",
        "--protocol-version",
        "2025-11-25",
        "--session",
        "per-request",
        "--tool",
        "add",
        "--args",
        r#"add={"a":2,"b":3}"#,
        &s.url,
    ]);
    assert_eq!(code, Some(0), "{doc}");
    crate::schema::validate(&doc);
    let ran = s.executed();
    assert_eq!(ran.get("rpc initialize"), Some(&13), "{ran:?}");
    assert_eq!(ran.get("add"), Some(&12), "{ran:?}");
    assert_eq!(doc["mcp"]["session"], "per-request");
    assert_eq!(doc["mcp"]["handshakes"], 12);
    // The DELETEs of the last calls may still be under way when the run ends.
    let ended = doc["mcp"]["sessions_ended"].as_u64().unwrap();
    assert!((1..=12).contains(&ended), "{ended}");
    assert_eq!(
        doc["connections"]["reconnects"], 10,
        "{}",
        doc["connections"]
    );
}

#[test]
fn a_session_mode_the_server_cannot_have_is_refused() {
    let Some(s) = server("modes", true) else {
        return;
    };
    let err = crate::support::usage_error(&["mcp", "--session", "shared", "--tool", "add", &s.url]);
    assert!(err.contains("stateless revision"), "{err}");
    let Some(sse) = server_with("modes-sse", false, &["sse"]) else {
        return;
    };
    let err =
        crate::support::usage_error(&["mcp", "--session", "shared", "--tool", "add", &sse.url]);
    assert!(err.contains("cannot share one"), "{err}");
}

#[test]
fn list_refuses_what_only_a_run_would_use() {
    for flag in [
        &["-c", "4"][..],
        &["-n", "10"],
        &["--progress"],
        &["--session", "shared"],
    ] {
        let mut args = vec!["mcp", "--list"];
        args.extend_from_slice(flag);
        args.push("http://127.0.0.1:9/mcp");
        let err = crate::support::usage_error(&args);
        assert!(
            err.contains(&format!("{} does not apply", flag[0])),
            "{flag:?}: {err}"
        );
    }
}
