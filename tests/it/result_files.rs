//! Saved results with numbers no run makes: every count of a result with every section set to
//! 0 and to the largest count, one at a time. `spate report` and `spate merge` read results
//! from anywhere; whatever the numbers, reading, judging and printing them must not panic or
//! wrap, and a result whose counts disagree is refused with one line.

use serde_json::Value;
use spate::report::{Palette, Report, render, to_csv, to_html, to_json};

use crate::support::{ScratchDir, spate};

fn every_section() -> Value {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/golden/every-section.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The places of every non-negative integer in `v`.
fn integers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Number(n) if n.is_u64() => out.push(at),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                integers(x, format!("{at}/{i}"), out);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                integers(x, format!("{at}/{k}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn no_count_of_a_saved_result_can_make_spate_panic() {
    let clean = every_section();
    let mut places = Vec::new();
    integers(&clean, String::new(), &mut places);
    assert!(places.len() > 100, "{}", places.len());
    let (mut read, mut refused) = (0, 0);
    for at in &places {
        for extreme in [0, u64::MAX] {
            let mut doc = clean.clone();
            *doc.pointer_mut(at).unwrap() = Value::from(extreme);
            let Ok(report) = Report::from_json(doc.to_string().as_bytes()) else {
                continue;
            };
            if report.run.inconsistency().is_some() {
                refused += 1;
                continue;
            }
            read += 1;
            let shown = std::panic::catch_unwind(|| {
                let text = render(&report, Palette::None);
                let _ = (to_html(&report), to_csv(&report), to_json(&report));
                let mut other = report.run.clone();
                if let Some(sh) = other.config.shard.as_mut() {
                    sh.index = 1;
                }
                let merged = spate::merge::merge(
                    &[("a".into(), report.run.clone()), ("b".into(), other)],
                    true,
                    None,
                );
                if let Ok(m) = merged {
                    let _ = (
                        spate::report::merge::text(&m),
                        spate::report::merge::json(&m),
                    );
                }
                text
            });
            assert!(shown.is_ok(), "{at} = {extreme}: a panic");
        }
    }
    assert!(read > 100 && refused > 0, "read {read}, refused {refused}");
}

#[test]
fn results_whose_counts_disagree_are_refused_by_report_and_merge() {
    let dir = ScratchDir::new("disagree");
    let mut doc = every_section();
    // The shard that claims more successes than it completed: what wrapped sums looked like.
    doc["requests"]["successful"] = Value::from(u64::MAX);
    let bad = dir.file("bad.json");
    std::fs::write(&bad, doc.to_string()).unwrap();
    let err = crate::support::usage_error(&["report", &bad]);
    assert!(
        err.contains("its counts disagree: completed 298 is not successful"),
        "{err}"
    );
    let err = crate::support::usage_error(&["merge", &bad, &bad]);
    assert!(err.contains("its counts disagree"), "{err}");
    // Two shards whose attempts together pass 2^64.
    let mut big = every_section();
    big["requests"]["attempted"] = Value::from(u64::MAX - 1);
    for k in ["completed", "successful"] {
        big["requests"][k] = Value::from(u64::MAX - 2);
    }
    big["requests"]["failed"] = Value::from(0);
    big["requests"]["interrupted"] = Value::from(1);
    big["requests"]["error_status"] = Value::from(0);
    let (a, b) = (dir.file("a.json"), dir.file("b.json"));
    std::fs::write(&a, big.to_string()).unwrap();
    big["config"]["shard"]["index"] = Value::from(1);
    std::fs::write(&b, big.to_string()).unwrap();
    let out = spate(&["merge", &a, &b]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("add up past what a count holds"), "{err}");
}

/// `spate report` on what compare, sweep and merge write (their JSON and their pages) says what
/// the file is and what to do, instead of blaming a schema version.
#[test]
fn report_names_the_other_documents_spate_writes() {
    let server = crate::support::builtin(spate::serve::ServeConfig::default());
    let url = server.url();
    let dir = ScratchDir::new("other-documents");
    let (cj, ch) = (dir.file("compare.json"), dir.file("compare.html"));
    let out = spate(&[
        "compare",
        "--no-progress",
        "-n",
        "20",
        "-c",
        "1",
        "--rounds",
        "2",
        "--format",
        "json",
        "--html",
        &ch,
        &format!("a={url}"),
        &format!("b={url}"),
    ]);
    std::fs::write(&cj, &out.stdout).unwrap();
    let (sj, sh) = (dir.file("sweep.json"), dir.file("sweep.html"));
    let out = spate(&[
        "sweep",
        "--no-progress",
        "-n",
        "20",
        "--conc",
        "1,2",
        "--format",
        "json",
        "--html",
        &sh,
        &url,
    ]);
    std::fs::write(&sj, &out.stdout).unwrap();
    let shards = crate::shard::shards(2, &["-c", "2", "-n", "20"], &url);
    let files: Vec<String> = shards
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let f = dir.file(&format!("shard-{i}.json"));
            std::fs::write(&f, d.to_string()).unwrap();
            f
        })
        .collect();
    let (mj, mh) = (dir.file("merge.json"), dir.file("merge.html"));
    let out = spate(&[
        "merge", "--format", "json", "--html", &mh, &files[0], &files[1],
    ]);
    std::fs::write(&mj, &out.stdout).unwrap();
    for (file, what) in [
        (&cj, "a spate compare result, not one run's"),
        (&ch, "the HTML page of a spate compare result"),
        (&sj, "a spate sweep result, not one run's"),
        (&sh, "the HTML page of a spate sweep result"),
        (&mj, "a spate merge result, not one run's"),
        (&mh, "the HTML page of a spate merge result"),
    ] {
        let out = spate(&["report", file]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {err}");
        assert!(err.contains(what), "{file}: {err}");
        assert!(!err.contains("schema_version"), "{file}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // A shard's own result is a run's: it is shown.
    let out = spate(&["report", &files[0]]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A --stages result whose stage rows, breaking point and stage verdicts hold figures no run
/// makes (each number at 0, at the largest count or at the largest float, a histogram that is
/// not one): reading, judging, printing and merging it never panics.
#[test]
fn no_figure_of_a_stage_row_can_make_spate_panic() {
    let server = crate::support::builtin(spate::serve::ServeConfig::default());
    let dir = ScratchDir::new("stage-rows");
    let saved = dir.file("staged.json");
    let out = spate(&[
        "--no-progress",
        "-c",
        "2",
        "--stages",
        "1s:20/s,1s:20/s",
        "--slo",
        "p99=1us",
        "--shard",
        "0/1",
        "--save",
        &saved,
        &server.url(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a shard leaves its targets to merge"
    );
    let clean: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert_eq!(clean["stages"].as_array().unwrap().len(), 2);
    let mut places = Vec::new();
    integers(&clean["stages"], "/stages".into(), &mut places);
    let floats: Vec<String> = [
        "target_from",
        "target_to",
        "achieved_rate",
        "duration_s",
        "start_s",
    ]
    .iter()
    .flat_map(|k| [format!("/stages/0/{k}"), format!("/stages/1/{k}")])
    .collect();
    let mut docs = Vec::new();
    for at in &places {
        for extreme in [0, u64::MAX] {
            let mut doc = clean.clone();
            *doc.pointer_mut(at).unwrap() = Value::from(extreme);
            docs.push((at.clone(), doc));
        }
    }
    for at in &floats {
        for extreme in [0.0, f64::MAX, -f64::MAX, 1e-300] {
            let mut doc = clean.clone();
            *doc.pointer_mut(at).unwrap() = Value::from(extreme);
            docs.push((at.clone(), doc));
        }
    }
    for bad in ["", "HISTFAAAAA", "not base64 at all", &"A".repeat(100_000)] {
        let mut doc = clean.clone();
        doc["stages"][0]["hdr_base64"] = Value::from(bad);
        docs.push(("/stages/0/hdr_base64".into(), doc));
    }
    let mut read = 0;
    for (at, doc) in &docs {
        let Ok(report) = Report::from_json(doc.to_string().as_bytes()) else {
            continue;
        };
        read += 1;
        let shown = std::panic::catch_unwind(|| {
            let _ = (render(&report, Palette::None), to_html(&report));
            let _ = (to_csv(&report), to_json(&report));
            let mut other = report.run.clone();
            if let Some(sh) = other.config.shard.as_mut() {
                sh.index = 1;
            }
            let merged = spate::merge::merge(
                &[("a".into(), report.run.clone()), ("b".into(), other)],
                true,
                Some(&"p99=1ms,rps=5".parse().unwrap()),
            );
            if let Ok(m) = merged {
                let json = spate::report::merge::json(&m);
                let _ = spate::report::merge::text(&m);
                serde_json::from_str::<Value>(&json).expect("the merged JSON reads back");
            }
        });
        assert!(shown.is_ok(), "{at}: a panic");
    }
    assert!(read >= docs.len() / 2, "read {read} of {}", docs.len());
}
