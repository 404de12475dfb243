//! --live-json: a line per second of the measured window, out while the run still goes (read
//! from a pipe before the process ends), each the report's timeline entry, and together the
//! report's counts of the window; to stdout (`-`) only beside --save, and with a connection
//! profile's targets as the report has them.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;
use spate::serve::ServeConfig;

use crate::support::{builtin, spate};

#[test]
fn each_second_is_a_line_while_the_run_goes_and_the_lines_are_the_timeline() {
    let server = builtin(ServeConfig::default());
    let url = format!("http://{}/", server.addr());
    let saved = std::env::temp_dir().join(format!("spate-live-json-{}.json", std::process::id()));
    let mut run = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(["--no-progress", "-c", "4", "-z", "4s", "--live-json", "-"])
        .args(["--save", saved.to_str().unwrap(), &url])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(run.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    // The first second's line came while the run went on.
    assert!(
        run.try_wait().unwrap().is_none(),
        "the run was over before its first line"
    );
    let mut got: Vec<Value> = vec![serde_json::from_str(&first).unwrap()];
    got.extend(lines.map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap()));
    assert!(run.wait().unwrap().success());
    let doc: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    let _ = std::fs::remove_file(&saved);
    // Nothing but the lines on stdout: they are the report's timeline, entry for entry.
    assert_eq!(got, doc["timeline"].as_array().unwrap().clone());
    assert_eq!(got.len(), 4, "{got:?}");
    let sum = |k: &str| got.iter().map(|e| e[k].as_u64().unwrap()).sum::<u64>();
    let window = doc["requests"]["completed"].as_u64().unwrap()
        - doc["totals"]["completed_in_drain"].as_u64().unwrap();
    assert_eq!(sum("completed"), window);
    assert!(window > 0);
}

#[test]
fn stdout_needs_the_report_kept_elsewhere_and_a_file_is_a_file_of_lines() {
    let server = builtin(ServeConfig::default());
    let url = format!("http://{}/", server.addr());
    let out = spate(&["-n", "10", "--live-json", "-", &url]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("keep the report with --save FILE"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // To a file, beside the report on stdout; a connection profile's targets as the report's.
    let file = std::env::temp_dir().join(format!("spate-live-json-{}.jsonl", std::process::id()));
    let out = spate(&[
        "--no-progress",
        "--format",
        "json",
        "--stages",
        "0s:2,2s:2",
        "--live-json",
        file.to_str().unwrap(),
        &url,
    ]);
    crate::support::succeeded(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let _ = std::fs::remove_file(&file);
    let got: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got, doc["timeline"].as_array().unwrap().clone());
    assert!(
        got.iter().all(|e| e["target_connections"] == 2.0),
        "{got:?}"
    );
    // The same file twice is refused before anything runs.
    let out = spate(&[
        "-n",
        "1",
        "--live-json",
        file.to_str().unwrap(),
        "--save",
        file.to_str().unwrap(),
        &url,
    ]);
    assert_eq!(out.status.code(), Some(2));
}
