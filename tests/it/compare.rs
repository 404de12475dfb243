//! `spate compare` end to end against servers with a known difference: the built-in server
//! answering in 5 ms, the same in 10 ms, and a second one in 5 ms. The 10 ms one is slower on
//! requests/sec and p50 by about half and twice; the twin shows no difference on either (their
//! medians differ by well under the 2 % noise floor); --save-dir keeps every round's result.

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

/// The line of `target` in the section titled `title`.
fn line<'a>(text: &'a str, title: &str, target: &str) -> &'a str {
    let section = text.split(&format!("\n{title}\n")).nth(1).expect(title);
    section
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{target} ")))
        .unwrap_or_else(|| panic!("{target} in {title}:\n{text}"))
}

fn ratio(line: &str) -> f64 {
    let x = line
        .split_whitespace()
        .find(|w| w.ends_with('x') && w.len() > 1)
        .expect(line);
    x.trim_end_matches('x').parse().unwrap()
}

#[test]
fn a_server_twice_as_slow_is_slower_and_a_twin_is_the_same() {
    let (fast, slow, twin) = (server(5), server(10), server(5));
    let dir = std::env::temp_dir().join(format!("spate-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = spate(&[
        "compare",
        "-c",
        "4",
        "-z",
        "500ms",
        "--rounds",
        "4",
        "--save-dir",
        dir.to_str().unwrap(),
        &format!("fast={}", fast.url()),
        &format!("slow={}", slow.url()),
        &format!("twin={}", twin.url()),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        line(&text, "Requests/sec", "fast").ends_with("reference"),
        "{text}"
    );

    let rps = line(&text, "Requests/sec", "slow");
    assert!(rps.ends_with("slower"), "{rps}");
    assert!((0.4..0.6).contains(&ratio(rps)), "{rps}");
    let p50 = line(&text, "Latency p50", "slow");
    assert!(p50.ends_with("slower"), "{p50}");
    assert!((1.7..2.3).contains(&ratio(p50)), "{p50}");
    assert!(
        p50.contains("p 0.029"),
        "4 and 4 rounds, fully apart: {p50}"
    );
    for title in ["Requests/sec", "Latency p50"] {
        let l = line(&text, title, "twin");
        assert!(l.ends_with(" ~"), "the same server: {l}");
    }
    assert!(
        text.contains("Latency, the responses of all rounds together"),
        "{text}"
    );
    assert!(
        !text.contains("no\ndifference can show"),
        "4 rounds can show one"
    );

    // Every round of every target, as an ordinary result.
    for name in ["fast", "slow", "twin"] {
        for round in 1..=4 {
            let path = dir.join(format!("{name}-{round}.json"));
            let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            assert!(
                doc["requests"]["completed"].as_u64().unwrap() > 0,
                "{path:?}"
            );
        }
    }
    crate::schema::validate(
        &serde_json::from_slice(&std::fs::read(dir.join("slow-2.json")).unwrap()).unwrap(),
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A quick comparison of two built-in servers answering in 1 ms: 3 rounds of 40 requests.
fn three_quick_rounds(extra: &[&str], a: &str, b: &str) -> std::process::Output {
    let (sa, sb) = (server(1), server(1));
    let targets = [a.replace("URL", &sa.url()), b.replace("URL", &sb.url())];
    let base = [
        "compare",
        "--no-progress",
        "-c",
        "2",
        "-n",
        "40",
        "--rounds",
        "3",
    ];
    let targets: Vec<&str> = targets.iter().map(String::as_str).collect();
    spate(&[&base[..], extra, &targets].concat())
}

#[test]
fn three_rounds_are_said_to_be_too_few_and_markdown_is_a_table() {
    let out = three_quick_rounds(
        &["--order", "random", "--seed", "7", "--format", "markdown"],
        "URL",
        "b=URL",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "spate compare: targets in a random order each round (--seed 7 repeats it)\n",
        "--no-progress leaves only the seed"
    );
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), 4, "header, rule and a row a target:\n{text}");
    assert!(rows[2].contains("| reference |"), "{text}");
    assert!(
        rows[3].starts_with("| b |") && rows[3].contains(" (p "),
        "{text}"
    );
    assert!(
        text.contains("smallest possible p is 0.100, above alpha): use --rounds 4 or more"),
        "{text}"
    );
}

#[test]
fn the_json_form_matches_its_schema_and_says_what_the_text_says() {
    let out = three_quick_rounds(&["--format", "json"], "a=URL", "b=URL");
    crate::support::succeeded(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::schema::validate_against("docs/compare-schema.json", &doc);
    assert_eq!(doc["reference"], "a");
    assert_eq!(doc["order"], "given");
    assert!((doc["smallest_p"].as_f64().unwrap() - 0.1).abs() < 1e-12);
    assert_eq!(doc["rounds_needed"], 4);
    let rps = &doc["targets"][1]["rows"][0];
    assert_eq!(rps["measure"], "rps");
    assert_eq!(rps["values"].as_array().unwrap().len(), 3);
    assert_eq!(
        rps["change"]["verdict"], "same",
        "3 rounds cannot show a difference"
    );
    assert!(
        doc["targets"][0]["rows"][0]["change"].is_null(),
        "the reference"
    );
    let mut wrong = doc.clone();
    wrong["targets"][0]["surprise"] = Value::from(1);
    assert!(
        std::panic::catch_unwind(|| crate::schema::validate_against(
            "docs/compare-schema.json",
            &wrong
        ))
        .is_err(),
        "the schema is strict"
    );
}

#[test]
fn an_unreachable_target_stops_the_comparison_with_its_name_and_exit_1() {
    let a = server(1);
    let out = spate(&[
        "compare",
        "--no-progress",
        "-n",
        "10",
        &a.url(),
        "dead=http://127.0.0.1:9/",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("spate compare: dead: cannot connect"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_targets_file_gives_one_target_flags_of_its_own() {
    let sa = server(1);
    let sb = builtin(ServeConfig {
        h2c: true,
        ..ServeConfig::default()
    });
    let dir = std::env::temp_dir().join(format!("spate-compare-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("targets");
    std::fs::write(
        &file,
        format!("# h2c with fewer requests\nb={} --http2 -n 20\n", sb.url()),
    )
    .unwrap();
    let out = spate(&[
        "compare",
        "--no-progress",
        "-c",
        "2",
        "-n",
        "40",
        "--rounds",
        "2",
        "--save-dir",
        dir.to_str().unwrap(),
        &format!("a={}", sa.url()),
        "--targets",
        file.to_str().unwrap(),
    ]);
    crate::support::succeeded(&out);
    let saved = |name: &str| -> Value {
        serde_json::from_slice(&std::fs::read(dir.join(name)).unwrap()).unwrap()
    };
    for round in 1..=2 {
        let (a, b) = (
            saved(&format!("a-{round}.json")),
            saved(&format!("b-{round}.json")),
        );
        assert_eq!(a["config"]["protocol"], "HTTP/1.1");
        assert_eq!(b["config"]["protocol"], "HTTP/2 (h2c)");
        assert_eq!(a["requests"]["completed"], 40);
        assert_eq!(b["requests"]["completed"], 20);
    }
    assert_eq!(
        (sa.requests(), sb.requests()),
        (80, 40),
        "each server's own count"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Python's own http.server on a free loopback port, serving `dir`; killed when dropped.
struct PyServer(std::process::Child, String);

impl Drop for PyServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn python_http_server(dir: &std::path::Path) -> PyServer {
    let addr = crate::support::free_addr();
    let child = crate::support::spawn_listening(
        std::process::Command::new("python3").args([
            "-m",
            "http.server",
            "--bind",
            "127.0.0.1",
            "--directory",
            dir.to_str().unwrap(),
            &addr.port().to_string(),
        ]),
        addr,
    );
    PyServer(child, format!("http://{addr}/index.html"))
}

#[test]
fn four_real_servers_make_one_table_to_paste() {
    use crate::nginx::Nginx;
    use crate::proxy::{SECRET, Tinyproxy};
    if !crate::support::have("nginx")
        || !crate::support::have("tinyproxy")
        || !crate::support::have("python3")
    {
        return;
    }
    let ok = "location / { return 200 \"ok\\n\"; }";
    let plain = Nginx::start("compare-h1", "", "", ok);
    let h2c = Nginx::start("compare-h2c", "http2", "", ok);
    let proxy = Tinyproxy::start("compare");
    let dir = std::env::temp_dir().join(format!("spate-compare-four-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("index.html"), "ok\n").unwrap();
    let python = python_http_server(&dir);
    let file = dir.join("servers.txt");
    std::fs::write(
        &file,
        format!(
            "# name=URL  flags for that target alone\n\
             nginx-h2c=http://{}/ --http2 -p 2\n\
             via-tinyproxy=http://{}/ --proxy {}\n\
             python=\"{}\"\n",
            h2c.addr,
            plain.addr,
            proxy.url(SECRET),
            python.1
        ),
    )
    .unwrap();
    let out = spate(&[
        "compare",
        "--no-progress",
        "-c",
        "2",
        "-n",
        "50",
        "--rounds",
        "2",
        "--format",
        "markdown",
        &format!("nginx=http://{}/", plain.addr),
        "--targets",
        file.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}{err}");
    assert!(
        !text.contains(SECRET) && !err.contains(SECRET),
        "{text}{err}"
    );
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(
        rows.len(),
        2 + 4,
        "header, rule and a row a server:\n{text}"
    );
    for (row, name) in rows[2..]
        .iter()
        .zip(["nginx", "nginx-h2c", "via-tinyproxy", "python"])
    {
        assert!(row.starts_with(&format!("| {name} | ")), "{text}");
        assert!(row.contains("| 0.00 % |"), "every request answered: {text}");
    }
    // Each server's own count: plain nginx saw its own target's and the proxied requests.
    assert_eq!(plain.logged(), 2 * 50 * 2);
    assert_eq!(h2c.logged(), 2 * 50);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn names_that_would_share_a_saved_file_are_refused_before_any_round() {
    let (sa, sb) = (server(0), server(0));
    let dir = crate::support::ScratchDir::new("compare-clash");
    for (a, b) in [("新", "旧"), ("x:1", "x_1"), ("a/b", "a_b")] {
        let err = crate::support::usage_error(&[
            "compare",
            "--no-progress",
            "-n",
            "10",
            "--rounds",
            "2",
            "--save-dir",
            dir.0.to_str().unwrap(),
            &format!("{a}={}", sa.url()),
            &format!("{b}={}", sb.url()),
        ]);
        assert!(err.contains("would be saved to the same files"), "{err}");
    }
    assert_eq!((sa.requests(), sb.requests()), (0, 0), "nothing was sent");
    assert_eq!(std::fs::read_dir(&dir.0).unwrap().count(), 0);
}

#[test]
fn target_names_are_printed_escaped() {
    let out = three_quick_rounds(&[], "\u{1b}]0;pwned\u{7}\nFORGED=URL", "b=URL");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("\\x1b]0;pwned\\x07\\nFORGED"), "{text}");
    crate::outside_text::assert_shown_safely("compare", &text, false);
    crate::outside_text::assert_shown_safely(
        "compare's stderr",
        &String::from_utf8_lossy(&out.stderr),
        false,
    );
}

/// A server that answers only the first 2 of every 8 connections it accepts; the others read
/// their request and stay silent until spate closes them.
fn answers_two_of_eight() -> crate::support::Scripted {
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    crate::support::Scripted::start(move |p| {
        let n = accepted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let answer = n % 8 < 2;
        while p.read_request().is_some() {
            if answer && !p.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") {
                return;
            }
        }
    })
}

/// Connections that never got an answer show per target in every form, and in the verdict:
/// 6 of 8 in every round is 75 % against 0 %, "more unanswered" at p 0.029 with 4 rounds.
#[test]
fn connections_never_answered_show_and_count_in_the_verdict() {
    let all = crate::support::Scripted::constant(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    let some = answers_two_of_eight();
    let dir = crate::support::ScratchDir::new("compare-unanswered");
    let html = dir.file("c.html");
    let (a, b) = (format!("all={}", all.url()), format!("some={}", some.url()));
    let base = [
        "compare",
        "--no-progress",
        "-c",
        "8",
        "--threads",
        "1",
        "-z",
        "300ms",
    ];
    let out = spate(&[&base[..], &["--rounds", "4", "--html", &html, &a, &b]].concat());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    let title = "Connections never answered (not opened, or no response; % of -c)";
    assert!(line(&text, title, "all").contains("0.00 %"), "{text}");
    let l = line(&text, title, "some");
    assert!(l.contains("75.00 %"), "{l}");
    assert!(l.contains("+75.00 pp"), "{l}");
    assert!(l.ends_with("p 0.029  more unanswered"), "{l}");
    assert!(
        text.contains("some: in the median round 75.00 % of its connections never got a response"),
        "{text}"
    );
    assert!(!text.contains("all: in the median round"), "{text}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("never answered") && page.contains("more unanswered"));
    // The page holds the comparison's JSON.
    let doc = crate::html::data_block(&page, "spate-compare");
    crate::schema::validate_against("docs/compare-schema.json", &doc);
    let row = |t: usize| {
        doc["targets"][t]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["measure"] == "unanswered")
            .unwrap()
            .clone()
    };
    assert_eq!(
        row(1)["values"],
        serde_json::json!([75.0, 75.0, 75.0, 75.0])
    );
    assert_eq!(row(1)["change"]["verdict"], "worse");
    assert_eq!(row(0)["median"], 0.0);

    let out = spate(
        &[
            &base[..],
            &["--rounds", "2", "--format", "markdown", &a, &b],
        ]
        .concat(),
    );
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("| errors | unanswered |"), "{md}");
    assert!(
        md.lines()
            .any(|l| l.starts_with("| some |") && l.contains("| 75.00 % |")),
        "{md}"
    );
}

/// `--stages` is a load flag like any other: every round of every target follows the profile,
/// so each server answers the profile's area each round (20 a round here, 2 rounds).
#[test]
fn every_round_follows_the_stages() {
    let (a, b) = (server(1), server(1));
    let out = spate(&[
        "compare",
        "--no-progress",
        "-c",
        "2",
        "--stages",
        "1s:20/s,1s:10/s",
        "--rounds",
        "2",
        "--format",
        "json",
        &format!("a={}", a.url()),
        &format!("b={}", b.url()),
    ]);
    crate::support::succeeded(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::schema::validate_against("docs/compare-schema.json", &doc);
    // 10 on the ramp up to 20/s, 15 on the ramp down to 10/s.
    assert_eq!((a.requests(), b.requests()), (50, 50));
    let rps = &doc["targets"][1]["rows"][0];
    assert_eq!(rps["measure"], "rps");
    assert_eq!(rps["values"], serde_json::json!([12.5, 12.5]), "{rps}");
    // The text says what each round ran.
    let out = spate(&[
        "compare",
        "--no-progress",
        "-c",
        "2",
        "--stages",
        "1s:20/s",
        "--rounds",
        "2",
        &format!("a={}", a.url()),
        &format!("b={}", b.url()),
    ]);
    crate::support::succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("Each round: 2 connections")
                && l.contains("open model following --stages 1s:20/s")),
        "{text}"
    );
}
