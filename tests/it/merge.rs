//! `spate merge` of real shards' results: counts equal the server's own, the merged percentiles
//! equal what an HdrHistogram implementation no one here wrote (PyPI's `hdrhistogram`) gives
//! for the sum of the shards' histograms, shards that started apart are warned of and their
//! rate is over the job's whole window, and results of other jobs or of no shard are refused.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use spate::serve::ServeConfig;

use crate::shard::shards;
use crate::support::{builtin, spate, spate_json, test_python};

/// The shards' histograms added by hdrh, and each percentile by nearest rank
/// (`hdr::NEAREST_RANK`).
const SUM: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
total = HdrHistogram(1, 3600 * 10**9, 3)
for path in sys.argv[1:]:
    total.add(HdrHistogram.decode(json.load(open(path))["latency"]["hdr_base64"]))
print(json.dumps({"count": total.get_total_count(),
                  "p": {q: nearest_rank(total, q) for q in ("50", "99", "99.9")}}))
"#;

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("spate-it-merge-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    /// Writes each result as shard-I.json; their paths.
    fn save(&self, docs: &[Value]) -> Vec<String> {
        docs.iter()
            .enumerate()
            .map(|(i, d)| {
                let p = self.0.join(format!("shard-{i}.json"));
                std::fs::write(&p, d.to_string()).unwrap();
                p.to_str().unwrap().to_owned()
            })
            .collect()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn merged(files: &[String], extra: &[&str]) -> (Option<i32>, Value, String) {
    let args: Vec<&str> = ["merge", "--format", "json"]
        .into_iter()
        .chain(extra.iter().copied())
        .chain(files.iter().map(String::as_str))
        .collect();
    let out = spate(&args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), doc, err)
}

fn validate(doc: &Value) {
    crate::schema::validate_against("docs/merge-schema.json", doc);
}

#[test]
fn four_shards_merge_into_the_jobs_counts_and_exact_percentiles() {
    let server = builtin(ServeConfig::default());
    let docs = shards(4, &["-c", "8", "-n", "2001"], &server.url());
    let dir = Dir::new("exact");
    let files = dir.save(&docs);
    let (code, doc, err) = merged(&files, &[]);
    assert_eq!(code, Some(0), "{err}");
    validate(&doc);
    assert_eq!(server.requests(), 2001);
    assert_eq!(doc["requests"]["completed"], 2001);
    assert_eq!(doc["latency"]["count"], 2001);
    assert_eq!(doc["status_codes"][0]["count"], 2001);
    assert_eq!(doc["job"]["connections"], 8);
    assert_eq!(doc["job"]["requests"], 2001);
    assert_eq!(doc["shards"].as_array().unwrap().len(), 4);
    let started: Vec<u64> = docs
        .iter()
        .map(|d| d["config"]["started_unix_us"].as_u64().unwrap())
        .collect();
    let skew = started.iter().max().unwrap() - started.iter().min().unwrap();
    assert_eq!(doc["start"]["skew_ms"].as_f64().unwrap(), skew as f64 / 1e3);
    // The rate: the responses in the shards' windows over the job's window.
    let window = doc["window"]["elapsed_s"].as_f64().unwrap();
    rated_over(&docs, &doc, window);
    // The page: the same JSON inside, a curve per shard and the job's, a row per shard.
    let page = dir.0.join("job.html");
    let (code, _, err) = merged(&files, &["--html", page.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let page = std::fs::read_to_string(&page).unwrap();
    const OPEN: &str = r#"<script type="application/json" id="spate-merge">"#;
    let inside = &page[page.find(OPEN).unwrap() + OPEN.len()..];
    let inside: Value = serde_json::from_str(&inside[..inside.find("</script>").unwrap()]).unwrap();
    assert_eq!(inside["requests"], doc["requests"]);
    assert_eq!(
        inside["latency"]["hdr_base64"],
        doc["latency"]["hdr_base64"]
    );
    assert_eq!(
        page.matches("<path class=\"t").count(),
        4,
        "a curve per shard"
    );
    assert!(page.contains("<path class=\"job\""), "the job's curve");
    for (k, file) in files.iter().enumerate() {
        assert!(
            page.contains(&format!("<th>shard {k}</th>"))
                && page.contains(&format!("<td>{file}</td>")),
            "shard {k}'s row"
        );
    }
    let text = spate(
        &[
            &["merge"][..],
            &files.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat(),
    );
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.starts_with("spate merge: 4 shards of GET "), "{text}");
    assert!(text.contains("\nShards\n"), "{text}");

    hdrh_agrees(&files, &doc);
}

/// The merged rate is the responses within the shards' windows over the job's `window`.
fn rated_over(docs: &[Value], doc: &Value, window: f64) {
    let in_window: u64 = docs
        .iter()
        .map(|d| {
            d["requests"]["completed"].as_u64().unwrap()
                - d["totals"]["completed_in_drain"].as_u64().unwrap()
        })
        .sum();
    let rate = doc["requests_per_sec"].as_f64().unwrap();
    assert!(
        (rate - in_window as f64 / window).abs() < 1e-6 * rate,
        "{rate}"
    );
}

/// PyPI's hdrhistogram, given the shards' results `files`, adds their histograms to the count
/// and percentiles of the merged result `doc` (skipped without the test virtualenv).
pub fn hdrh_agrees(files: &[String], doc: &Value) {
    let Some(python) = test_python("hdrh") else {
        return;
    };
    let out = Command::new(python)
        .args(["-c", &[crate::hdr::NEAREST_RANK, SUM].concat()])
        .args(files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(theirs["count"], doc["latency"]["count"]);
    let ns = |ms: &Value| (ms.as_f64().unwrap() * 1e6).round() as u64;
    for (q, key) in [("50", "p50"), ("99", "p99"), ("99.9", "p99_9")] {
        assert_eq!(
            theirs["p"][q].as_u64().unwrap(),
            ns(&doc["latency"]["percentiles"][key]),
            "p{q}"
        );
    }
}

#[test]
fn shards_that_started_apart_are_warned_of_and_rated_over_the_whole_window() {
    let server = builtin(ServeConfig::default());
    // Shard 0 runs its second, then shard 1 runs its own: about a second apart.
    let docs: Vec<Value> = (0..2)
        .map(|i| {
            spate_json(&[
                "-c",
                "2",
                "-z",
                "1s",
                "--shard",
                &format!("{i}/2"),
                &server.url(),
            ])
        })
        .collect();
    let dir = Dir::new("apart");
    let files = dir.save(&docs);
    let (code, doc, err) = merged(&files, &[]);
    assert_eq!(code, Some(0), "{err}");
    validate(&doc);
    assert!(
        doc["start"]["skew_ms"].as_f64().unwrap() >= 1000.0,
        "{}",
        doc["start"]
    );
    let window = doc["window"]["elapsed_s"].as_f64().unwrap();
    assert!(
        window >= 2.0,
        "the union of two one-second windows a second apart: {window}"
    );
    let warning = doc["warnings"][0].as_str().unwrap();
    assert!(warning.contains("the shards started"), "{warning}");
    assert!(
        err.contains("spate merge: warning: the shards started"),
        "{err}"
    );
    rated_over(&docs, &doc, window);
    // The second shard's seconds come after the first's on the job's timeline.
    let last = doc["timeline"].as_array().unwrap().last().unwrap()["t_s"]
        .as_u64()
        .unwrap();
    assert!(last >= 1, "{}", doc["timeline"]);
}

#[test]
fn results_of_other_jobs_or_of_no_shard_are_refused_unless_forced() {
    let server = builtin(ServeConfig::default());
    let url = server.url();
    let a = spate_json(&["-n", "20", "-c", "2", "--shard", "0/2", &url]);
    let other = spate_json(&["-n", "40", "-c", "2", "--shard", "1/2", &url]);
    let plain = spate_json(&["-n", "20", "-c", "2", &url]);
    let dir = Dir::new("refused");
    let files = dir.save(&[a, other, plain]);
    let not_json = dir.0.join("notes.txt");
    std::fs::write(&not_json, "hello").unwrap();
    for (pick, says) in [
        (vec![0, 1], "its job's requests (-n) differs from"),
        (vec![0, 2], "not a shard's result"),
        (vec![0], "shard 1 of 2 missing"),
        (vec![0, 0], "are both shard 0"),
    ] {
        let chosen: Vec<String> = pick.iter().map(|&i| files[i].clone()).collect();
        let (code, _, err) = merged(&chosen, &[]);
        assert_eq!(code, Some(2), "{pick:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{pick:?}: {err}");
        let (code, doc, err) = merged(&chosen, &["--force"]);
        assert_eq!(code, Some(0), "{pick:?} forced: {err}");
        validate(&doc);
        assert_eq!(doc["forced"], true);
        assert!(doc["warnings"][0].as_str().unwrap().contains(says), "{doc}");
    }
    // One shard of two, forced: the header says how many were merged of how many.
    let out = crate::support::spate(&["merge", "--force", &files[0]]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("spate merge: 1 of 2 shards of GET"),
        "{text}"
    );
    let (code, _, err) = merged(&[not_json.to_str().unwrap().to_owned()], &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("not a spate result"), "{err}");
    let missing = Path::new("/nonexistent/shard-0.json");
    let (code, _, _) = merged(&[missing.to_str().unwrap().to_owned()], &[]);
    assert_eq!(code, Some(2));
}

/// `--slo` on shards: each shard records the job's targets and is not judged on them (100
/// req/s is a third of the job's, not a failure of `rps=250`); `spate merge` judges the job,
/// and a target the job misses is exit 3 there. `merge --slo` judges on targets of its own.
#[test]
fn shards_record_the_slo_and_merge_judges_the_job() {
    let server = builtin(ServeConfig::default());
    let slo = "p99=5s,rps=250";
    let docs = shards(
        3,
        &["-c", "3", "-q", "300", "-z", "1s", "--slo", slo],
        &server.url(),
    );
    for d in &docs {
        assert_eq!(d["config"]["shard"]["slo"], slo, "{d:#}");
        assert_eq!(
            d["thresholds"],
            serde_json::json!([]),
            "a shard's part is not judged"
        );
        assert!(d["totals"]["requests_per_sec"].as_f64().unwrap() < 250.0);
    }
    let dir = Dir::new("slo");
    let files = dir.save(&docs);
    let (code, doc, err) = merged(&files, &[]);
    assert_eq!(code, Some(0), "{err}");
    validate(&doc);
    assert_eq!(doc["slo"], slo);
    let verdicts: Vec<(&str, bool)> = doc["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["name"].as_str().unwrap(), v["pass"].as_bool().unwrap()))
        .collect();
    assert_eq!(verdicts, [("p99", true), ("rps", true)], "{doc:#}");
    // Targets the job misses: exit 3, in every form.
    let (code, doc, err) = merged(&files, &["--slo", "rps=400"]);
    assert_eq!(code, Some(3), "{err}");
    assert_eq!(doc["thresholds"][0]["pass"], false);
    let out = spate(
        &[
            &["merge", "--slo", "rps=400"][..],
            &files.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        text.contains("Thresholds (--slo, on the whole job)"),
        "{text}"
    );
    assert!(text.contains("FAIL  rps >="), "{text}");
    // A shard's own report says where its targets are judged.
    let shard = dir.0.join("shard-0.json");
    let out = spate(&["report", shard.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("p99=5s,rps=250: judged on the whole job by spate merge"),
        "{text}"
    );
    // Shards given different targets are not one job's to judge.
    let mut other = docs.clone();
    other[1]["config"]["shard"]["slo"] = "rps=1".into();
    let differ = Dir::new("slo-differ");
    let files = differ.save(&other);
    let (code, _, err) = merged(&files, &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("the shards recorded different --slo"), "{err}");
}

/// Shards of a job with `--stages` follow their parts of its profile, and merge into the job's
/// row per stage: the scheduled requests are the profile's area, the counts the server's, the
/// latency the shards' histograms added, each stage judged on the shards' targets; a
/// connection profile's shards add up to its targets.
#[test]
fn shards_with_stages_merge_into_the_jobs_rows() {
    let server = builtin(ServeConfig::default());
    let docs = shards(
        2,
        &[
            "-c",
            "4",
            "--stages",
            "1s:100/s,1s:100/s",
            "--slo",
            "rps=90",
        ],
        &server.url(),
    );
    let dir = Dir::new("stages");
    let files = dir.save(&docs);
    let (code, doc, err) = merged(&files, &[]);
    // The job's 150 responses over 2 s make 75/s, under its 90/s target: the job fails it.
    assert_eq!(code, Some(3), "{err}");
    validate(&doc);
    assert_eq!(doc["job"]["stages"], "1s:100/s,1s:100/s");
    assert_eq!(server.requests(), 150, "the profile's area: 50 then 100");
    let rows = doc["stages"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    let (a, b) = (&rows[0], &rows[1]);
    assert_eq!(
        (a["scheduled"].as_u64(), b["scheduled"].as_u64()),
        (Some(50), Some(100))
    );
    assert_eq!(
        (a["target_from"].as_f64(), a["target_to"].as_f64()),
        (Some(0.0), Some(100.0))
    );
    let completed = a["completed"].as_u64().unwrap() + b["completed"].as_u64().unwrap();
    assert!((145..=150).contains(&completed), "{completed}");
    for (k, row) in rows.iter().enumerate() {
        let shards: u64 = docs
            .iter()
            .map(|d| d["stages"][k]["completed"].as_u64().unwrap())
            .sum();
        assert_eq!(row["completed"].as_u64(), Some(shards));
        assert!(row["latency_ms"]["p99"].as_f64().unwrap() > 0.0, "{row}");
    }
    let judged = doc["stage_thresholds"].as_array().unwrap();
    let passes: Vec<bool> = judged
        .iter()
        .map(|v| v["pass"].as_bool().unwrap())
        .collect();
    assert_eq!(
        passes,
        [false, true],
        "the ramp's 50/s misses 90/s, the plateau's 100/s meets it"
    );
    let text = spate(
        &[
            &["merge"][..],
            &files.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat(),
    );
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("following --stages 1s:100/s,1s:100/s"),
        "{text}"
    );
    assert!(
        text.contains("\nStages (each from the seconds that start in it)\n"),
        "{text}"
    );

    // Connections: 4 of the job's 8 on each shard at the plateau.
    let docs = shards(2, &["--stages", "0s:8,1s:8"], &server.url());
    for d in &docs {
        assert_eq!(
            d["config"]["connections"], 4,
            "a shard's part of the highest target"
        );
        assert_eq!(d["stages"][0]["target_to"], 4.0);
    }
    let files = dir.save(&docs);
    let (code, doc, err) = merged(&files, &[]);
    assert_eq!(code, Some(0), "{err}");
    validate(&doc);
    assert_eq!(doc["stages"][0]["target_to"], 8.0);
    assert!(doc["stages"][0]["scheduled"].is_null());
}
