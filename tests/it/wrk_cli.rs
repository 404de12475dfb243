//! `spate wrk` against Debian's wrk, which no one here wrote: the same command line, the same
//! server, and output that the patterns tools use on wrk's output match in both, line for line
//! (values aside). wrk is required in CI (SPATE_REQUIRE_TOOLS=1).

use regex::Regex;

use crate::support::{Peer, Scripted, have, spate, succeeded, usage_error};

/// Patterns that tools and CI jobs match on wrk's output.
const PATTERNS: [(&str, &str); 9] = [
    ("header", r"^Running (\d+)(s|m|h) test @ (\S+)$"),
    ("threads", r"^\s+(\d+) threads and (\d+) connections$"),
    (
        "latency",
        r"^\s+Latency\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)\s+([\d.]+)%$",
    ),
    (
        "req/sec",
        r"^\s+Req/Sec\s+([\d.]+)([kMG]?)\s+([\d.]+)([kMG]?)\s+([\d.]+)([kMG]?)\s+([\d.]+)%$",
    ),
    ("p99", r"^\s+99%\s+([\d.]+)(us|ms|s)$"),
    (
        "requests",
        r"^\s+(\d+) requests in ([\d.]+)(s|m|h), ([\d.]+)([KMGT]?B) read$",
    ),
    (
        "socket errors",
        r"^\s+Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)$",
    ),
    ("non-2xx", r"^\s+Non-2xx or 3xx responses: (\d+)$"),
    ("requests/sec", r"^Requests/sec:\s+([\d.]+)$"),
];

/// Which patterns match a line of `text`, in order, and the lines no pattern knows (values
/// replaced, spaces squeezed).
fn read(text: &str) -> (Vec<&'static str>, Vec<String>) {
    let patterns: Vec<(&str, Regex)> = PATTERNS
        .iter()
        .map(|(n, p)| (*n, Regex::new(p).unwrap()))
        .collect();
    let value = Regex::new(r"[\d.]+(us|ms|s|k|M|G|KB|MB|GB|B|%)?").unwrap();
    let mut matched = Vec::new();
    let mut other = Vec::new();
    for line in text.lines() {
        match patterns.iter().find(|(_, re)| re.is_match(line)) {
            Some((name, _)) => matched.push(*name),
            None => other.push(
                value
                    .replace_all(line, "V")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
        }
    }
    (matched, other)
}

/// A server that answers every request with 404, and closes each connection at its 500th
/// request in the middle of the answer: a run sees non-2xx responses and socket errors. (A
/// close with no byte of an answer would not do: spate sends such a request again on a new
/// connection, as RFC 9112 allows, where wrk counts an error.)
fn server() -> Scripted {
    Scripted::start(|peer: &mut Peer| {
        let mut n = 0;
        while peer.read_request().is_some() {
            n += 1;
            if n == 500 {
                peer.write(b"HTTP/1.1 404 Not");
                return;
            }
            if !peer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 9\r\n\r\nnot found") {
                return;
            }
        }
    })
}

#[test]
fn the_output_reads_as_wrks_with_the_patterns_tools_use() {
    if !have("wrk") {
        return;
    }
    let srv = server();
    let url = srv.url();
    let args = ["-t2", "-c8", "-d1s", "--latency", &url];
    let out = std::process::Command::new("wrk")
        .args(args)
        .output()
        .unwrap();
    let from_wrk = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut all = vec!["wrk"];
    all.extend(args);
    let out = spate(&all);
    succeeded(&out);
    let from_spate = String::from_utf8_lossy(&out.stdout).into_owned();
    let (w, w_other) = read(&from_wrk);
    let (s, s_other) = read(&from_spate);
    assert_eq!(
        w,
        [
            "header",
            "threads",
            "latency",
            "req/sec",
            "p99",
            "requests",
            "socket errors",
            "non-2xx",
            "requests/sec"
        ],
        "wrk:\n{from_wrk}"
    );
    assert_eq!(s, w, "spate:\n{from_spate}\nwrk:\n{from_wrk}");
    // The lines no pattern names (column heads, the other percentiles, Transfer/sec) have the
    // same words and values in the same places.
    assert_eq!(s_other, w_other, "spate:\n{from_spate}\nwrk:\n{from_wrk}");
    // The figures are spate's own: the non-2xx count is every response.
    let count = |t: &str, re: &str| -> u64 {
        Regex::new(re).unwrap().captures(t).unwrap()[1]
            .parse()
            .unwrap()
    };
    assert_eq!(
        count(&from_spate, r"(?m)^\s+(\d+) requests in"),
        count(&from_spate, r"(?m)Non-2xx or 3xx responses: (\d+)$")
    );
}

#[test]
fn json_gives_spates_own_report_and_script_arguments_follow_the_url() {
    // 200 only for the path the script makes of its arguments.
    let srv = Scripted::start(|peer: &mut Peer| {
        while let Some(r) = peer.read_request() {
            let answer: &[u8] = match r.head.starts_with("GET /a/b ") {
                true => b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok",
                false => b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n",
            };
            if !peer.write(answer) {
                return;
            }
        }
    });
    let dir = std::env::temp_dir().join(format!("spate-it-wrk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("args.lua");
    std::fs::write(
        &script,
        "function init(args) wrk.path = '/' .. args[1] .. '/' .. args[2] end\n",
    )
    .unwrap();
    let url = srv.url();
    let out = spate(&[
        "wrk",
        "-t1",
        "-c2",
        "-d1",
        "--format",
        "json",
        "-s",
        script.to_str().unwrap(),
        &url,
        "--",
        "a",
        "b",
    ]);
    succeeded(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["config"]["connections"], 2, "{}", doc["config"]);
    assert_eq!(doc["config"]["threads"], 1);
    assert!(doc["requests"]["successful"].as_u64().unwrap() > 0);
    assert_eq!(doc["requests"]["error_status"], 0, "{}", doc["requests"]);
    // wrk sends no Accept-Encoding.
    assert_eq!(doc["config"]["compression"], false);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn wrks_rules_for_its_flags_are_kept() {
    for (args, needle) in [
        (
            vec!["wrk", "-t4", "-c2", "http://127.0.0.1:9/"],
            "at least the number of threads",
        ),
        (vec!["wrk", "-c0", "http://127.0.0.1:9/"], "at least 1"),
        (vec!["wrk", "-t2"], "give the URL"),
        (
            vec!["wrk", "http://127.0.0.1:9/", "extra"],
            "there is no -s",
        ),
        (
            vec!["wrk", "-d", "soon", "http://127.0.0.1:9/"],
            "not a duration",
        ),
    ] {
        let err = usage_error(&args);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let out = spate(&["wrk", "-v"]);
    succeeded(&out);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("spate "));
}

#[test]
fn a_request_with_no_answer_within_the_timeout_is_a_socket_timeout() {
    // Reads every request and answers none.
    let srv = Scripted::start(|peer: &mut Peer| while peer.read_request().is_some() {});
    let url = srv.url();
    let out = spate(&["wrk", "-t1", "-c2", "-d3s", "--timeout", "1", &url]);
    succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let errors = Regex::new(PATTERNS[6].1).unwrap();
    let line = text
        .lines()
        .find_map(|l| errors.captures(l))
        .unwrap_or_else(|| panic!("no Socket errors line:\n{text}"));
    let n = |i: usize| line[i].parse::<u64>().unwrap();
    // Each connection's request times out at 1 s and its second at 2 s, a second before the
    // window ends; wrk's default timeout (2 s) would give 2.
    assert!(n(4) >= 4, "{text}");
    assert_eq!((n(1), n(2), n(3)), (0, 0, 0), "{text}");
    assert!(text.contains("  0 requests in"), "{text}");
}
