//! The binary as a user runs it: exit codes, one-line errors, the text report and the demo.

use std::process::{Command, Output};

use spate::serve::{ServeConfig, Server};

use crate::support::{Scripted, spate};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Each bad command line: one line on stderr naming the problem, exit code 2, nothing on stdout.
#[test]
fn bad_input_is_one_line_and_exit_2() {
    let u = "http://127.0.0.1:1/";
    let cases: &[(&[&str], &str)] = &[
        (&[], "a URL is required"),
        (&["ftp://127.0.0.1/"], "unsupported scheme"),
        (&["http://"], "invalid URL"),
        (&["127.0.0.1:8080/"], "http:// or https://"),
        (&["http://127.0.0.1:99999/"], "invalid URL"),
        (&["http://[::1/"], "invalid URL"),
        (&["http://u:p@127.0.0.1/"], "credentials"),
        (&["-c", "0", u], "--connections"),
        (&["-c", "many", u], "--connections"),
        (&["-c", "-5", u], ""),
        (&["-n", "5", "-c", "10", u], "smaller than --connections"),
        (&["-n", "1x", u], "--requests"),
        (&["-z", "0s", u], "--duration"),
        (&["-z", "10 parsecs", u], "--duration"),
        (&["-n", "10", "-z", "1s", u], "cannot be used with"),
        (&["-q", "0", u], "--rate"),
        (&["-q", "fast", u], "--rate"),
        (&["--max-lag", "1ms", u], "--max-lag"),
        (&["--rpc", "0", u], "--rpc"),
        (&["-t", "soon", u], "--timeout"),
        (&["-t", "100us", u], "--timeout must be at least 1ms"),
        (
            &["-t4", "-c200", "-d10s", u],
            "--threads 4 here, or run spate wrk",
        ),
        (
            &["-c200", "-d10s", u],
            "spate's is -z 10s, or run spate wrk",
        ),
        (&["--conections", "5", u], "did you mean '--connections'?"),
        (
            &["compare", "--rounsd", "3", u, u],
            "did you mean '--rounds'?",
        ),
        (
            &["comapre", u, u],
            "no command \"comapre\": did you mean spate compare?",
        ),
        (&["swep", u], "did you mean spate sweep?"),
        (&["merge", "--slo", "p99=soon", "x.json"], "p99:"),
        (&["--dry-run", "-c", "0", u], "--connections"),
        (&["localhost:8080"], "http:// or https://"),
        (&[u, "http://127.0.0.2:1/"], "is not on the origin"),
        (&["--connect-timeout", "0.5ms", u], "at least 1ms"),
        (&["-z", "1e19", u], "too long"),
        (&["-z", "18446744073709551615s", u], "too long"),
        (&["--warmup", "1e19", u], "too long"),
        (&["-z", "1e400", u], "--duration"),
        (
            &["-D", "/dev/zero", u],
            "--body-file /dev/zero: larger than 64 MiB",
        ),
        (
            &["--cacert", "/dev/zero", "https://127.0.0.1:1/"],
            "--cacert /dev/zero: larger than 4 MiB",
        ),
        (
            &[
                "--cert",
                "/dev/zero",
                "--key",
                "/dev/zero",
                "https://127.0.0.1:1/",
            ],
            "--cert /dev/zero: larger than",
        ),
        (
            &[
                "--cert",
                "Cargo.toml",
                "--key",
                "/dev/zero",
                "https://127.0.0.1:1/",
            ],
            "--key /dev/zero: larger than",
        ),
        (
            &["serve", "--tls-cert", "/dev/zero", "--tls-key", "/dev/zero"],
            "--tls-cert /dev/zero: larger than",
        ),
        (
            &["-s", "/dev/zero", u],
            "--script /dev/zero: larger than 16 MiB",
        ),
        (
            &["-s", "/nonexistent.lua", u],
            "cannot read --script /nonexistent.lua",
        ),
        (
            &["wrk", "-s", "/dev/zero", u],
            "--script /dev/zero: larger than 16 MiB",
        ),
        (
            &["mcp", "--args-file", "/dev/zero", "--tool", "t", u],
            "--args-file /dev/zero: larger than 64 MiB",
        ),
        (
            &["http://alice:S3cr3tXYZ/x@127.0.0.1:9/"],
            "http://***@127.0.0.1:9/",
        ),
        (&["--threads", "0", u], "--threads"),
        (
            &[&format!("http://{}/", "h".repeat(10_000))],
            "is 10000 characters long; a DNS name has at most 253",
        ),
        (
            &["--proxy", &format!("http://{}:3128", "p".repeat(10_000)), u],
            "is 10000 characters long; a DNS name has at most 253",
        ),
        (
            &["--connect-to", &format!("a:80:{}:80", "c".repeat(300)), u],
            "is 300 characters long",
        ),
        (&["-p", "0", "--http2", u], "--streams"),
        (&["--http1.1", "--http2", u], "--http2"),
        (&["-m", "GE T", u], "method"),
        (&["-D", "/nonexistent/body", u], "cannot read --body-file"),
        (&["-D", "/", u], "cannot read --body-file"),
        (&["-H", "broken", u], "--header"),
        (&["-H", ": empty name", u], "--header"),
        (&["-a", "nocolon", u], "--basic-auth"),
        (&["-d", "a", "-D", "b", u], "--body"),
        (&["--no-such-flag"], "--no-such-flag"),
        (&["--format", "xml", u], "--format"),
        (&["--slo", "p50=fast", u], "--slo"),
        (&["--slo", "p101=1ms", u], "--slo"),
        (&["--hist-bins", "0", u], "--hist-bins"),
        (
            &["--cacert", "/nonexistent.pem", "https://127.0.0.1:1/"],
            "nonexistent.pem",
        ),
        (
            &["--cert", "/nonexistent.pem", "https://127.0.0.1:1/"],
            "--cert",
        ),
        (&["--cert", "Cargo.toml", "https://127.0.0.1:1/"], "--key"),
        (&["--save", "/nonexistent/dir/x.json", u], "--save"),
        (
            &[
                "--save",
                "/tmp/spate-same.json",
                "--html",
                "/tmp/spate-same.json",
                u,
            ],
            "--save and --html name the same file",
        ),
        (
            &[
                "--csv-timeline",
                "/tmp/./spate-same.csv",
                "--hdr-log",
                "/tmp/spate-same.csv",
                u,
            ],
            "--csv-timeline and --hdr-log name the same file",
        ),
        (
            &[
                "report",
                "--save",
                "/tmp/r.json",
                "--html",
                "/tmp/../tmp/r.json",
                "tests/it/golden/every-section.json",
            ],
            "--save and --html name the same file",
        ),
        (&["--html", "/nonexistent/dir/x.html", u], "--html"),
        (
            &["--baseline", "/nonexistent.json", u],
            "cannot read --baseline",
        ),
        (
            &["--baseline", "Cargo.toml", u],
            "--baseline Cargo.toml: not a spate result",
        ),
        (
            &["--max-regression", "p99=5%", u],
            "--max-regression needs --baseline",
        ),
        (&["--max-regression", "latency=5%", u], "unknown metric"),
        (&["compare", u], "at least two targets"),
        (
            &["compare", "--save-dir", "Cargo.toml", u, u],
            "--save-dir Cargo.toml: not a directory",
        ),
        (
            &["compare", u, "b=notaurl"],
            "spate: b: invalid URL \"notaurl\"",
        ),
        (
            &["compare", "--reference", "c", u, u],
            "--reference c: not one of the targets",
        ),
        (&["compare", "--rounds", "1", u, u], "--rounds"),
        (
            &["compare", "--save-dir", "/nonexistent", u, u],
            "--save-dir /nonexistent: no such directory",
        ),
        (&["compare", "-v", u, u], "-v shows one exchange"),
        (
            &["compare", "--html", "/nonexistent/page.html", u, u],
            "--html /nonexistent/page.html: cannot write there",
        ),
        (
            &["compare", "--seed", "5", u, u],
            "--seed shuffles --order random",
        ),
        (&["compare", "--noise", "2", u, u], "--noise"),
        (&["compare", u, "b=ftp://x/"], "b: "),
        (&["--save", "/", u], "--save"),
        (&["--save", "/proc/spate-test.json", u], "--save"),
        (&["serve", "--port", "99999"], "--port"),
        (
            &["serve", "--stall-every", "1s", "--stall-for", "2s"],
            "--stall-for",
        ),
        (&["demo", "-c", "0"], "--connections"),
    ];
    for (args, says) in cases {
        let o = spate(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err:?}");
        assert!(err.starts_with("spate: "), "{args:?}: {err:?}");
        assert!(
            err.contains(says),
            "{args:?} should mention {says:?}: {err:?}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err:?}");
        assert!(
            !err.contains("S3cr3t"),
            "{args:?}: a password leaked: {err:?}"
        );
        assert!(o.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}

#[test]
fn unreachable_target_exits_1_with_one_line() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = spate(&["-n", "5", "-c", "1", &format!("http://127.0.0.1:{port}/")]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot connect"), "{}", stderr(&o));
}

#[test]
fn all_errors_exit_1_with_a_report() {
    let server =
        Scripted::constant(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n");
    let o = spate(&["-n", "4", "-c", "2", &server.url()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("[500]"), "{}", stdout(&o));
    // The Errors section shows them too, never "none" under a column of 500s.
    let text = stdout(&o);
    let errors = &text[text.find("\nErrors").unwrap()..];
    assert!(errors.contains("status>=400         4"), "{errors}");
    assert!(!errors.lines().nth(1).unwrap().contains("none"), "{errors}");
    let o = spate(&["-n", "4", "-c", "2", "--format", "json", &server.url()]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["requests"]["error_status"], 4);
    assert_eq!(doc["requests"]["successful"], 0);
}

#[test]
fn text_report_has_every_section() {
    let server = Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        ..ServeConfig::default()
    })
    .unwrap();
    let o = spate(&["-n", "2k", "-c", "8", "--threads", "2", &server.url()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    for section in [
        "Summary",
        "Requests/sec",
        "Attempted       2,000 = 2,000 completed + 0 failed + 0 interrupted",
        "Latency distribution",
        "p99.99",
        "Latency histogram",
        "Status codes",
        "[200]          2,000",
        "Errors",
        "Phases of completed requests",
        "Connections",
        "8 requested, 8 open at the start",
    ] {
        assert!(text.contains(section), "missing {section:?} in\n{text}");
    }
    assert!(text.is_ascii(), "the report is ASCII only");
    assert!(
        !text.contains('\x1b'),
        "no escape codes when stdout is not a terminal"
    );
    assert_eq!(server.requests(), 2000);
}

#[test]
fn demo_runs_a_real_load_test() {
    let o = spate(&["demo", "-z", "300ms", "-c", "4"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("built-in target on http://127.0.0.1:"),
        "{}",
        stderr(&o)
    );
    let text = stdout(&o);
    assert!(text.contains("4 connections"), "{text}");
    assert!(text.contains("[200]"), "{text}");
}

#[test]
fn serve_prints_its_address_and_answers() {
    use std::io::{BufRead, BufReader, Read};
    let mut child = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args([
            "serve",
            "--port",
            "0",
            "--status",
            "202",
            "--body-size",
            "3",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    reader.read_line(&mut line).unwrap();
    let url = line.split_whitespace().last().unwrap().to_string();
    let o = spate(&["-n", "10", "-c", "1", "--format", "json", &url]);
    // SIGTERM: the server prints its own count and exits 0.
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let mut rest = String::new();
    reader.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["status_codes"][0]["code"], 202);
    assert_eq!(doc["totals"]["body_bytes"], 30);
    assert_eq!(rest.trim(), "spate serve: answered 10 requests");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn help_lists_flags_examples_and_exit_codes() {
    let o = spate(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    for flag in [
        "--requests",
        "--connections",
        "--duration",
        "--timeout",
        "--connect-timeout",
        "--method",
        "--header",
        "--body",
        "--body-file",
        "--content-type",
        "--accept",
        "--basic-auth",
        "--disable-keepalive",
        "--disable-compression",
        "--threads",
        "--format",
        "--save",
        "Exit codes",
        "Examples",
    ] {
        assert!(text.contains(flag), "--help lacks {flag}");
    }
}

fn builtin() -> Server {
    crate::support::builtin(ServeConfig::default())
}

#[test]
fn thresholds_that_pass_exit_0_and_print_pass_lines() {
    let server = builtin();
    let o = spate(&[
        "-n",
        "200",
        "-c",
        "4",
        "--slo",
        "p99=1h,errors=50%,rps=1",
        &server.url(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("Thresholds (--slo)"), "{text}");
    assert_eq!(text.matches("  PASS  ").count(), 3, "{text}");
    assert!(!text.contains("FAIL"));
}

#[test]
fn a_failed_threshold_exits_3_with_a_fail_line_and_json_verdicts() {
    let server = builtin();
    let o = spate(&[
        "-n",
        "200",
        "-c",
        "4",
        "--slo",
        "p50=1ns,rps=1",
        &server.url(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("FAIL  p50"), "{text}");
    assert!(text.contains("PASS  rps"), "{text}");

    let o = spate(&[
        "-n",
        "200",
        "-c",
        "4",
        "--format",
        "json",
        "--slo",
        "p50=1ns",
        &server.url(),
    ]);
    assert_eq!(o.status.code(), Some(3));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["thresholds"][0]["name"], "p50");
    assert_eq!(doc["thresholds"][0]["pass"], false);
    assert!(doc["thresholds"][0]["measured"].as_f64().unwrap() > 0.0);
}

#[test]
fn no_success_takes_precedence_over_thresholds() {
    let server = Scripted::constant(b"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n");
    let o = spate(&["-n", "4", "-c", "2", "--slo", "errors=0%", &server.url()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("FAIL  errors"));
}

#[test]
fn hist_bins_sets_the_number_of_bars() {
    let server = builtin();
    let o = spate(&[
        "-n",
        "500",
        "-c",
        "4",
        "--hist-bins",
        "5",
        "--format",
        "json",
        &server.url(),
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let bins = doc["histogram"].as_array().unwrap().len();
    assert!(
        bins == 5 || bins == 1,
        "5 bars, or one when every latency is the same: {bins}"
    );
    let o = spate(&["-n", "500", "-c", "4", "--hist-bins", "5", &server.url()]);
    let text = stdout(&o);
    let bars = text
        .lines()
        .filter(|l| l.contains(" .. ") && l.contains('|'))
        .count();
    assert_eq!(bars, bins);
}

#[test]
fn the_report_has_insight_and_legend_when_piped() {
    let server = builtin();
    let o = spate(&["-n", "300", "-c", "4", &server.url()]);
    let text = stdout(&o);
    for part in [
        "Bands of this run's percentiles",
        ">p99x3",
        "Insight",
        "load thread",
    ] {
        assert!(text.contains(part), "missing {part:?}:\n{text}");
    }
    // Without targets, no level word that judges the run (they end percentile and bar lines).
    for word in ["violation", "slow", "good", "elite"] {
        assert!(
            !text.lines().any(|l| l.ends_with(word)),
            "{word:?} without --slo:\n{text}"
        );
    }
    assert!(!text.contains('\x1b'), "no colour into a pipe");
}

/// With a loose target, a fast run is far under it on every line of the text and the HTML:
/// no word comes from the run's own shape, and "over" appears only beside a failed target.
#[test]
fn words_against_a_target_agree_with_its_verdict() {
    let server = builtin();
    let dir = crate::support::ScratchDir::new("slo-words");
    let html = dir.file("r.html");
    let o = spate(&[
        "-n",
        "300",
        "-c",
        "4",
        "--slo",
        "p99=250ms",
        "--html",
        &html,
        &server.url(),
    ]);
    let text = stdout(&o);
    assert!(o.status.success(), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Latency distribution"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), 9, "{text}");
    for row in &rows {
        assert!(row.ends_with("far under slo p99"), "{row}\n{text}");
    }
    assert!(
        text.contains("Words against the --slo targets (p99 250.000 ms)"),
        "{text}"
    );
    // No level word of the run's own shape ends a percentile or bar line.
    for word in ["slow", "degraded", "elite", "violation"] {
        assert!(
            !text.lines().any(|l| l.ends_with(word)),
            "{word:?}:\n{text}"
        );
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("far under slo p99"),
        "the HTML's percentile words"
    );
    assert!(!page.contains("degraded") && !page.contains(">slow<"));
    // A target the run cannot meet: p99 is over it, and the verdict fails (exit 3).
    let o = spate(&["-n", "300", "-c", "4", "--slo", "p99=1us", &server.url()]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{text}");
    let p99 = text
        .lines()
        .find(|l| l.trim_start().starts_with("p99 "))
        .unwrap();
    assert!(p99.ends_with("over slo p99"), "{p99}");
}

#[test]
fn long_runs_log_a_status_line_every_10s_unless_no_progress() {
    let server = Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        delay: std::time::Duration::from_millis(20),
        ..ServeConfig::default()
    })
    .unwrap();
    let url = server.url();
    let run = |quiet: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_spate"));
        cmd.args(["-c", "2", "-z", "11s", "--format", "json"]);
        if quiet {
            cmd.arg("--no-progress");
        }
        cmd.arg(&url).output().unwrap()
    };
    // Both at once: the suite waits 11 s, not 22.
    let (logged, quiet) = std::thread::scope(|s| {
        let a = s.spawn(|| run(false));
        let b = s.spawn(|| run(true));
        (a.join().unwrap(), b.join().unwrap())
    });
    let log = stderr(&logged);
    assert_eq!(
        log.lines().count(),
        1,
        "one line at 10 s in an 11 s run: {log:?}"
    );
    assert!(
        log.starts_with("spate: 10.") && log.contains("s of 11.0s: ") && log.contains("completed"),
        "{log:?}"
    );
    assert!(
        quiet.stderr.is_empty(),
        "--no-progress: {:?}",
        stderr(&quiet)
    );
    assert_eq!(logged.status.code(), Some(0));
}

#[test]
fn demo_over_http2() {
    let o = spate(&["demo", "--http2", "-p", "4", "-z", "300ms", "-c", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("--http2 -p 4"), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("HTTP/2 (h2c)"), "{text}");
    assert!(
        text.contains("HTTP/2: 4 streams per connection asked"),
        "{text}"
    );
}

#[test]
fn a_body_file_that_disappears_during_the_run_changes_nothing() {
    // The body is read once before the run: deleting the file mid-run must not matter.
    let file = std::env::temp_dir().join(format!("spate-body-{}", std::process::id()));
    std::fs::write(&file, b"payload-from-file").unwrap();
    let watched = file.clone();
    let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = bodies.clone();
    let server = Scripted::start(move |p| {
        while let Some(r) = p.read_request() {
            seen.lock().unwrap().push(r.body);
            // Hold the first answer until the test has deleted the file (bounded).
            let t = std::time::Instant::now();
            while watched.exists() && t.elapsed() < std::time::Duration::from_secs(5) {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            if !p.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") {
                return;
            }
        }
    });
    let child = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(["-n", "50", "-c", "1", "-m", "POST", "-D"])
        .arg(&file)
        .arg(server.url())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while server.requests() == 0 && t.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::fs::remove_file(&file).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let bodies = bodies.lock().unwrap();
    assert_eq!(bodies.len(), 50);
    assert!(bodies.iter().all(|b| b == b"payload-from-file"));
}

#[test]
fn http2_against_an_http1_only_server_says_why() {
    let server = Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        ..ServeConfig::default()
    })
    .unwrap();
    let o = spate(&["--http2", "-n", "4", "-c", "2", &server.url()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("the HTTP/2 handshake failed"), "{err}");
    assert!(err.contains("h2c"), "{err}");
}

#[test]
fn one_of_each_is_singular_and_a_lower_case_head_is_head() {
    let server = Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        ..ServeConfig::default()
    })
    .unwrap();
    let o = spate(&["-n", "1", "-m", "head", "--threads", "1", &server.url()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("HEAD http://") && text.contains("  1 connection on 1 thread, 1 request,"),
        "{text}"
    );
    // HEAD: the server's 12-byte body is not sent, and none is read.
    assert!(text.contains("body 0 B per response"), "{text}");
}

/// `--dry-run` checks the command line and prints the plan and its first request, and never
/// connects: not for a run, nor for compare, sweep or mcp.
#[test]
fn dry_run_prints_the_plan_and_sends_nothing() {
    let server = Scripted::constant(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    let u = server.url();
    let o = spate(&[
        "--dry-run",
        "-c",
        "3",
        "-z",
        "2s",
        "-m",
        "POST",
        "-d",
        "hello",
        "-H",
        "Authorization: Bearer s3cret",
        &u,
    ]);
    let text = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(text.contains("nothing was sent"), "{text}");
    assert!(text.contains("3 connections on"), "{text}");
    assert!(text.contains("2.000 s duration"), "{text}");
    assert!(text.contains("> POST / HTTP/1.1"), "{text}");
    assert!(text.contains("> hello"), "{text}");
    assert!(
        text.contains("> Authorization: ***") && !text.contains("s3cret"),
        "{text}"
    );
    for args in [
        vec!["compare", "--dry-run", "-n", "10", &u, &u],
        vec!["sweep", "--dry-run", "--conc", "1,2", &u],
        vec!["mcp", "--dry-run", "--tool", "t", &u],
    ] {
        let o = spate(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).contains("nothing was sent"), "{args:?}");
    }
    // A wrong flag is refused as without it.
    let o = spate(&["--dry-run", "-c", "0", &u]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(server.connections(), 0, "nothing connected");
}
