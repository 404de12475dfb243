//! The JSON result against docs/output-schema.json, for a healthy run and for one with failures,
//! and `--save` writing the same document.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use spate::report::to_json;
use spate::serve::ServeConfig;

use crate::support::{Scripted, builtin, plan, requests, run};

fn validate(doc: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/output-schema.json");
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let index = compiler
        .compile(path.to_str().unwrap(), &mut schemas)
        .expect("schema compiles");
    if let Err(e) = schemas.validate(doc, index) {
        panic!("result does not match docs/output-schema.json:\n{e:#}\n{doc:#}");
    }
}

#[test]
fn healthy_run_matches_the_schema() {
    let server = builtin(ServeConfig::default());
    let (_, summary) = run(&plan(&server.url(), 4, requests(200)));
    let doc: Value = serde_json::from_str(&to_json(&summary)).unwrap();
    validate(&doc);
    assert_eq!(doc["requests"]["completed"], 200);
    assert!(doc["latency"]["percentiles"]["p99"].as_f64().unwrap() > 0.0);
}

#[test]
fn failing_run_matches_the_schema() {
    let server = Scripted::constant(b"garbage\r\n\r\n");
    let (_, summary) = run(&plan(&server.url(), 2, requests(4)));
    let doc: Value = serde_json::from_str(&to_json(&summary)).unwrap();
    validate(&doc);
    assert_eq!(doc["errors"][0]["class"], "parse");
    assert!(doc["latency"]["percentiles"]["p50"].is_null());
}

#[test]
fn the_schema_rejects_a_wrong_document() {
    // Guards the guard: a validator that accepts anything would make the tests above useless.
    let server = Scripted::constant(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    let (_, summary) = run(&plan(&server.url(), 1, requests(1)));
    let mut doc: Value = serde_json::from_str(&to_json(&summary)).unwrap();
    doc["requests"]["surprise"] = Value::from(1);
    let result = std::panic::catch_unwind(|| validate(&doc));
    assert!(result.is_err());
}

#[test]
fn save_writes_the_same_json_that_format_json_prints() {
    let server = builtin(ServeConfig::default());
    let dir = std::env::temp_dir().join(format!("spate-save-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("result.json");
    let out = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args([
            "-n",
            "100",
            "-c",
            "2",
            "--threads",
            "1",
            "--format",
            "json",
            "--save",
        ])
        .arg(&file)
        .arg(server.url())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let saved: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(printed, saved);
    validate(&saved);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no temporary file is left behind: {leftovers:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unreachable_target_still_prints_a_json_result_that_says_why() {
    // A port nobody listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = std::env::temp_dir().join(format!("spate-unreachable-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("r.json");
    let out = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(["-n", "10", "-c", "2", "--format", "json", "--save"])
        .arg(&file)
        .arg(format!("http://127.0.0.1:{port}/"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let printed: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    validate(&printed);
    assert_eq!(printed["error"]["kind"], "unreachable");
    let message = printed["error"]["message"].as_str().unwrap();
    assert!(stderr.contains(message), "{stderr} / {message}");
    assert!(message.contains("refused"), "{message}");
    assert_eq!(printed["requests"]["completed"], 0);
    assert_eq!(printed["connections"]["established"], 0);
    let saved: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(printed, saved);
    std::fs::remove_dir_all(&dir).unwrap();

    // The text report has nothing to show: stderr says why, stdout stays empty.
    let out = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(["-n", "10", "-c", "2"])
        .arg(format!("http://127.0.0.1:{port}/"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
}

#[test]
fn a_healthy_run_says_error_null() {
    let server = builtin(ServeConfig::default());
    let (_, summary) = run(&plan(&server.url(), 1, requests(5)));
    let doc: Value = serde_json::from_str(&to_json(&summary)).unwrap();
    assert!(doc["error"].is_null());
    assert!(doc.as_object().unwrap().contains_key("error"));
}
