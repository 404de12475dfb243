//! `--baseline` and `--max-regression` end to end: a run saved against a server that answers in
//! 5 ms is the baseline; a run against the same server program answering in 10 ms fails a p50
//! gate with exit 3 and a FAIL line naming p50, in the text, the JSON and the HTML page; a run
//! against the 5 ms server passes.

use std::time::Duration;

use serde_json::Value;
use spate::serve::ServeConfig;

use crate::support::{builtin, spate};

fn server(ms: u64) -> spate::serve::Server {
    builtin(ServeConfig {
        delay: Duration::from_millis(ms),
        ..ServeConfig::default()
    })
}

#[test]
fn a_slower_server_fails_the_gate_and_the_same_one_passes() {
    let (fast, slow) = (server(5), server(10));
    let dir = std::env::temp_dir().join(format!("spate-baseline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = dir.join("base.json");
    let load = ["--no-progress", "-c", "4", "-z", "1s"];
    let saved = spate(&[&load[..], &["--save", base.to_str().unwrap(), &fast.url()]].concat());
    assert_eq!(saved.status.code(), Some(0));

    let (json, page) = (dir.join("slow.json"), dir.join("slow.html"));
    let gated = |url: &str, extra: &[&str]| {
        let args = [
            &load[..],
            &[
                "--baseline",
                base.to_str().unwrap(),
                "--max-regression",
                "p50=20%,rps=30%",
            ],
            extra,
            &[url],
        ]
        .concat();
        spate(&args)
    };
    let slower = gated(
        &slow.url(),
        &[
            "--save",
            json.to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
        ],
    );
    let text = String::from_utf8_lossy(&slower.stdout);
    assert_eq!(slower.status.code(), Some(3), "{text}");
    assert!(text.contains("Against the baseline ("), "{text}");
    let fail = text
        .lines()
        .find(|l| l.contains("FAIL  p50 is"))
        .expect("a FAIL line for p50");
    assert!(
        fail.contains("worse than the baseline; at most 20 % allowed"),
        "{fail}"
    );
    assert!(text.contains("FAIL  rps is"), "{text}");

    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    crate::schema::validate(&doc);
    let rows = doc["baseline"]["rows"].as_array().unwrap();
    let p50 = rows.iter().find(|r| r["metric"] == "p50").unwrap();
    let ratio = p50["now"].as_f64().unwrap() / p50["baseline"].as_f64().unwrap();
    assert!((1.6..2.4).contains(&ratio), "10 ms against 5 ms: {ratio}");
    assert_eq!(p50["pass"], false);
    assert_eq!(p50["limit"], 20.0);
    assert!(
        rows.iter()
            .filter(|r| r["limit"].is_null())
            .all(|r| r["pass"] == true)
    );
    assert_eq!(doc["baseline"]["differences"][0]["setting"], "url");
    // spate report shows the same comparison from the saved result.
    let again = spate(&["report", json.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&again.stdout).contains(fail));
    if let Some(b) = crate::html::check_page(&page, &doc) {
        assert!(b.dom.contains(r#"id="verdict">FAIL<"#));
        assert!(b.dom.contains("data-key=\"baseline.rows.1.now\""));
    }

    let same = gated(&fast.url(), &[]);
    let text = String::from_utf8_lossy(&same.stdout);
    assert_eq!(same.status.code(), Some(0), "{text}");
    assert!(text.contains("PASS  p50 is"), "{text}");
    assert!(!text.contains("note: url"), "same settings: {text}");
    let _ = std::fs::remove_dir_all(&dir);
}
