//! The JSON result against docs/output-schema.json, for a healthy run and for one with failures,
//! and `--save` writing the same document.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use spate::report::to_json;
use spate::serve::ServeConfig;

use crate::support::{Scripted, builtin, plan, requests, run};

pub fn validate(doc: &Value) {
    validate_against("docs/output-schema.json", doc);
}

/// `doc` against the schema at `schema` (relative to the repository).
pub fn validate_against(schema: &str, doc: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(schema);
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let index = compiler
        .compile(path.to_str().unwrap(), &mut schemas)
        .expect("schema compiles");
    if let Err(e) = schemas.validate(doc, index) {
        panic!("result does not match {schema}:\n{e:#}\n{doc:#}");
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

/// Every kind of finding and of limit, each validated against the schema's definition of it:
/// the `match` without a wildcard makes a new kind fail to compile here until it is listed.
#[test]
fn every_finding_kind_matches_the_schema() {
    use spate::analysis::{ClassCount, CodeCount, Finding as F, Limit as L, Spread, TailPhase};
    let limits = vec![
        L::BusyPollAllCores {
            threads: 4,
            cores: 4,
        },
        L::CpuBound {
            threads: 1,
            cpu_busy: 97.0,
        },
        L::IdleConnections {
            busy: 60.0,
            streams: 8,
        },
        L::ConnectionsShort {
            established: 3,
            requested: 10,
            first_error: Some("refused".into()),
            not_open: 2,
            setup_ms: 10.0,
        },
        L::BelowRate {
            achieved: 90.0,
            target: 100.0,
        },
        L::Stalled {
            ms: 200.0,
            at_s: 1.0,
        },
        L::FileLimit { nofile: None },
        L::OutOfPorts,
    ];
    let findings = vec![
        F::DidNotStart {
            message: "refused".into(),
        },
        F::NothingSent,
        F::Redirects {
            count: 1,
            share: 0.5,
            followed: false,
        },
        F::Resent { times: 2 },
        F::NoResponse { interrupted: 3 },
        F::NoErrors,
        F::Failed {
            share: 1.0,
            classes: vec![ClassCount {
                class: "timeout".into(),
                count: 1,
            }],
        },
        F::ErrorStatus {
            share: 2.0,
            top: vec![CodeCount {
                code: 503,
                count: 4,
            }],
        },
        F::HighErrorRate { share: 3.0 },
        F::NoLatency,
        F::Spread {
            band: Spread::Wide,
            p50: 1.0,
            p99: 9.0,
            ratio: 9.0,
        },
        F::Mixed { kinds: 3 },
        F::Queueing { ratio: 4.0 },
        F::LongTail { ratio: 3.0 },
        F::Outliers { ratio: 5.0 },
        F::RareOutliers { ratio: 6.0 },
        F::NoTail {
            p95_p50: 1.1,
            p99_p95: 1.2,
            p99_9_p99: 1.3,
            p99_99_p99_9: None,
        },
        F::TailPhase {
            phase: TailPhase::SendLagSpateStalled,
            p99: 1.0,
            latency_p99: 2.0,
        },
        F::TailInConnects {
            count: 5,
            completed: 100,
            share: 5.0,
            p99: 1.0,
            latency_p99: 2.0,
        },
        F::SpateStalled {
            gap_ms: 300.0,
            at_s: 1.0,
            own_ms: 280.0,
            own_at_s: 1.1,
        },
        F::ServerStalled {
            gap_ms: 2000.0,
            at_s: 4.0,
            open_model: true,
        },
        F::StreamPace {
            first_data_ms: 200.0,
            gap_ms: 20.0,
            after_first_ms: 100.0,
            grpc: false,
        },
        F::StreamPace {
            first_data_ms: 2.0,
            gap_ms: 20.0,
            after_first_ms: 100.0,
            grpc: true,
        },
        F::StreamStalled {
            longest_ms: 400.0,
            gap_ms: 20.0,
            grpc: true,
        },
        F::Starved {
            starved: 1,
            established: 4,
            median_answered: 20,
        },
        F::Uneven {
            min: 1,
            max: 10,
            median: 5,
        },
        F::BehindSchedule {
            dropped: 1,
            missed: 2,
            scheduled: 100,
            achieved: 97.0,
            target: 100.0,
        },
        F::LateSends {
            lag_p99: Some(3.0),
            achieved: 100.0,
            target: 100.0,
        },
        F::OnSchedule {
            lag_p99: None,
            achieved: 100.0,
            target: 100.0,
        },
        F::StoppedEarly { elapsed_s: 2.5 },
        F::InFlight { interrupted: 7 },
        F::BusyPolled { cpu_busy: 100.0 },
        F::CpuUse {
            threads: 2,
            cpu_busy: 40.0,
        },
        F::CpuUnknown,
        F::ScriptCost {
            us_per_request: 1.5,
            cpu_share: None,
        },
        F::ConnectionsLoaded {
            busy: 99.0,
            streams: 1,
        },
        F::PortsExhausted { connects: 12 },
        F::SpateLimited { limits },
        F::NotLimited,
        F::BreakingPoint(spate::analysis::BreakingPoint {
            t_s: 3.0,
            target_rate: Some(214.0),
            last_held_rate: Some(196.0),
            target_connections: None,
            last_held_connections: None,
            evidence: spate::analysis::Evidence::Rate {
                completed: 190,
                scheduled: 214,
            },
        }),
        F::BreakingPoint(spate::analysis::BreakingPoint {
            t_s: 5.0,
            target_rate: None,
            last_held_rate: None,
            target_connections: Some(6.0),
            last_held_connections: Some(4.5),
            evidence: spate::analysis::Evidence::Throughput {
                completed: 400,
                expected: 600,
            },
        }),
    ];
    let kinds = findings.iter().map(covered).collect::<Vec<_>>();
    let distinct: std::collections::BTreeSet<_> = kinds.iter().collect();
    assert_eq!(distinct.len(), 39, "one of each kind: {kinds:?}");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/output-schema.json");
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let index = compiler
        .compile(&format!("{}#/$defs/finding", path.display()), &mut schemas)
        .expect("the finding definition compiles");
    for f in &findings {
        let doc = serde_json::to_value(f).unwrap();
        if let Err(e) = schemas.validate(&doc, index) {
            panic!("{doc} does not match the schema's finding:\n{e:#}");
        }
    }
    let mut wrong = serde_json::to_value(F::Queueing { ratio: 4.0 }).unwrap();
    wrong["surprise"] = Value::from(1);
    assert!(schemas.validate(&wrong, index).is_err(), "the guard guards");
}

fn covered(f: &spate::analysis::Finding) -> &'static str {
    use spate::analysis::{Finding as F, Limit as L};
    match f {
        F::BreakingPoint(_) => "breaking_point",
        F::DidNotStart { .. } => "did_not_start",
        F::NothingSent => "nothing_sent",
        F::Redirects { .. } => "redirects",
        F::Resent { .. } => "resent",
        F::NoResponse { .. } => "no_response",
        F::NoErrors => "no_errors",
        F::Failed { .. } => "failed",
        F::ErrorStatus { .. } => "error_status",
        F::HighErrorRate { .. } => "high_error_rate",
        F::NoLatency => "no_latency",
        F::Spread { .. } => "spread",
        F::Mixed { .. } => "mixed",
        F::Queueing { .. } => "queueing",
        F::LongTail { .. } => "long_tail",
        F::Outliers { .. } => "outliers",
        F::RareOutliers { .. } => "rare_outliers",
        F::NoTail { .. } => "no_tail",
        F::TailPhase { .. } => "tail_phase",
        F::TailInConnects { .. } => "tail_in_connects",
        F::SpateStalled { .. } => "spate_stalled",
        F::ServerStalled { .. } => "server_stalled",
        F::StreamPace { .. } => "stream_pace",
        F::StreamStalled { .. } => "stream_stalled",
        F::Starved { .. } => "starved",
        F::Uneven { .. } => "uneven",
        F::BehindSchedule { .. } => "behind_schedule",
        F::LateSends { .. } => "late_sends",
        F::OnSchedule { .. } => "on_schedule",
        F::StoppedEarly { .. } => "stopped_early",
        F::InFlight { .. } => "in_flight",
        F::BusyPolled { .. } => "busy_polled",
        F::CpuUse { .. } => "cpu_use",
        F::CpuUnknown => "cpu_unknown",
        F::ScriptCost { .. } => "script_cost",
        F::ConnectionsLoaded { .. } => "connections_loaded",
        F::PortsExhausted { .. } => "ports_exhausted",
        F::SpateLimited { limits } => {
            // Every limit kind, the same way.
            for l in limits {
                match l {
                    L::BusyPollAllCores { .. }
                    | L::CpuBound { .. }
                    | L::IdleConnections { .. }
                    | L::ConnectionsShort { .. }
                    | L::BelowRate { .. }
                    | L::Stalled { .. }
                    | L::FileLimit { .. }
                    | L::OutOfPorts => {}
                }
            }
            "spate_limited"
        }
        F::NotLimited => "not_limited",
    }
}
