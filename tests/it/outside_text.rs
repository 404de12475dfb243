//! Text from outside never reaches a terminal raw. A saved result with every section
//! (golden/every-section.json, put together from real runs: a request list in the open model
//! with --slo and a timeout, a shard with --baseline, an event stream, MCP calls) has each of
//! its strings poisoned with terminal escapes, C1 controls, a bidirectional override and a
//! line break that would forge a line; every printer that shows it must show the poison as
//! escapes.

use std::path::Path;

use serde_json::Value;
use spate::escape::is_inert;
use spate::report::{Palette, Report, render};

use crate::support::{ScratchDir, spate};

/// What a hostile server or file puts into every string: it retitles the window, clears the
/// screen and starts a line of its own.
pub const POISON: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{85}\u{202e}\nFORGED\r";

/// Every line is spate's own: the forged line's word appears only after an escaped break.
pub fn assert_shown_safely(what: &str, text: &str, colours: bool) {
    assert!(
        is_inert(text, colours),
        "{what}: a raw control character:\n{text:?}"
    );
    for (i, _) in text.match_indices("FORGED") {
        assert!(
            text[..i].ends_with("\\n"),
            "{what}: the poison's line break was printed:\n{text}"
        );
    }
}

fn every_section() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/golden/every-section.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The places (JSON pointers) of every string value in `v`.
fn strings(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::String(_) => out.push(at),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                strings(x, format!("{at}/{i}"), out);
            }
        }
        Value::Object(o) => {
            // A histogram's encoding is data that spate decodes, never text it shows.
            for (k, x) in o.iter().filter(|(k, _)| *k != "hdr_base64") {
                strings(x, format!("{at}/{k}"), out);
            }
        }
        _ => {}
    }
}

fn poison_at(doc: &mut Value, at: &str) {
    let s = doc.pointer_mut(at).unwrap();
    *s = Value::String(format!("{}{POISON}", s.as_str().unwrap()));
}

/// The document with the poison in every string a saved result may hold: each that still
/// reads as a result (a string that names a kind, such as the model, must be one of them).
pub fn poisoned() -> (Value, usize) {
    let clean = every_section();
    crate::schema::validate(&clean);
    let mut places = Vec::new();
    strings(&clean, String::new(), &mut places);
    let mut doc = clean.clone();
    let mut n = 0;
    for at in &places {
        let mut one = clean.clone();
        poison_at(&mut one, at);
        if Report::from_json(one.to_string().as_bytes()).is_ok() {
            poison_at(&mut doc, at);
            n += 1;
        }
    }
    (doc, n)
}

#[test]
fn the_text_report_shows_a_saved_results_strings_as_escapes() {
    let (doc, n) = poisoned();
    // URLs, methods, error examples, tool names, the server, the proxy, the insight...
    assert!(n >= 20, "only {n} strings could be poisoned");
    let report = Report::from_json(doc.to_string().as_bytes()).unwrap();
    for (pal, colours) in [(Palette::None, false), (Palette::Ansi256, true)] {
        let text = render(&report, pal);
        assert!(text.contains("\\x1b]0;pwned\\x07"), "{text}");
        assert_shown_safely("the text report", &text, colours);
    }
}

#[test]
fn spate_report_prints_a_hostile_files_strings_as_escapes() {
    let (mut doc, _) = poisoned();
    let dir = ScratchDir::new("poisoned");
    let file = dir.file("r.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let out = spate(&["report", &file]);
    assert_eq!(out.status.code(), Some(0));
    assert_shown_safely("spate report", &String::from_utf8_lossy(&out.stdout), false);
    // A run that did not start: its message goes to stderr.
    doc["error"] = serde_json::json!({"kind": "connect", "message": format!("refused{POISON}")});
    std::fs::write(&file, doc.to_string()).unwrap();
    let out = spate(&["report", &file]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refused\\x1b"), "{err}");
    assert_shown_safely("spate report's stderr", &err, false);
}

/// An MCP server (the stateless revision) whose every word is poisoned: its name and version,
/// its tools' names and descriptions, and the JSON-RPC error it answers every call with.
fn hostile_mcp() -> crate::support::Scripted {
    use serde_json::json;
    crate::support::Scripted::start(|p| {
        while let Some(req) = p.read_request() {
            let Ok(msg) = serde_json::from_slice::<Value>(&req.body) else {
                return;
            };
            let id = msg["id"].clone();
            let evil = |s: &str| format!("{s}{POISON}");
            let body = match msg["method"].as_str() {
                Some("tools/list") => json!({"jsonrpc": "2.0", "id": id, "result": {
                "_meta": {"io.modelcontextprotocol/serverInfo":
                    {"name": evil("srv"), "version": evil("1")}},
                "tools": [
                    {"name": "t", "description": evil("d"), "inputSchema": {"type": "object",
                        "description": evil("schema")}},
                    {"name": evil("e"), "inputSchema": {"type": "object"}},
                ]}}),
                _ => json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32000, "message": evil("bad")}}),
            };
            let body = serde_json::to_vec(&body).unwrap();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            if !p.write(head.as_bytes()) || !p.write(&body) {
                return;
            }
        }
    })
}

#[test]
fn an_mcp_servers_words_are_shown_as_escapes() {
    let srv = hostile_mcp();
    let url = format!("{}mcp", srv.url());
    let version = ["--protocol-version", "2026-07-28"];
    let list = spate(&["mcp", "--list", version[0], version[1], &url]);
    assert_eq!(list.status.code(), Some(0));
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(text.contains("srv\\x1b]0;pwned"), "{text}");
    assert_shown_safely("mcp --list", &text, false);
    // Calls of a tool that exists and of one that does not, named by the server.
    let run = spate(&[
        "mcp",
        "--no-progress",
        "-n",
        "4",
        "-c",
        "1",
        version[0],
        version[1],
        "--tool",
        "t",
        &url,
    ]);
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(text.contains("bad\\x1b]0;pwned"), "{text}");
    assert_shown_safely("mcp's report", &text, false);
    assert_shown_safely("mcp's stderr", &String::from_utf8_lossy(&run.stderr), false);
    let missing = spate(&[
        "mcp", "-n", "1", version[0], version[1], "--tool", "x", &url,
    ]);
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains("no tool named"), "{err}");
    assert_shown_safely("mcp's refusal", &err, false);
    // -v shows the exchange the run sends.
    let verbose = spate(&[
        "mcp",
        "-v",
        "--no-progress",
        "-n",
        "1",
        "-c",
        "1",
        version[0],
        version[1],
        "--tool",
        "t",
        &url,
    ]);
    assert_shown_safely("mcp -v", &String::from_utf8_lossy(&verbose.stderr), false);
}

#[test]
fn spate_merge_prints_its_shards_strings_as_escapes() {
    let (doc, _) = poisoned();
    let dir = ScratchDir::new("poisoned-merge");
    let mut files = Vec::new();
    for i in 0..2 {
        let mut shard = doc.clone();
        shard["config"]["shard"]["index"] = i.into();
        let file = dir.file(&format!("shard{i}\u{1b}]0;pwned\u{7}.json"));
        std::fs::write(&file, shard.to_string()).unwrap();
        files.push(file);
    }
    // A poisoned --slo is not one: the merge is refused, the targets shown escaped.
    let out = spate(&["merge", &files[0], &files[1]]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("which is not one"), "{err}");
    assert_shown_safely("spate merge's refusal", &err, false);
    // Without it, the job is merged and every other string printed escaped.
    for file in &files {
        let mut shard: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        shard["config"]["shard"]["slo"] = Value::Null;
        std::fs::write(file, shard.to_string()).unwrap();
    }
    let out = spate(&["merge", &files[0], &files[1]]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("\\x1b]0;pwned"), "{text}{err}");
    assert_shown_safely("spate merge", &text, false);
    assert_shown_safely("spate merge's stderr", &err, false);
}

/// Whether no cell of `rows` would run as a spreadsheet formula.
fn no_formula(rows: &[serde_json::Map<String, Value>]) {
    for row in rows {
        for (column, cell) in row {
            let cell = cell.as_str().unwrap_or_default();
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "{column}: {cell:?}"
            );
        }
    }
}

#[test]
fn csv_cells_from_outside_never_run_as_formulas() {
    if !crate::support::have("python3") {
        return;
    }
    let dir = ScratchDir::new("csv-formula");
    // A run whose method is a valid token and a formula, against the built-in server.
    let server = crate::support::builtin(spate::serve::ServeConfig::default());
    let saved = dir.file("run.csv");
    let url = server.url();
    let out = spate(&[
        "--no-progress",
        "-n",
        "2",
        "-c",
        "1",
        "--method=-2+3",
        "--save",
        &saved,
        &url,
    ]);
    crate::support::succeeded(&out);
    let rows = crate::save::python_csv(std::path::Path::new(&saved));
    no_formula(&rows);
    assert_eq!(rows[0]["method"], "'-2+3");
    // A saved result whose every text begins as a formula.
    let mut doc = every_section();
    doc["config"]["url"] = "=HYPERLINK(\"http://evil/\",\"x\")".into();
    doc["config"]["protocol"] = "@SUM(1)".into();
    doc["config"]["model"] = "+1".into();
    doc["error"] = serde_json::json!({"kind": "-1", "message": "=1+1"});
    let file = dir.file("r.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let out = spate(&["report", "--format", "csv", &file]);
    let printed = dir.file("printed.csv");
    std::fs::write(&printed, &out.stdout).unwrap();
    let rows = crate::save::python_csv(std::path::Path::new(&printed));
    no_formula(&rows);
    assert_eq!(rows[0]["url"], "'=HYPERLINK(\"http://evil/\",\"x\")");
    assert_eq!(rows[0]["error_message"], "'=1+1");
}
