//! The histograms spate writes, read by an HdrHistogram implementation no one here wrote
//! (PyPI's `hdrhistogram`, in target/test-venv): the JSON's compressed V2 encodings decode to the
//! counts and percentiles spate printed, and `--hdr-log` is an interval log its reader reads,
//! a histogram per second of the timeline holding every latency of the run.

use std::process::Command;

use crate::support::{builtin, spate_json, test_python};
use spate::serve::ServeConfig;

/// Python: `nearest_rank(h, label)`, the value of an hdrh histogram at a percentile ("99.9")
/// by nearest rank, the rank rounded up, as spate and the Rust crate take it (hdrh's own
/// `get_value_at_percentile` rounds the rank to nearest).
pub const NEAREST_RANK: &str = r#"
import math
def nearest_rank(h, label):
    # The fraction as spate's quantile (0.999, not 99.9 / 100, which rounds up in binary).
    q = {"50": 0.5, "90": 0.9, "99": 0.99, "99.9": 0.999}[label]
    rank = max(1, math.ceil(q * h.get_total_count()))
    seen = 0
    for item in h.get_recorded_iterator():
        seen += item.count_at_value_iterated_to
        if seen >= rank:
            return h.get_highest_equivalent_value(item.value_iterated_to)
"#;

/// Reads the result and the log with Python's hdrh and prints what it found as JSON: per
/// percentile the nearest-rank value, counts and the intervals.
const READ: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
doc = json.load(open(sys.argv[1]))
h = HdrHistogram.decode(doc["latency"]["hdr_base64"])
out = {"count": h.get_total_count(), "max": h.get_max_value(),
       "p": {q: nearest_rank(h, q) for q in ("50", "90", "99", "99.9")}}
acc = HdrHistogram(1, 3600 * 10**9, 3)
reader = HistogramLogReader(sys.argv[2], acc)
intervals = []
while True:
    x = reader.get_next_interval_histogram()
    if x is None:
        break
    intervals.append([x.get_start_time_stamp(), x.get_total_count()])
out["intervals"] = intervals
print(json.dumps(out))
"#;

#[test]
fn an_independent_hdrhistogram_reads_the_json_and_the_interval_log() {
    let Some(python) = test_python("hdrh") else {
        return;
    };
    let server = builtin(ServeConfig::default());
    let dir = std::env::temp_dir().join(format!("spate-hdr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("run.hlog");
    let doc = spate_json(&[
        "-z",
        "2.5s",
        "-c",
        "4",
        "--hdr-log",
        log.to_str().unwrap(),
        &server.url(),
    ]);
    let saved = dir.join("run.json");
    std::fs::write(&saved, doc.to_string()).unwrap();
    let out = Command::new(python)
        .args(["-c", &[NEAREST_RANK, READ].concat()])
        .args([saved.to_str().unwrap(), log.to_str().unwrap()])
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();

    let latency = &doc["latency"];
    assert!(latency["hdr_base64"].as_str().unwrap().starts_with("HISTF"));
    assert_eq!(read["count"], latency["count"]);
    let ns = |ms: &serde_json::Value| (ms.as_f64().unwrap() * 1e6).round() as u64;
    assert_eq!(read["max"].as_u64().unwrap(), ns(&latency["max_ms"]));
    for (q, key) in [
        ("50", "p50"),
        ("90", "p90"),
        ("99", "p99"),
        ("99.9", "p99_9"),
    ] {
        let theirs = read["p"][q].as_u64().unwrap();
        assert_eq!(theirs, ns(&latency["percentiles"][key]), "p{q}");
    }

    // One interval per second of the timeline, at its start; together, every latency recorded
    // up to the window's end.
    let timeline = doc["timeline"].as_array().unwrap();
    let intervals = read["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), timeline.len());
    for (i, t) in intervals.iter().zip(timeline) {
        let start_ms = i[0].as_f64().unwrap();
        let want = doc["start_unix_ms"].as_f64().unwrap() + t["t_s"].as_f64().unwrap() * 1e3;
        assert!((start_ms - want).abs() < 1.0, "{start_ms} vs {want}");
    }
    let logged: u64 = intervals.iter().map(|i| i[1].as_u64().unwrap()).sum();
    let in_window: u64 = timeline
        .iter()
        .map(|t| t["completed"].as_u64().unwrap())
        .sum();
    // A response that came after the window's end but before the last second was taken is in
    // the histograms but not in the window's count.
    let drained = doc["totals"]["completed_in_drain"].as_u64().unwrap();
    assert!(
        logged >= in_window && logged <= in_window + drained,
        "{logged} vs {in_window}"
    );
}
