//! `spate sweep` end to end: against a server that works on at most 4 requests at once for 50
//! ms each (Python's ThreadingHTTPServer with a semaphore; more wait in its queue) the knee is
//! near 4 and the tail grows past it; with --vs against a server 1 ms faster, the overhead at
//! each level is about +1 ms; bad input is one line and exit 2 with nothing sent.

use std::time::Duration;

use serde_json::Value;
use spate::serve::ServeConfig;

use crate::support::{Child, builtin, free_addr, have, spate, spawn_listening};

fn limited(n: u32, delay_ms: u32) -> Option<(Child, String)> {
    if !have("python3") {
        return None;
    }
    let addr = free_addr();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/servers/limited.py");
    let child = spawn_listening(
        std::process::Command::new("python3").args([
            script,
            &addr.port().to_string(),
            &n.to_string(),
            &delay_ms.to_string(),
        ]),
        addr,
    );
    Some((Child(child), format!("http://{addr}/")))
}

fn json(args: &[&str]) -> Value {
    let out = spate(args);
    crate::support::succeeded(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::schema::validate_against("docs/sweep-schema.json", &doc);
    doc
}

#[test]
fn a_server_of_four_slots_has_its_knee_near_four() {
    let Some((_server, url)) = limited(4, 50) else {
        return;
    };
    let doc = json(&[
        "sweep",
        "--no-progress",
        "--format",
        "json",
        "--threads",
        "1",
        "-z",
        "800ms",
        "--conc",
        "1,2,4,8,16",
        &url,
    ]);
    let levels = doc["levels"].as_array().unwrap();
    let at = |c: u64| {
        levels
            .iter()
            .find(|l| l["connections"] == c)
            .unwrap_or_else(|| panic!("level {c}: {doc:#}"))
    };
    let rps = |c: u64| at(c)["rps"].as_f64().unwrap();
    let p99 = |c: u64| at(c)["p99_ms"].as_f64().unwrap();
    let knee = doc["knee"]["connections"].as_u64().unwrap();
    assert!(knee == 4 || knee == 8, "knee {knee}: {doc:#}");
    // 4 slots of 50 ms: at most 80 responses a second, however many connections wait.
    assert!(rps(16) <= 84.0, "{doc:#}");
    assert!(
        rps(2) < 0.6 * rps(16),
        "below the knee the rate rises: {doc:#}"
    );
    assert!(p99(16) > 2.0 * p99(4), "past it the queue: {doc:#}");
    let last = &doc["knee"]["last"];
    assert_eq!(last["connections"], 16);
    assert!(last["p99_ratio"].as_f64().unwrap() > 2.0, "{doc:#}");
    assert!(doc["vs"].is_null() && doc["vs_knee"].is_null());
    assert!(
        levels
            .iter()
            .all(|l| l["vs"].is_null() && l["errors_pct"] == 0.0)
    );
}

#[test]
fn with_vs_each_level_shows_the_overhead_against_the_reference() {
    let slower = builtin(ServeConfig {
        delay: Duration::from_millis(3),
        ..ServeConfig::default()
    });
    let reference = builtin(ServeConfig {
        delay: Duration::from_millis(1),
        ..ServeConfig::default()
    });
    let dir = std::env::temp_dir().join(format!("spate-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let doc = json(&[
        "sweep",
        "--no-progress",
        "--format",
        "json",
        "-n",
        "100",
        "--conc",
        "1,4",
        "--save-dir",
        dir.to_str().unwrap(),
        "--vs",
        &reference.url(),
        &slower.url(),
    ]);
    assert_eq!(doc["vs"], reference.url());
    for l in doc["levels"].as_array().unwrap() {
        let d = l["overhead"]["p50_ms"].as_f64().unwrap();
        assert!((1.5..3.0).contains(&d), "about +2 ms: {l:#}");
        assert!(l["overhead"]["rps_ratio"].as_f64().unwrap() < 0.8, "{l:#}");
        assert!(l["vs"]["p50_ms"].as_f64().unwrap() < l["p50_ms"].as_f64().unwrap());
    }
    assert!(!doc["vs_knee"].is_null());
    // Each side's requests, and each run kept.
    assert_eq!((slower.requests(), reference.requests()), (200, 200));
    for name in ["c-1", "c-4", "vs-1", "vs-4"] {
        let saved: Value =
            serde_json::from_slice(&std::fs::read(dir.join(format!("{name}.json"))).unwrap())
                .unwrap();
        assert_eq!(saved["requests"]["completed"], 100, "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_text_and_markdown_forms_mark_the_knee() {
    // Answers that take 5 ms: a scheduling hiccup of the machine cannot make a level's p99
    // ten times its p50 (which would leave no level to be the knee), as it can with answers
    // of some microseconds.
    let server = builtin(ServeConfig {
        delay: Duration::from_millis(5),
        ..ServeConfig::default()
    });
    let text = spate(&[
        "sweep",
        "--no-progress",
        "-n",
        "40",
        "--conc",
        "1,2",
        &server.url(),
    ]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.starts_with(&format!(
            "spate sweep: {}, 2 levels, each -n 40\n",
            server.url()
        )),
        "{text}"
    );
    assert!(text.contains("\nKnee: "), "{text}");
    assert!(
        text.lines().any(|l| l.trim_end().ends_with("knee")),
        "{text}"
    );
    assert!(text.lines().all(|l| l.len() <= 80), "{text}");
    let md = spate(&[
        "sweep",
        "--no-progress",
        "-n",
        "40",
        "--conc",
        "1,2",
        "--format",
        "markdown",
        "--vs",
        &server.url(),
        &server.url(),
    ]);
    let md = String::from_utf8_lossy(&md.stdout);
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), 4, "header, rule, two levels:\n{md}");
    assert_eq!(
        rows[0].matches('|').count(),
        rows[2].matches('|').count(),
        "{md}"
    );
    assert!(rows[0].contains("| vs req/s |"), "{md}");
    assert_eq!(server.requests(), 80 + 160);
}

#[test]
fn bad_input_is_one_line_and_exit_2_with_nothing_sent() {
    let server = builtin(ServeConfig::default());
    let url = server.url();
    for (args, says) in [
        (vec!["sweep", url.as_str()], "--conc"),
        (
            vec!["sweep", "--conc", "1,2", "-c", "5", url.as_str()],
            "--conc sets the connections",
        ),
        (
            vec!["sweep", "--conc", "10,100", "-n", "50", url.as_str()],
            "fewer requests than the 100",
        ),
        (
            vec!["sweep", "--conc", "1", url.as_str()],
            "at least two levels",
        ),
        (
            vec!["sweep", "--conc", "1,2", "--vs", "ftp://x/", url.as_str()],
            "--vs",
        ),
        (
            vec!["sweep", "--conc", "1,2", "-v", url.as_str()],
            "-v shows one exchange",
        ),
        (
            vec![
                "sweep",
                "--conc",
                "1,2",
                "--html",
                "/nonexistent/s.html",
                url.as_str(),
            ],
            "--html /nonexistent/s.html: cannot write there",
        ),
        (
            vec![
                "sweep",
                "--conc",
                "1,2",
                "--save-dir",
                "/nonexistent/dir",
                url.as_str(),
            ],
            "no such directory",
        ),
    ] {
        let out = spate(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(out.stdout.is_empty());
    }
    assert_eq!(server.requests(), 0, "nothing sent");
}
