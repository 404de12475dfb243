//! Golden tests of the text report: a fixed `Summary` (synthetic stats, no network) rendered
//! without colour, in 256 colours and with `--slo` targets, compared byte for byte with the
//! files in tests/it/golden/. `SPATE_UPDATE_GOLDEN=1 cargo test golden` rewrites them.

use std::path::PathBuf;
use std::time::Duration;

use spate::plan::{Plan, Stop};
use spate::report::{Palette, Report, ReportOptions, render};
use spate::stats::{Failure, RunOutput, Stats};
use spate::target::Target;

/// A run of 10,030 attempts with a known shape: a tight body, a few slow outliers, two failure
/// classes and some 503s.
fn fixed_run() -> (Plan, RunOutput) {
    let mut plan = Plan::new(Target::parse("http://127.0.0.1:8080/api").unwrap());
    plan.connections = 50;
    plan.threads = 2;
    plan.stop = Stop::Duration(Duration::from_secs(5));
    let mut s = Stats::default();
    let add = |ns: u64, status: u16, s: &mut Stats| {
        s.attempts += 1;
        s.completed += 1;
        s.count_status(status);
        s.latency.record(ns);
        s.write.record(4_000);
        s.wait.record(ns - 5_000);
        s.read.record(1_000);
        s.bytes_in += 150;
        s.body_bytes += 12;
        s.bytes_out += 90;
    };
    for i in 0..10_000u64 {
        add(200_000 + (i % 100) * 3_000, 200, &mut s);
    }
    for _ in 0..20 {
        add(5_000_000, 503, &mut s);
    }
    for _ in 0..5 {
        add(40_000_000, 200, &mut s);
    }
    s.attempts += 5;
    for _ in 0..3 {
        s.failures.add_with(Failure::Timeout, || {
            "no complete response within 20s".into()
        });
    }
    for _ in 0..2 {
        s.failures.add_with(Failure::Closed, || {
            "Connection reset by peer (os error 104)".into()
        });
    }
    s.conns.established = 50;
    s.conns.reconnects = 5;
    for i in 0..55u64 {
        s.connect.record(100_000 + i * 1_000);
    }
    // Five requests reconnected inside their latency; five connections closed after 150.
    for i in 0..5u64 {
        s.reconnect.record(120_000 + i * 10_000);
    }
    s.per_client = (0..50u64).map(|i| 195 + i % 11).collect();
    s.per_thread = vec![4_990, 5_035];
    for i in 0..55u64 {
        s.per_connection
            .record(if i < 5 { 150 } else { 190 + i % 7 });
    }
    assert!(s.is_balanced());
    let run = RunOutput {
        stats: s,
        elapsed: Duration::from_millis(5_000),
        drain: Duration::ZERO,
        wall: Duration::from_millis(5_000),
        dns: Duration::from_micros(40),
        alt_svc: None,
        setup: Duration::from_millis(3),
        threads: 2,
        window_start: std::time::Instant::now(),
        start_unix_ms: 1_790_000_000_000,
        started_unix_us: 1_790_000_000_000_000,
        cpu: Some(Duration::from_secs(4)),
        interrupted: false,
        script_error: None,
        script_interrupted: false,
        script_stopped: false,
        nofile_limit: Some(20_000),
        cores: Some(8),
    };
    (plan, run)
}

fn check(name: &str, got: &str) {
    // The version changes with every release; the layout is what is under test.
    let got = got.replace(env!("CARGO_PKG_VERSION"), "VERSION");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/golden")
        .join(name);
    if std::env::var_os("SPATE_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if got != want {
        let line = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "{name} differs from the golden file at line {}:\n got: {:?}\nwant: {:?}\n(SPATE_UPDATE_GOLDEN=1 rewrites it)\n{got}",
            line + 1,
            got.lines().nth(line),
            want.lines().nth(line)
        );
    }
}

#[test]
fn plain_report() {
    let (plan, run) = fixed_run();
    let s = Report::new(&plan, &run, &ReportOptions::default());
    let text = render(&s, Palette::None);
    assert!(text.is_ascii() && !text.contains('\x1b'));
    let long: Vec<&str> = text.lines().filter(|l| l.len() > 80).collect();
    assert!(long.is_empty(), "lines over 80 columns: {long:#?}");
    check("report-plain.txt", &text);
}

/// The comparison with two saved runs (one slower, one faster, with other settings), gated.
#[test]
fn report_against_a_baseline() {
    use spate::analysis::Sample;
    let (plan, run) = fixed_run();
    let plain = Report::new(&plan, &run, &ReportOptions::default());
    let mut slower = plain.run.clone();
    slower.latency.percentiles.p50 = slower.latency.percentiles.p50.map(|v| v * 1.5);
    slower.totals.requests_per_sec *= 0.8;
    slower.config.url = "http://staging.example.internal:8080/api/v2/a-rather-long-path".into();
    let mut faster = plain.run.clone();
    faster.latency.percentiles.p50 = faster.latency.percentiles.p50.map(|v| v * 0.5);
    let opts = ReportOptions {
        baseline: vec![
            Sample::of("runs/monday.json".into(), &slower),
            Sample::of("runs/tuesday.json".into(), &faster),
        ],
        gates: "p50=10%,rps=5%,p99.99=1%".parse().unwrap(),
        ..ReportOptions::default()
    };
    let text = render(&Report::new(&plan, &run, &opts), Palette::None);
    let long: Vec<&str> = text.lines().filter(|l| l.len() > 80).collect();
    assert!(long.is_empty(), "lines over 80 columns: {long:#?}");
    check("report-baseline.txt", &text);
}

#[test]
fn colour_report() {
    let (plan, run) = fixed_run();
    let s = Report::new(&plan, &run, &ReportOptions::default());
    let colour = render(&s, Palette::Ansi256);
    assert!(colour.contains("\x1b[38;5;"));
    check("report-colour.txt", &colour);
    // Without the escape codes it is the plain report: colour adds nothing the words lack.
    let stripped = strip_ansi(&colour);
    assert_eq!(stripped, render(&s, Palette::None));
}

#[test]
fn report_with_slo_targets() {
    let (plan, run) = fixed_run();
    let opts = ReportOptions {
        slo: "p50=360us,p99=400us,errors=0.1%,rps=1000".parse().unwrap(),
        hist_bins: 6,
        ..ReportOptions::default()
    };
    let s = Report::new(&plan, &run, &opts);
    let text = render(&s, Palette::None);
    check("report-slo.txt", &text);
    let verdicts: Vec<(&str, bool)> = s
        .thresholds
        .iter()
        .map(|v| (v.name.as_str(), v.pass))
        .collect();
    assert_eq!(
        verdicts,
        vec![
            ("p50", true),
            ("p99", false),
            ("errors", false),
            ("rps", true)
        ]
    );
    assert_eq!(s.histogram.len(), 6);
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn wide_values_keep_the_tables_aligned() {
    let (plan, run) = fixed_run();
    // Targets from 0.360 ms to 999 ms and a target rate far wider than the measured one.
    let opts = ReportOptions {
        slo: "p50=360us,p99=999ms,errors=0.1%,rps=123456789"
            .parse()
            .unwrap(),
        hist_bins: 6,
        ..ReportOptions::default()
    };
    let text = render(&Report::new(&plan, &run, &opts), Palette::None);
    let section = |title: &str| -> Vec<&str> {
        text.lines()
            .skip_while(|l| !l.starts_with(title))
            .skip(1)
            .take_while(|l| !l.is_empty())
            .collect()
    };
    // The words' legend: one line a word, each bound ending in the same column.
    let words = section("Words against the --slo targets");
    assert_eq!(words.len(), 6, "{text}");
    let ends: Vec<Option<usize>> = words[..4].iter().map(|l| l.find(" %")).collect();
    assert!(
        ends.iter().all(|e| e.is_some() && *e == ends[0]),
        "{words:#?}"
    );
    assert!(text.contains("(p50 0.360 ms, p99 999.000 ms)"), "{text}");
    let thresholds = section("Thresholds");
    assert_eq!(thresholds.len(), 4);
    let measured: Vec<usize> = thresholds
        .iter()
        .map(|l| l.find("measured").unwrap())
        .collect();
    assert!(measured.windows(2).all(|w| w[0] == w[1]), "{thresholds:#?}");
    let ends: Vec<usize> = thresholds.iter().map(|l| l.len()).collect();
    assert!(ends.windows(2).all(|w| w[0] == w[1]), "{thresholds:#?}");
    assert!(text.lines().all(|l| l.len() <= 80), "{text}");
}

#[test]
fn a_tiny_bin_draws_less_than_a_cell() {
    let (plan, run) = fixed_run();
    let text = render(
        &Report::new(&plan, &run, &ReportOptions::default()),
        Palette::None,
    );
    let bars: Vec<(&str, &str)> = text
        .lines()
        .filter(|l| l.contains('|'))
        .map(|l| {
            let bar = l.split('|').nth(1).unwrap().trim_end();
            let share = l.split_whitespace().find(|w| w.ends_with('%')).unwrap();
            (bar, share)
        })
        .collect();
    // 0.05 % and 0.20 % of the responses are slivers; 41.90 % is many cells.
    assert!(bars.contains(&(".", "0.05%")), "{bars:?}");
    assert!(bars.contains(&(".", "0.20%")), "{bars:?}");
    assert!(
        bars.iter().any(|(b, s)| *s == "41.90%" && b.len() > 10),
        "{bars:?}"
    );
    assert!(
        bars.iter()
            .filter(|(b, _)| b.is_empty())
            .all(|(_, s)| *s == "0.00%")
    );
}

#[test]
fn error_counts_end_in_one_column_whatever_the_classes_names() {
    let (plan, mut run) = fixed_run();
    run.stats.attempts += 7;
    for _ in 0..7 {
        run.stats
            .failures
            .add_with(Failure::StreamTruncated, || "no sentinel".into());
    }
    let text = render(
        &Report::new(&plan, &run, &ReportOptions::default()),
        Palette::None,
    );
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "Errors")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), 4, "{rows:#?}");
    // Where each row's count ends: before its "  (" note.
    let ends: Vec<usize> = rows.iter().map(|r| r.find("  (").unwrap()).collect();
    assert!(ends.iter().all(|&e| e == ends[0]), "{rows:#?}");
}
