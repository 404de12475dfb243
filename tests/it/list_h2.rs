//! Request lists over HTTP/2, counted by Debian's nginx: every entry's requests reach the
//! server exactly as often as the report says, by method and path, also when nginx ends its
//! connections with a graceful GOAWAY every few requests and the refused streams go again
//! (each as the request it was, whichever stream slot takes it). nginx is required in CI.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::nginx::Nginx;
use crate::support::{have, spate_json};

/// nginx over h2c, logging `METHOD PATH PROTOCOL` per request and ending each connection
/// after `per_connection` requests.
fn nginx(tag: &str, per_connection: u32) -> Nginx {
    Nginx::start(
        tag,
        "http2",
        &format!(
            "log_format entry '$request_method $uri $server_protocol';\n  \
             keepalive_requests {per_connection};"
        ),
        "access_log {dir}/entries.log entry;\n    location / { return 200 \"ok $uri\\n\"; }",
    )
}

/// The requests nginx logged, counted by their line.
fn logged(nginx: &Nginx) -> BTreeMap<String, u64> {
    let mut by = BTreeMap::new();
    for line in nginx.log("entries.log") {
        *by.entry(line).or_default() += 1;
    }
    by
}

/// The report's completed responses per entry, keyed as nginx logs them over HTTP/2.
fn reported(v: &Value, port: u16) -> BTreeMap<String, u64> {
    let origin = format!("http://127.0.0.1:{port}");
    v["per_url"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let request = e["request"].as_str().unwrap().replacen(&origin, "", 1);
            (
                format!("{request} HTTP/2.0"),
                e["completed"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn list_file(nginx: &Nginx) -> String {
    let origin = format!("http://{}", nginx.addr);
    let path = nginx.dir.join("urls.txt");
    std::fs::write(
        &path,
        format!("{origin}/a\nPOST {origin}/b {{\"x\":1}}\n{origin}/c\nDELETE {origin}/d\n"),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_list_over_h2c_reaches_nginx_exactly_through_goaways() {
    if !have("nginx") {
        return;
    }
    let nginx = nginx("list-h2", 7);
    let urls = list_file(&nginx);
    let v = spate_json(&[
        "--urls-from-file",
        &urls,
        "--http2",
        "-n",
        "2000",
        "-c",
        "2",
        "-p",
        "8",
    ]);
    let r = &v["requests"];
    assert_eq!(
        (r["completed"].as_u64(), r["failed"].as_u64()),
        (Some(2000), Some(0)),
        "{r}"
    );
    assert!(
        r["retried"].as_u64().unwrap() > 0,
        "GOAWAYs refused streams: {r}"
    );
    assert!(v["connections"]["goaways"].as_u64().unwrap() > 100);
    assert_eq!(v["config"]["protocol"], "HTTP/2 (h2c)");
    let want: BTreeMap<String, u64> = [
        ("GET /a HTTP/2.0", 500),
        ("POST /b HTTP/2.0", 500),
        ("GET /c HTTP/2.0", 500),
        ("DELETE /d HTTP/2.0", 500),
    ]
    .into_iter()
    .map(|(l, n)| (l.to_string(), n))
    .collect();
    assert_eq!(logged(&nginx), want, "in turn, each entry once per round");
    assert_eq!(reported(&v, nginx.addr.port()), want);
}

#[test]
fn a_random_list_over_h2c_is_reported_as_nginx_counts_it() {
    if !have("nginx") {
        return;
    }
    let nginx = nginx("list-h2-random", 1000);
    let urls = list_file(&nginx);
    let v = spate_json(&[
        "--urls-from-file",
        &urls,
        "--http2",
        "--order",
        "random",
        "--seed",
        "7",
        "-n",
        "600",
        "-c",
        "3",
        "-p",
        "4",
    ]);
    assert_eq!(v["requests"]["completed"], 600);
    let seen = logged(&nginx);
    assert_eq!(seen.values().sum::<u64>(), 600);
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert_eq!(reported(&v, nginx.addr.port()), seen);
}
