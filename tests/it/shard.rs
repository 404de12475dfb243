//! `--shard` and `--start-at` end to end: shards run as separate processes at once against one
//! built-in server, whose own count must equal the job's; each starts at the instant given; a
//! shard that is ready too late sends nothing and exits 4; bad input is one line and exit 2.

use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;
use spate::serve::ServeConfig;

use crate::support::{builtin, spate, usage_error};

/// Unix milliseconds `ms` from now.
pub fn in_ms(ms: u64) -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    (now.as_millis() as u64 + ms).to_string()
}

/// Runs `count` shards of `args` at once, all starting at one instant (each says which it is
/// in an `X-Shard` header); their JSON results.
pub fn shards(count: u32, args: &[&str], url: &str) -> Vec<Value> {
    shards_at(count, args, url, &in_ms(1_500))
}

/// As [`shards`], starting at `at` (unix ms).
pub fn shards_at(count: u32, args: &[&str], url: &str, at: &str) -> Vec<Value> {
    let children: Vec<_> = (0..count)
        .map(|i| {
            let shard = format!("{i}/{count}");
            Command::new(env!("CARGO_BIN_EXE_spate"))
                .args(["--no-progress", "--format", "json", "--shard", &shard])
                .args(["-H", &format!("X-Shard: {i}")])
                .args(["--start-at", at, "--start-deadline", "5s"])
                .args(args)
                .arg(url)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            crate::support::succeeded(&out);
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            crate::schema::validate(&doc);
            doc
        })
        .collect()
}

fn sum(docs: &[Value], f: impl Fn(&Value) -> u64) -> u64 {
    docs.iter().map(f).sum()
}

#[test]
fn the_shards_of_a_count_run_send_the_jobs_requests_once_from_one_instant() {
    let server = builtin(ServeConfig::default());
    let docs = shards(4, &["-c", "10", "-n", "1003"], &server.url());
    assert_eq!(server.requests(), 1003, "the server's own count");
    assert_eq!(
        sum(&docs, |d| d["requests"]["completed"].as_u64().unwrap()),
        1003
    );
    assert_eq!(
        sum(&docs, |d| d["config"]["connections"].as_u64().unwrap()),
        10
    );
    let planned = docs[0]["config"]["start_at_unix_us"].as_u64().unwrap();
    for (i, d) in docs.iter().enumerate() {
        let c = &d["config"];
        assert_eq!(c["shard"]["index"], i as u64);
        assert_eq!(c["shard"]["count"], 4);
        assert_eq!(c["shard"]["job_connections"], 10);
        assert_eq!(c["shard"]["job_requests"], 1003);
        assert_eq!(c["start_at_unix_us"].as_u64(), Some(planned));
        // Not before the instant, whatever the machine's load made it after.
        let started = c["started_unix_us"].as_u64().unwrap();
        assert!(
            started >= planned,
            "shard {i} started early: {started} < {planned}"
        );
    }
}

#[test]
fn the_shards_of_an_open_model_run_keep_the_jobs_schedule() {
    let server = builtin(ServeConfig::default());
    let docs = shards(4, &["-c", "8", "-q", "400", "-n", "402"], &server.url());
    // The job's 402 requests, striped: shards 0 and 1 take 101, shards 2 and 3 take 100.
    let scheduled: Vec<u64> = docs
        .iter()
        .map(|d| d["open_model"]["scheduled"].as_u64().unwrap())
        .collect();
    assert_eq!(scheduled, [101, 101, 100, 100]);
    assert_eq!(server.requests(), 402);
    for d in &docs {
        assert_eq!(
            d["config"]["rate"], 100.0,
            "each shard sends a quarter of the rate"
        );
        assert_eq!(d["config"]["shard"]["job_rate"], 400.0);
        assert_eq!(d["open_model"]["rate_target"], 100.0);
    }
}

#[test]
fn a_shard_ready_after_its_deadline_sends_nothing_and_exits_4() {
    let server = builtin(ServeConfig::default());
    // Its one thread's script takes 300 ms of CPU before the connections are ready.
    let dir = std::env::temp_dir().join(format!("spate-it-shard-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("slow.lua");
    std::fs::write(
        &script,
        "function init(args)\n  local t = os.clock()\n  while os.clock() - t < 0.3 do end\nend\n",
    )
    .unwrap();
    let out = spate(&[
        "--no-progress",
        "--format",
        "json",
        "--threads",
        "1",
        "-c",
        "2",
        "-n",
        "10",
        "-s",
        script.to_str().unwrap(),
        "--start-at",
        "+50ms",
        "--start-deadline",
        "10ms",
        &server.url(),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("later than --start-deadline 10.000 ms allows: nothing was sent"),
        "{err}"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::schema::validate(&doc);
    assert_eq!(doc["error"]["kind"], "late");
    assert_eq!(server.requests(), 0);
}

#[test]
fn a_start_already_past_its_deadline_is_a_late_start_exit_4_with_nothing_opened() {
    let server =
        crate::support::Scripted::constant(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
    let out = spate(&[
        "--no-progress",
        "--format",
        "json",
        "-n",
        "10",
        "--start-at",
        "1000",
        "--start-deadline",
        "1s",
        &server.url(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("nothing was sent"), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::schema::validate(&doc);
    assert_eq!(doc["error"]["kind"], "late");
    assert_eq!((server.requests(), server.connections()), (0, 0));
}

#[test]
fn bad_shards_and_starts_are_one_line_and_exit_2() {
    let server = builtin(ServeConfig::default());
    let url = server.url();
    for (args, says) in [
        (vec!["--shard", "4/4"], "numbered from 0 to 3 of 4"),
        (vec!["--shard", "0/0"], "at least one shard"),
        (vec!["--shard", "two"], "is not I/N"),
        (
            vec!["-c", "3", "--shard", "3/4"],
            "leaves this one no connection",
        ),
        (
            vec!["--shard", "0/2", "--shard-from-env"],
            "cannot be used with",
        ),
        (vec!["--start-at", "noon"], "is not an instant"),
        (vec!["--start-deadline", "1s"], "--start-at"),
    ] {
        let all: Vec<&str> = ["-n", "10"]
            .into_iter()
            .chain(args)
            .chain([url.as_str()])
            .collect();
        let err = usage_error(&all);
        assert!(err.contains(says), "{all:?}: {err}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(["-n", "10", "--shard-from-env", &url])
        .env_remove("JOB_COMPLETION_INDEX")
        .env("SPATE_SHARDS", "3")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("JOB_COMPLETION_INDEX is not set"));
    assert_eq!(server.requests(), 0, "nothing sent");
}
