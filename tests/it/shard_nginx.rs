//! Shards against Debian's nginx, which no one here wrote: the requests its access log holds
//! are the merged count, the merged percentiles are those PyPI's hdrhistogram gives for the sum
//! of the shards' histograms, each shard's first request is logged at the start instant, the
//! merge's start skew agrees with the log's, and the open model's rate over four shards is the
//! rate of one process. The shards run as separate processes in network namespaces of their
//! own, nginx in another (tests/it/servers/shards_netns.sh, under `unshare -rn`), and on
//! loopback as well, which needs no privileges. nginx is required in CI, and so are the
//! namespaces.

use serde_json::Value;

use crate::nginx::Nginx;
use crate::shard::{in_ms, shards_at};
use crate::support::{have, spate, spate_json};

/// nginx logging, per request, the time it answered (s, ms resolution) and the X-Shard header.
fn nginx(tag: &str) -> Nginx {
    Nginx::start(
        tag,
        "",
        "log_format shard '$msec $http_x_shard';",
        "access_log {dir}/shard.log shard; location / { return 200 \"ok\\n\"; }",
    )
}

/// Each logged request's time (ms since the Unix epoch) and shard ("-" without the header).
fn logged(n: &Nginx) -> Vec<(f64, String)> {
    parse_log(&n.log("shard.log"))
}

fn parse_log(lines: &[String]) -> Vec<(f64, String)> {
    lines
        .iter()
        .filter_map(|l| {
            let (t, shard) = l.split_once(' ')?;
            Some((t.parse::<f64>().ok()? * 1e3, shard.to_owned()))
        })
        .collect()
}

fn merge(docs: &[Value]) -> Value {
    // Tests run at once in one process: each merge has a directory of its own.
    static MERGES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = MERGES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("spate-it-shard-nginx-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files: Vec<String> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let p = dir.join(format!("shard-{i}.json"));
            std::fs::write(&p, d.to_string()).unwrap();
            p.to_str().unwrap().to_owned()
        })
        .collect();
    let args: Vec<&str> = ["merge", "--format", "json"]
        .into_iter()
        .chain(files.iter().map(String::as_str))
        .collect();
    let out = spate(&args);
    crate::support::succeeded(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::merge::hdrh_agrees(&files, &doc);
    let _ = std::fs::remove_dir_all(&dir);
    doc
}

#[test]
fn nginx_counts_the_merged_requests_and_sees_each_shard_start_at_the_instant() {
    if !have("nginx") {
        return;
    }
    let server = nginx("shards");
    let url = format!("http://{}/", server.addr);
    let at = in_ms(1_500);
    let docs = shards_at(4, &["-c", "8", "-n", "2000"], &url, &at);
    counted_and_started_together(&docs, &logged(&server), &at);
}

/// Four shards of -n 2000 that started at `at`: nginx's log `log` holds every request, 500 a
/// shard, none before the instant, and its spread of first requests is the merge's skew.
fn counted_and_started_together(docs: &[Value], log: &[(f64, String)], at: &str) {
    let merged = merge(docs);
    assert_eq!(log.len(), 2000, "nginx's own count");
    assert_eq!(merged["requests"]["completed"], 2000);
    assert_eq!(merged["requests"]["successful"], 2000);
    let at: f64 = at.parse().unwrap();
    let mut firsts = Vec::new();
    for shard in 0..4 {
        let mine: Vec<f64> = log
            .iter()
            .filter(|(_, s)| *s == shard.to_string())
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(mine.len(), 500, "shard {shard}'s part");
        let first = mine.iter().copied().fold(f64::INFINITY, f64::min);
        // nginx logs in whole milliseconds: nothing before the instant's millisecond. The
        // upper bound is a sanity bound for a loaded machine, not a measure of precision.
        assert!(
            first >= at,
            "shard {shard} sent before the start: {first} < {at}"
        );
        assert!(
            first < at + 1_000.0,
            "shard {shard} started at {first}, the instant {at}"
        );
        firsts.push(first);
    }
    // The merge's skew (from the shards' own clocks) and the log's spread of first requests
    // (from nginx's) describe the same starts: they differ by the log's millisecond and the
    // time of a first exchange, far less than the second between the shards of merge.rs's.
    let spread = firsts.iter().copied().fold(0.0, f64::max)
        - firsts.iter().copied().fold(f64::INFINITY, f64::min);
    let skew = merged["start"]["skew_ms"].as_f64().unwrap();
    assert!(
        (spread - skew).abs() < 100.0,
        "nginx {spread} ms, merge {skew} ms"
    );
}

/// Whether private network namespaces can be made here; under SPATE_REQUIRE_TOOLS they must.
fn namespaces() -> bool {
    let ok = std::process::Command::new("unshare")
        .args(["-rn", "ip", "link", "add", "br0", "type", "bridge"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("SPATE_REQUIRE_TOOLS").is_none(),
            "SPATE_REQUIRE_TOOLS is set but no network namespaces with a bridge can be made (unshare -rn, ip)"
        );
        eprintln!("skipped: no private network namespaces here; the shards ran on loopback only");
    }
    ok
}

#[test]
fn shards_in_network_namespaces_of_their_own_count_as_nginx_in_another_does() {
    if !have("nginx") || !namespaces() {
        return;
    }
    let at = in_ms(2_000);
    let (docs, log) = in_namespaces(4, &at, &["-c", "8", "-n", "2000"]);
    for d in &docs {
        assert_eq!(d["config"]["url"], "http://10.9.0.1:8080/");
    }
    counted_and_started_together(&docs, &log, &at);
}

/// `shards` shards of `args` starting at `at`, each in a network namespace of its own, against
/// nginx in another (tests/it/servers/shards_netns.sh): their results and nginx's log.
fn in_namespaces(shards: u32, at: &str, args: &[&str]) -> (Vec<Value>, Vec<(f64, String)>) {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("spate-it-netns-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/servers/shards_netns.sh"
    );
    let out = std::process::Command::new("unshare")
        .args(["-rn", "bash", script, env!("CARGO_BIN_EXE_spate")])
        .arg(&dir)
        .args([&shards.to_string(), at, "--"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docs: Vec<Value> = (0..shards)
        .map(|k| {
            let text = std::fs::read(dir.join(format!("shard-{k}.json"))).unwrap();
            serde_json::from_slice(&text).unwrap()
        })
        .collect();
    let log: Vec<String> = std::fs::read_to_string(dir.join("shard.log"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    (docs, parse_log(&log))
}

/// Requests per second by nginx's log: the requests over the time from its first to its last.
fn log_rate(log: &[(f64, String)]) -> f64 {
    let first = log.iter().map(|l| l.0).fold(f64::INFINITY, f64::min);
    let last = log.iter().map(|l| l.0).fold(0.0, f64::max);
    (log.len() - 1) as f64 / ((last - first) / 1e3)
}

#[test]
fn in_namespaces_four_open_model_shards_keep_the_rate_of_one_process() {
    if !have("nginx") || !namespaces() {
        return;
    }
    let run = ["-c", "8", "-q", "300", "-z", "3s"];
    // One process is a job of one shard: --shard 0/1 is the whole run.
    let (_, single) = in_namespaces(1, &in_ms(1_500), &run);
    let (docs, sharded) = in_namespaces(4, &in_ms(1_500), &run);
    assert_eq!(single.len(), 900);
    assert_eq!(sharded.len(), 900, "the same schedule");
    assert_eq!(merge(&docs)["requests"]["completed"], 900);
    let (r1, r4) = (log_rate(&single), log_rate(&sharded));
    assert!(
        (r4 / r1 - 1.0).abs() < 0.02,
        "one process {r1:.1}/s, four shards {r4:.1}/s"
    );
}

#[test]
fn four_open_model_shards_keep_the_rate_of_one_process() {
    if !have("nginx") {
        return;
    }
    let one = nginx("rate-one");
    let url = format!("http://{}/", one.addr);
    spate_json(&["-c", "8", "-q", "300", "-z", "3s", &url]);
    let single = logged(&one);
    let four = nginx("rate-four");
    let url = format!("http://{}/", four.addr);
    let docs = shards_at(
        4,
        &["-c", "8", "-q", "300", "-z", "3s"],
        &url,
        &in_ms(1_500),
    );
    let sharded = logged(&four);
    assert_eq!(
        sharded.len(),
        single.len(),
        "the same schedule: 900 requests"
    );
    assert_eq!(sharded.len(), 900);
    let merged = merge(&docs);
    assert_eq!(merged["requests"]["completed"], 900);
    let (r1, r4) = (log_rate(&single), log_rate(&sharded));
    assert!(
        (r4 / r1 - 1.0).abs() < 0.02,
        "one process {r1:.1}/s, four shards {r4:.1}/s"
    );
}
