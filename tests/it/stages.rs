//! `--stages` against the built-in server: each second of a rate profile schedules the curve's
//! area (ramps, a plateau, a jump), nothing is sent after the last stage, a backlog the server
//! cannot take is missed rather than sent late, and bad profiles are one line and exit 2.
//! Against Debian's nginx, the requests it logged each second follow a rate profile, and the
//! connections it saw each second follow a connection profile (nginx is required in CI).
//! Against a server of known capacity, a ramp of rates or of connections across it names the
//! breaking point there.

use std::time::Duration;

use serde_json::Value;
use spate::serve::{ServeConfig, Server};

use crate::nginx::Nginx;
use crate::support::{Child, free_addr, have, spate, spate_json, spawn_listening, test_python};

fn server(delay: Duration) -> Server {
    Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        delay,
        ..ServeConfig::default()
    })
    .unwrap()
}

/// tests/it/servers/capacity.py serving 4 requests at a time for 20 ms each (about 200 a
/// second), and its address; `None` (skipped) without the test venv.
fn capacity_server() -> Option<(Child, std::net::SocketAddr)> {
    let python = test_python("asyncio")?;
    let addr = free_addr();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/servers/capacity.py");
    let server = Child(spawn_listening(
        std::process::Command::new(python).args([script, &addr.port().to_string(), "4", "20"]),
        addr,
    ));
    Some((server, addr))
}

fn per_second(doc: &Value, key: &str) -> Vec<u64> {
    doc["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[key].as_u64().unwrap())
        .collect()
}

#[test]
fn each_second_schedules_the_curves_area_and_nothing_goes_after_the_end() {
    let s = server(Duration::ZERO);
    // 0 -> 100/s over 1 s (50), 100 -> 300/s (200), a jump to a 50/s plateau (50), 50 -> 0 (25).
    let dir = std::env::temp_dir().join(format!("spate-it-stages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("stages.csv");
    let doc = spate_json(&[
        "-c",
        "20",
        "--csv-stages",
        csv.to_str().unwrap(),
        "--stages",
        "1s:100/s,1s:300/s,0s:50/s,1s:50/s,1s:0/s",
        &s.url(),
    ]);
    crate::schema::validate(&doc);
    assert_eq!(doc["config"]["model"], "open");
    assert_eq!(
        doc["config"]["stages"],
        "1s:100/s,1s:300/s,0s:50/s,1s:50/s,1s:0/s"
    );
    assert_eq!(doc["config"]["duration_s"], 4.0);
    assert!(
        (doc["config"]["rate"].as_f64().unwrap() - 81.25).abs() < 1e-9,
        "the mean"
    );
    let m = &doc["open_model"];
    assert_eq!(m["scheduled"], 325, "{m}");
    assert_eq!(m["sent"], 325, "{m}");
    assert_eq!(doc["requests"]["completed"], 325);
    let scheduled = per_second(&doc, "scheduled");
    let sent = per_second(&doc, "sent");
    for (second, want) in [50.0, 200.0, 50.0, 25.0].into_iter().enumerate() {
        let got = scheduled[second] as f64;
        assert!(
            (got - want).abs() <= want * 0.01 + 1.0,
            "second {second}: {got} scheduled, the curve's area is {want}: {scheduled:?}"
        );
    }
    assert_eq!(
        sent.iter().skip(4).sum::<u64>(),
        0,
        "sent after the end: {sent:?}"
    );
    assert_eq!(sent.iter().sum::<u64>(), 325, "{sent:?}");
    // A row per stage but the jump, in the JSON and in the CSV as Python's csv reads it.
    let rows = doc["stages"].as_array().unwrap();
    let stages: Vec<u64> = rows.iter().map(|r| r["stage"].as_u64().unwrap()).collect();
    assert_eq!(stages, [1, 2, 4, 5]);
    let scheduled: Vec<u64> = rows
        .iter()
        .map(|r| r["scheduled"].as_u64().unwrap())
        .collect();
    assert_eq!(scheduled.iter().sum::<u64>(), 325, "{scheduled:?}");
    let ramp = (
        rows[1]["target_from"].as_f64(),
        rows[1]["target_to"].as_f64(),
    );
    assert_eq!(ramp, (Some(100.0), Some(300.0)));
    if crate::support::have("python3") {
        let read = crate::save::python_csv(&csv);
        assert_eq!(read.len(), 4);
        for (row, json) in read.iter().zip(rows) {
            assert_eq!(row["stage"], json["stage"].to_string());
            assert_eq!(row["scheduled"], json["scheduled"].to_string());
            assert_eq!(
                row["dropped"], "0",
                "the open model's accounting, stage by stage"
            );
            assert_eq!(
                row["lag_p99_ms"].as_str().unwrap().parse::<f64>().ok(),
                json["lag_p99_ms"].as_f64()
            );
            assert_eq!(
                row["target_to"].as_str().unwrap().parse::<f64>().ok(),
                json["target_to"].as_f64()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_backlog_at_the_end_is_missed_not_sent_late() {
    // One connection, 50 ms a response: at most 20 a second, against a profile of 100.
    let s = server(Duration::from_millis(50));
    let doc = spate_json(&["-c", "1", "--stages", "0s:100/s,1s:100/s", &s.url()]);
    let m = &doc["open_model"];
    let (scheduled, sent, missed) = (
        m["scheduled"].as_u64().unwrap(),
        m["sent"].as_u64().unwrap(),
        m["missed"].as_u64().unwrap(),
    );
    assert_eq!(scheduled, 100, "{m}");
    assert_eq!(sent + missed, 100, "{m}");
    assert!((15..=25).contains(&sent), "{m}");
    let sends = per_second(&doc, "sent");
    assert_eq!(
        sends.iter().skip(1).sum::<u64>(),
        0,
        "sent after the end: {sends:?}"
    );
}

#[test]
fn bad_profiles_are_one_line_and_exit_2() {
    for (args, says) in [
        (&["--stages", "10s:100/s,10s:10"][..], "mixes kinds"),
        (&["--stages", "0s:100/s"][..], "last 0s"),
        (&["--stages", "10s:0/s"][..], "sends nothing"),
        (&["--stages", "10s:30", "-c", "5"][..], "-c"),
        (&["--stages", "10s:30", "--max-lag", "1s"][..], "open model"),
        (
            &["--csv-stages", "/tmp/spate-never.csv"][..],
            "--csv-stages",
        ),
    ] {
        let mut all = args.to_vec();
        all.push("http://127.0.0.1:9/");
        let out = spate(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // -z, -n and -q say what the stages already say.
    for flag in [["-z", "5s"], ["-n", "100"], ["-q", "10"]] {
        let out = spate(&[
            "--stages",
            "1s:5/s",
            flag[0],
            flag[1],
            "http://127.0.0.1:9/",
        ]);
        assert_eq!(out.status.code(), Some(2), "{flag:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--stages"),
            "{flag:?}"
        );
    }
}

#[test]
fn the_requests_nginx_logged_each_second_follow_the_profile() {
    if !have("nginx") {
        return;
    }
    let nginx = Nginx::start(
        "stages",
        "",
        "log_format at '$msec';",
        "access_log {dir}/at.log at;\n    location / { return 200 \"ok\\n\"; }",
    );
    // 0 -> 200/s over 2 s (50, then 150), 200/s for 1 s (200), then down to 0 over 1 s (100).
    let doc = spate_json(&[
        "-c",
        "16",
        "--stages",
        "2s:200/s,1s:200/s,1s:0/s",
        &format!("http://{}/", nginx.addr),
    ]);
    assert_eq!(doc["open_model"]["scheduled"], 500, "{}", doc["open_model"]);
    let at: Vec<f64> = nginx
        .log("at.log")
        .iter()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(at.len(), 500, "nginx logged every request");
    // Seconds from the first request nginx logged, which was intended at the start.
    let first = at.iter().copied().fold(f64::INFINITY, f64::min);
    let mut per_second = [0u64; 5];
    for t in &at {
        per_second[((t - first) as usize).min(4)] += 1;
    }
    for (second, want) in [50.0, 150.0, 200.0, 100.0].into_iter().enumerate() {
        let got = per_second[second] as f64;
        assert!(
            (got - want).abs() <= want * 0.02 + 2.0,
            "second {second}: nginx logged {got}, the profile's area is {want}: {per_second:?}"
        );
    }
    assert_eq!(per_second[4], 0, "after the end: {per_second:?}");
}

/// A ramp across a server's capacity (4 requests at a time, 20 ms each: 200 a second) breaks
/// where the capacity is: the breaking point's rate is within 15 % of 200, the seconds before
/// it held, and the report says it in JSON, the stage table and one sentence.
#[test]
fn a_ramp_across_a_servers_capacity_names_its_breaking_point() {
    let Some((_server, addr)) = capacity_server() else {
        return;
    };
    // 150/s, then up by about 18/s each second to 260/s.
    let doc = spate_json(&[
        "-c",
        "100",
        "--timeout",
        "5s",
        "--stages",
        "0s:150/s,6s:260/s",
        &format!("http://{addr}/"),
    ]);
    crate::schema::validate(&doc);
    let b = &doc["breaking_point"];
    let rate = b["target_rate"]
        .as_f64()
        .unwrap_or_else(|| panic!("no breaking point: {doc}"));
    assert!((170.0..=230.0).contains(&rate), "{b}");
    assert_eq!(b["evidence"]["kind"], "rate", "{b}");
    let held = b["last_held_rate"].as_f64().unwrap();
    assert!(held < rate && held >= 150.0, "{b}");
    assert!(
        doc["insight"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().starts_with("Breaking point: ")),
        "{}",
        doc["insight"]
    );
    let stages = doc["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 1, "the jump has no row: {stages:?}");
    assert_eq!(stages[0]["target_from"], 150.0);
    assert_eq!(stages[0]["target_to"], 260.0);
    let achieved = stages[0]["achieved_rate"].as_f64().unwrap();
    assert!(
        achieved < 215.0,
        "the server's capacity bounds it: {achieved}"
    );
}

/// nginx (in front of the built-in server, which answers in 10 ms) sees the connections of a
/// profile 4 -> 32 -> 8: each second, the connections it logged requests on are within the
/// profile's levels in that second, never more; spate's own timeline agrees at each second's
/// end; and nginx logged every response spate counted.
#[test]
fn the_connections_nginx_saw_each_second_follow_a_connection_profile() {
    if !have("nginx") {
        return;
    }
    let backend = server(Duration::from_millis(10));
    let nginx = Nginx::start(
        "stages-conns",
        "",
        &format!(
            "log_format at '$msec $connection';\n  upstream up {{ server {}; keepalive 64; }}",
            backend.addr()
        ),
        "access_log {dir}/at.log at;\n    location / { proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection \"\"; }",
    );
    // 4 for a second, up to 32 over 2 s, 32 for a second, down to 8 over 2 s.
    let profile = "0s:4,1s:4,2s:32,1s:32,2s:8";
    let doc = spate_json(&[
        "--threads",
        "2",
        "--stages",
        profile,
        &format!("http://{}/", nginx.addr),
    ]);
    crate::schema::validate(&doc);
    assert_eq!(doc["config"]["model"], "closed");
    assert_eq!(
        doc["config"]["connections"], 32,
        "the profile's highest target"
    );
    let stages = spate::plan::Stages::parse(profile).unwrap();
    // The levels a second went through: from its start to its end (the line is monotone in
    // each second here).
    let levels = |s: usize| {
        let at = |t: f64| stages.connections_at(Duration::from_secs_f64(t));
        let (a, b) = (at(s as f64), at(s as f64 + 1.0 - 1e-6));
        (a.min(b), a.max(b))
    };
    // spate's timeline: the connections open at each second's end, and the mean target.
    let timeline = doc["timeline"].as_array().unwrap();
    assert_eq!(timeline.len(), 6, "{timeline:?}");
    for (s, e) in timeline.iter().enumerate() {
        let open = e["connections_open"].as_u64().unwrap();
        let end =
            stages.connections_at(Duration::from_secs(s as u64 + 1) - Duration::from_millis(1));
        assert!(
            open.abs_diff(end) <= 1,
            "second {s}: {open} open, the profile {end}"
        );
        let target = e["target_connections"].as_f64().unwrap();
        let (lo, hi) = levels(s);
        assert!(
            target >= lo as f64 && target <= hi as f64,
            "second {s}: {target}"
        );
    }
    // nginx's: the distinct connections it logged requests on, second by second from the
    // first request (sent at the start).
    let lines = nginx.log("at.log");
    let at: Vec<(f64, u64)> = lines
        .iter()
        .map(|l| {
            let (t, c) = l.split_once(' ').unwrap();
            (t.parse().unwrap(), c.parse().unwrap())
        })
        .collect();
    assert_eq!(
        at.len() as u64,
        doc["requests"]["completed"].as_u64().unwrap(),
        "nginx logged every response spate counted"
    );
    let first = at.iter().map(|a| a.0).fold(f64::INFINITY, f64::min);
    let mut seen = vec![std::collections::BTreeSet::new(); 7];
    for (t, c) in &at {
        seen[((t - first) as usize).min(6)].insert(*c);
    }
    for (s, conns) in seen.iter().enumerate().take(6) {
        let (lo, hi) = levels(s);
        let n = conns.len() as u64;
        assert!(
            n + 1 >= lo && n <= hi + 1,
            "second {s}: nginx saw {n} connections, the profile went {lo}..{hi}: {:?}",
            seen.iter().map(|c| c.len()).collect::<Vec<_>>()
        );
    }
    assert!(seen[0].len() == 4, "the first second holds 4");
    assert!(
        seen[3].len() >= 31,
        "the plateau holds 32: {}",
        seen[3].len()
    );
    // Nothing is sent after the end: a response logged past it is one in flight there, which
    // nginx logs when it completes (the first logged response came a latency after the start,
    // the last may have taken longer).
    let late: Vec<f64> = at
        .iter()
        .map(|a| a.0 - first)
        .filter(|&t| t >= 6.25)
        .collect();
    assert!(late.is_empty(), "nothing after the end: {late:?}");
}

/// A ramp of connections across a server that serves 4 at a time (20 ms each) breaks where a
/// fifth connection stops bringing more responses: between 4 and 5 connections.
#[test]
fn a_ramp_of_connections_across_a_servers_capacity_names_its_breaking_point() {
    let Some((_server, addr)) = capacity_server() else {
        return;
    };
    // From 1 to 8 connections over 10 s: 0.7 more each second.
    let csv = std::env::temp_dir().join(format!("spate-it-conns-{}.csv", std::process::id()));
    let doc = spate_json(&[
        "--threads",
        "1",
        "--csv-timeline",
        csv.to_str().unwrap(),
        "--stages",
        "0s:1,10s:8",
        &format!("http://{addr}/"),
    ]);
    crate::schema::validate(&doc);
    // The CSV's last column is each second's target, as the JSON has it.
    let text = std::fs::read_to_string(&csv).unwrap();
    let _ = std::fs::remove_file(&csv);
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let column = header
        .iter()
        .position(|c| *c == "target_connections")
        .unwrap();
    let targets: Vec<f64> = text
        .lines()
        .skip(1)
        .map(|l| {
            l.trim_end()
                .split(',')
                .nth(column)
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    let json: Vec<f64> = doc["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["target_connections"].as_f64().unwrap())
        .collect();
    assert_eq!(targets, json);
    let b = &doc["breaking_point"];
    let at = b["target_connections"]
        .as_f64()
        .unwrap_or_else(|| panic!("no breaking point: {doc}"));
    assert!((4.0..=5.0).contains(&at), "{b}");
    assert_eq!(b["evidence"]["kind"], "throughput", "{b}");
    assert!(b["target_rate"].is_null(), "{b}");
    let held = b["last_held_connections"].as_f64().unwrap();
    assert!(held < at && held >= 3.0, "{b}");
    let rows = doc["stages"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (
            rows[0]["target_from"].as_f64(),
            rows[0]["target_to"].as_f64()
        ),
        (Some(1.0), Some(8.0))
    );
    assert!(rows[0]["scheduled"].is_null());
}

/// `--slo` judges each stage from its own seconds: a ramp from 0 misses a rate target that the
/// plateau after it meets, while the run as a whole misses it (exit 3).
#[test]
fn each_stage_is_judged_on_the_slo_in_the_json_and_the_table() {
    let s = server(Duration::ZERO);
    let dir = std::env::temp_dir().join(format!("spate-it-stage-slo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("run.json");
    let out = spate(&[
        "--no-progress",
        "-c",
        "4",
        "--stages",
        "1s:60/s,1s:60/s",
        "--slo",
        "rps=50,p99=5s",
        "--save",
        json.to_str().unwrap(),
        &s.url(),
    ]);
    assert_eq!(out.status.code(), Some(3), "the run's 45/s misses 50/s");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    crate::schema::validate(&doc);
    let judged = doc["stage_thresholds"].as_array().unwrap();
    assert_eq!(judged.len(), 2, "{judged:?}");
    assert_eq!(
        (judged[0]["stage"].as_u64(), judged[0]["pass"].as_bool()),
        (Some(1), Some(false))
    );
    assert_eq!(
        (judged[1]["stage"].as_u64(), judged[1]["pass"].as_bool()),
        (Some(2), Some(true))
    );
    let rps = &judged[0]["thresholds"][1];
    assert_eq!(
        (rps["name"].as_str(), rps["pass"].as_bool()),
        (Some("rps"), Some(false))
    );
    assert_eq!(rps["measured"], doc["stages"][0]["achieved_rate"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Stages"))
        .skip(2)
        .take(2)
        .collect();
    assert!(rows[0].ends_with("FAIL rps"), "{rows:?}");
    assert!(rows[1].ends_with("pass"), "{rows:?}");
    // Read back from the file, the verdicts are the file's.
    let again = spate(&["report", "--format", "json", json.to_str().unwrap()]);
    let back: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(back["stage_thresholds"], doc["stage_thresholds"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--warmup` before a profile holds its first stage's target for the warm-up, not recorded;
/// the measured profile then starts as written.
#[test]
fn a_warm_up_holds_the_first_target_then_the_profile_runs_as_written() {
    let s = server(Duration::ZERO);
    let doc = spate_json(&[
        "-c",
        "4",
        "--warmup",
        "1s",
        "--stages",
        "1s:100/s,1s:100/s",
        &s.url(),
    ]);
    crate::schema::validate(&doc);
    assert_eq!(s.requests(), 250, "100 in the warm-up, then 50 and 100");
    assert_eq!(doc["config"]["warmup_requests"], 100);
    assert_eq!(doc["open_model"]["scheduled"], 150);
    assert_eq!(per_second(&doc, "scheduled"), [50, 100]);
    assert_eq!(doc["requests"]["completed"], 150);
}
