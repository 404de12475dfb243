//! --metrics-listen against Debian's Prometheus scraping every second, and its promtool: a
//! scrape in the middle of a run is valid exposition; every value Prometheus stored of the
//! responses counter while the run went is the sum of the report's seconds up to one of them
//! (so its rate is the report's); the values it holds after the run are the report's own,
//! the latency histogram's count among them; and every query of the Grafana dashboard runs. Only GET /metrics is served. Prometheus is
//! required in CI (SPATE_REQUIRE_TOOLS); elsewhere the test says it was skipped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use spate::serve::ServeConfig;

use crate::support::{Child, ScratchDir, builtin, free_addr, have, spawn_listening};

/// `GET path` of `addr` over HTTP/1.0: the status line's code and the body.
fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head[9..12].parse().unwrap(), body.to_owned())
}

/// `s` percent-encoded for a query string.
fn encoded(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// spate with `args`, serving its metrics on a port of its own choosing until a scrape has seen
/// the run over (20 s at the most), and where.
fn serving(args: &[&str]) -> (Child, SocketAddr) {
    let mut run = Child(
        Command::new(env!("CARGO_BIN_EXE_spate"))
            .args(["--no-progress", "--metrics-listen", "127.0.0.1:0"])
            .args(["--metrics-linger", "20s"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let at = endpoint_of(&mut run);
    (run, at)
}

/// Where spate says its metrics are, from its stderr.
fn endpoint_of(run: &mut Child) -> SocketAddr {
    let lines = BufReader::new(run.0.stderr.take().unwrap()).lines();
    for line in lines {
        let line = line.unwrap();
        if let Some(addr) = line
            .strip_prefix("spate: metrics at http://")
            .and_then(|s| s.strip_suffix("/metrics"))
        {
            return addr.parse().unwrap();
        }
    }
    panic!("spate never said where its metrics are");
}

/// One value of a Prometheus instant query.
fn query(prom: SocketAddr, q: &str) -> Option<f64> {
    let (_, body) = get(prom, &format!("/api/v1/query?query={}", encoded(q)));
    let doc: Value = serde_json::from_str(&body).unwrap();
    doc["data"]["result"][0]["value"][1]
        .as_str()
        .map(|v| v.parse().unwrap())
}

#[test]
fn prometheus_holds_the_reports_figures_and_each_second_as_it_closed() {
    if !have("prometheus") || !have("promtool") {
        return;
    }
    let server = builtin(ServeConfig::default());
    let url = format!("http://{}/", server.addr());
    let dir = ScratchDir::new("metrics");
    let saved = dir.0.join("run.json");
    // The endpoint on a port of its own choosing, which spate says.
    let (mut run, metrics) = serving(&[
        "-c",
        "2",
        "-z",
        "10s",
        "--save",
        saved.to_str().unwrap(),
        &url,
    ]);
    let prom = free_addr();
    std::fs::write(
        dir.0.join("prometheus.yml"),
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: spate\n    static_configs:\n      - targets: ['{metrics}']\n"
        ),
    )
    .unwrap();
    let _prometheus = Child(spawn_listening(
        Command::new("prometheus")
            .arg(format!(
                "--config.file={}",
                dir.0.join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.0.join("data").display()
            ))
            .arg(format!("--web.listen-address={prom}")),
        prom,
    ));
    // A scrape while the run goes is exposition promtool finds sound; only /metrics is served.
    let (code, body) = get(metrics, "/metrics");
    assert_eq!(code, 200);
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    check
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let checked = check.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    assert_eq!(get(metrics, "/").0, 404);
    // The run ends once Prometheus has scraped its last figures.
    let t = Instant::now();
    let status = run.0.wait().unwrap();
    assert!(status.success());
    assert!(
        t.elapsed() < Duration::from_secs(19),
        "spate waited out its linger"
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    let completed = doc["requests"]["completed"].as_f64().unwrap();
    // Prometheus holds the report's figures (its newest sample of each series).
    let latest = |q: &str| query(prom, q).unwrap_or_else(|| panic!("no value of {q}"));
    assert_eq!(latest("sum(spate_responses_total)"), completed);
    assert_eq!(latest("spate_request_duration_seconds_count"), completed);
    assert_eq!(
        latest("spate_requests_sent_total"),
        doc["requests"]["attempted"].as_f64().unwrap()
    );
    assert_eq!(latest("sum(spate_requests_failed_total)"), 0.0);
    assert_eq!(latest("spate_run_over"), 1.0);
    // Every value it stored while the run went is the report's seconds added up to one of them.
    let mut sums = vec![0.0];
    for e in doc["timeline"].as_array().unwrap() {
        sums.push(sums.last().unwrap() + e["completed"].as_f64().unwrap());
    }
    let (_, body) = get(
        prom,
        &format!(
            "/api/v1/query?query={}",
            encoded("spate_responses_total{status_class=\"2xx\"}[1m]")
        ),
    );
    let doc: Value = serde_json::from_str(&body).unwrap();
    let values: Vec<f64> = doc["data"]["result"][0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v[1].as_str().unwrap().parse().unwrap())
        .collect();
    // Every query of the Grafana dashboard is one Prometheus takes, and the main ones have data.
    let dashboard: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/grafana-dashboard.json"
        ))
        .unwrap(),
    )
    .unwrap();
    for panel in dashboard["panels"].as_array().unwrap() {
        for t in panel["targets"].as_array().unwrap() {
            let expr = t["expr"]
                .as_str()
                .unwrap()
                .replace("$run_id", ".*")
                .replace("$__rate_interval", "1m");
            let (code, body) = get(prom, &format!("/api/v1/query?query={}", encoded(&expr)));
            assert_eq!(code, 200, "{expr}: {body}");
            let doc: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(doc["status"], "success", "{expr}: {body}");
            if panel["title"] == "Responses by status class"
                || panel["title"] == "Latency percentiles"
            {
                assert!(
                    !doc["data"]["result"].as_array().unwrap().is_empty(),
                    "{expr}: {body}"
                );
            }
        }
    }
    let during: Vec<f64> = values.iter().copied().filter(|&v| v < completed).collect();
    assert!(during.len() >= 2, "{values:?}");
    assert!(
        during.iter().all(|v| sums.contains(v)),
        "{during:?} against {sums:?}"
    );
}

/// Scrapes `addr` until the run is over there; the last scrape.
fn scrape_when_over(addr: SocketAddr) -> String {
    let t = Instant::now();
    loop {
        let (code, body) = get(addr, "/metrics");
        assert_eq!(code, 200);
        if body.contains("spate_run_over{")
            && body
                .lines()
                .any(|l| l.starts_with("spate_run_over{") && l.ends_with(" 1"))
        {
            return body;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "the run never ended");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The value of the series `name` whose labels contain `with`.
fn value(body: &str, name: &str, with: &str) -> u64 {
    body.lines()
        .find(|l| l.starts_with(&format!("{name}{{")) && l.contains(with))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} with {with} in\n{body}"))
}

#[test]
fn a_request_lists_rows_are_series_of_their_own_and_no_header_is_shown() {
    let server = builtin(ServeConfig::default());
    let addr = server.addr();
    let dir = ScratchDir::new("metrics-list");
    let saved = dir.0.join("run.json");
    let (a, b) = (format!("http://{addr}/a"), format!("http://{addr}/b?x=1"));
    let (mut run, metrics) = serving(&[
        "-n",
        "41",
        "-c",
        "3",
        "-H",
        "Authorization: Bearer secret",
        "--save",
        saved.to_str().unwrap(),
        &a,
        &b,
    ]);
    let body = scrape_when_over(metrics);
    assert!(run.0.wait().unwrap().success());
    let doc: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert!(!body.contains("secret"), "{body}");
    for row in doc["per_url"].as_array().unwrap() {
        let name = row["request"].as_str().unwrap();
        let with = format!("request=\"{name}\"");
        assert_eq!(
            value(&body, "spate_request_responses_total", &with),
            row["completed"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(value(&body, "spate_request_failures_total", &with), 0);
    }
    assert_eq!(
        value(&body, "spate_responses_total", "status_class=\"2xx\""),
        41
    );
}
