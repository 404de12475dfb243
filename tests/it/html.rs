//! `--html` in a real browser (Debian's chromium, headless): the page logs no console message
//! (a Content-Security-Policy violation would be one), requests nothing, renders to a screenshot
//! that is not blank, draws p99 never below p50, and every figure it shows is the embedded JSON's.
//! `spate report` makes the same page from the saved JSON, and reads the JSON back out of a page.
//! `spate compare --html` passes the same checks against its own embedded JSON.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use spate::serve::ServeConfig;

use crate::support::{builtin, have, spate};

/// What the browser made of a page.
pub struct Browsed {
    pub dom: String,
    /// Console messages (errors, CSP violations, logs).
    pub console: Vec<String>,
    /// Requests the page itself started (not the browser's own background ones).
    pub requests: Vec<String>,
    /// Share of the screenshot's pixels that are not white.
    pub inked: f64,
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("spate-html-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Opens `page` in headless Chromium twice: once for the DOM, the console and a network log,
/// once for a screenshot. `None` (after saying so) where Chromium is not installed.
pub fn browse(page: &Path) -> Option<Browsed> {
    if !have("chromium") {
        return None;
    }
    let dir = scratch(&format!(
        "browse-{}",
        page.file_stem().unwrap().to_str().unwrap()
    ));
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let netlog = dir.join("net.json");
    let shot = dir.join("shot.png");
    let chromium = |extra: &[&str]| {
        // The browser's own background traffic is switched off where it can be and sent to a
        // dead loopback port where it cannot: nothing leaves the machine.
        let out = Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--disable-default-apps",
                "--no-pings",
                "--proxy-server=http://127.0.0.1:9",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--enable-logging=stderr",
                "--v=0",
                "--window-size=1280,2400",
            ])
            .arg(format!("--user-data-dir={}", dir.join("profile").display()))
            .args(extra)
            .arg(&url)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    let dumped = chromium(&["--dump-dom", &format!("--log-net-log={}", netlog.display())]);
    let console = String::from_utf8_lossy(&dumped.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect();
    chromium(&[&format!("--screenshot={}", shot.display())]);
    let browsed = Browsed {
        dom: String::from_utf8(dumped.stdout).unwrap(),
        console,
        requests: page_requests(&std::fs::read(&netlog).unwrap()),
        inked: inked(&std::fs::read(&shot).unwrap()),
    };
    let _ = std::fs::remove_dir_all(&dir);
    Some(browsed)
}

/// The URLs of the requests a page started, from Chromium's network log: the browser's own
/// have no initiator ("not an origin"); a page's have its origin (`null` for a file).
fn page_requests(netlog: &[u8]) -> Vec<String> {
    let log: Value = serde_json::from_slice(netlog).expect("a whole network log");
    let start = &log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"];
    log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| &e["type"] == start)
        .filter(|e| e["params"]["initiator"].as_str() != Some("not an origin"))
        .filter_map(|e| e["params"]["url"].as_str().map(str::to_owned))
        .collect()
}

/// The share of non-white pixels in an 8-bit RGB or RGBA PNG (what Chromium writes).
fn inked(png: &[u8]) -> f64 {
    use std::io::Read as _;
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let (mut at, mut idat) = (8, Vec::new());
    let (mut width, mut channels) = (0usize, 0usize);
    while at + 8 <= png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let kind = &png[at + 4..at + 8];
        let data = &png[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(data[..4].try_into().unwrap()) as usize;
                assert_eq!(data[8], 8, "8 bits a channel");
                channels = match data[9] {
                    2 => 3,
                    6 => 4,
                    t => panic!("colour type {t}"),
                };
            }
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        at += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(idat.as_slice())
        .read_to_end(&mut raw)
        .unwrap();
    // Undo the per-row filters (PNG specification, section 9).
    let stride = width * channels;
    let mut prev = vec![0u8; stride];
    let (mut ink, mut pixels) = (0usize, 0usize);
    for row in raw.chunks(stride + 1) {
        let (filter, data) = (row[0], &row[1..]);
        let mut cur = vec![0u8; stride];
        for i in 0..stride {
            let a = if i >= channels { cur[i - channels] } else { 0 };
            let b = prev[i];
            let c = if i >= channels { prev[i - channels] } else { 0 };
            let pred = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((a as u16 + b as u16) / 2) as u8,
                4 => {
                    let p = a as i16 + b as i16 - c as i16;
                    let (pa, pb, pc) = (
                        (p - a as i16).abs(),
                        (p - b as i16).abs(),
                        (p - c as i16).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => panic!("filter {f}"),
            };
            cur[i] = data[i].wrapping_add(pred);
        }
        for px in cur.chunks(channels) {
            pixels += 1;
            if px[..3].iter().any(|&v| v < 235) {
                ink += 1;
            }
        }
        prev = cur;
    }
    ink as f64 / pixels.max(1) as f64
}

/// The value at a dotted path ("thresholds.0.measured") of the JSON.
fn at<'a>(doc: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(doc, |v, k| match k.parse::<usize>() {
        Ok(i) if v.is_array() => &v[i],
        _ => &v[k],
    })
}

/// A figure as the page shows it ("1,234", "0.532 ms", "1.250 s", "8.77 MiB", "20,000.0
/// req/s") read back in the unit of its JSON field, with half its last shown digit.
fn shown(text: &str, key: &str) -> Option<(f64, f64)> {
    let text = text.replace(',', "");
    let (num, unit) = text.split_once(' ').unwrap_or((&text, ""));
    let v: f64 = num.parse().ok()?;
    let decimals = num.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    let factor = match (unit, key) {
        // The JSON's times are ms unless the field's name ends in _s.
        ("ms", k) if k.ends_with("_s") => 1e-3,
        ("s", k) if !k.ends_with("_s") => 1e3,
        ("KiB", _) => 1024.0,
        ("MiB", _) => 1024.0 * 1024.0,
        ("GiB", _) => 1024.0 * 1024.0 * 1024.0,
        _ => 1.0,
    };
    Some((v * factor, 0.5 * 10f64.powi(-decimals) * factor + 1e-9))
}

/// The `data-key` cells of a page: (key, text).
pub fn cells(dom: &str) -> Vec<(String, String)> {
    dom.split("data-key=\"")
        .skip(1)
        .map(|rest| {
            let (key, rest) = rest.split_once('"').unwrap();
            let text = rest.split_once('>').unwrap().1.split_once('<').unwrap().0;
            (key.to_owned(), text.replace("&amp;", "&"))
        })
        .collect()
}

/// The points of a series' path, by its class.
pub fn series(dom: &str, class: &str) -> Vec<(f64, f64)> {
    let tag = format!("data-series=\"{class}\" d=\"");
    let Some((_, rest)) = dom.split_once(&tag) else {
        return Vec::new();
    };
    let d = rest.split_once('"').unwrap().0;
    let nums: Vec<f64> = d
        .split(|c: char| c == 'M' || c == 'L' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    nums.chunks(2).map(|p| (p[0], p[1])).collect()
}

/// What every page must be in the browser: no console message (a CSP violation would be one),
/// no request, and a screenshot with at least `inked` of its pixels drawn.
fn clean(b: &Browsed, inked: f64) {
    assert!(b.console.is_empty(), "console: {:#?}", b.console);
    assert!(b.requests.is_empty(), "requests: {:?}", b.requests);
    assert!(b.inked > inked, "a blank screenshot: {:.4} inked", b.inked);
}

/// Checks that every `data-key` figure of `dom` shows its field of `doc`; returns how many.
pub fn figures_match(dom: &str, doc: &Value) -> usize {
    let cells = cells(dom);
    for (key, text) in &cells {
        let json = at(doc, key);
        match (json.as_f64(), shown(text, key)) {
            (Some(v), Some((s, tol))) => {
                assert!((v - s).abs() <= tol, "{key}: page {text:?}, JSON {v}")
            }
            (None, _) => assert_eq!(text, "-", "{key}: JSON {json}"),
            (Some(v), None) => panic!("{key}: page {text:?}, JSON {v}"),
        }
    }
    cells.len()
}

/// Everything a page must be in the browser, whatever the run: returns what the browser made of
/// it for checks of a particular run.
pub fn check_page(page: &Path, doc: &Value) -> Option<Browsed> {
    let b = browse(page)?;
    clean(&b, 0.02);
    let figures = figures_match(&b.dom, doc);
    assert!(figures >= 40, "{figures} figures");
    // SVG y grows downwards: p99 at or above p50 is a y no larger, at every second.
    let (p50, p99) = (series(&b.dom, "p50"), series(&b.dom, "p99"));
    let mut compared = 0;
    for (x, y50) in &p50 {
        if let Some((_, y99)) = p99.iter().find(|(x99, _)| x99 == x) {
            assert!(
                y99 <= &(y50 + 0.05),
                "p99 below p50 at x {x}: {y99} > {y50}"
            );
            compared += 1;
        }
    }
    let seconds = doc["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| !s["latency_ms"].is_null())
        .count();
    assert_eq!(
        compared, seconds,
        "a point of each line for each second with responses"
    );
    Some(b)
}

#[test]
fn the_page_loads_nothing_shows_the_json_and_spate_report_makes_it_again() {
    let server = builtin(ServeConfig::default());
    let dir = scratch("run");
    let (page, json) = (dir.join("run.html"), dir.join("run.json"));
    let out = spate(&[
        "--no-progress",
        "-c",
        "8",
        "-z",
        "3s",
        "--slo",
        "p50=20ms,p99=100ms,errors=1%",
        "--html",
        page.to_str().unwrap(),
        "--save",
        json.to_str().unwrap(),
        &server.url(),
    ]);
    crate::support::succeeded(&out);
    let html = std::fs::read_to_string(&page).unwrap();
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let embedded: Value =
        serde_json::from_str(spate::report::embedded_json(&html).unwrap()).unwrap();
    assert_eq!(embedded, doc, "the page carries the saved result");
    assert!(html.contains(r#"id="verdict">PASS<"#));
    for section in [
        "throughput",
        "latency-over-time",
        "percentiles",
        "histogram",
        "phases",
        "statuses",
        "connections",
        "insight",
    ] {
        assert!(
            html.contains(&format!("<section id=\"{section}\">")),
            "{section}"
        );
    }
    for sentence in doc["insight"].as_array().unwrap() {
        let s = sentence.as_str().unwrap().replace('\'', "&#39;");
        assert!(html.contains(&s), "the insight's {s:?}");
    }

    // spate report: the same page from the JSON, and the same text from the page.
    let again = dir.join("again.html");
    let r = spate(&[
        "report",
        json.to_str().unwrap(),
        "--html",
        again.to_str().unwrap(),
    ]);
    crate::support::succeeded(&r);
    assert_eq!(std::fs::read_to_string(&again).unwrap(), html);
    let from_page = spate(&["report", page.to_str().unwrap()]);
    let from_json = spate(&["report", json.to_str().unwrap()]);
    assert_eq!(from_page.status.code(), Some(0));
    assert_eq!(from_page.stdout, from_json.stdout);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&*String::from_utf8_lossy(&from_json.stdout))
    );

    if let Some(b) = check_page(&page, &doc) {
        assert!(b.dom.contains("id=\"verdict\""));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Guards the guards: a page that breaks the rules is caught by the same checks.
#[test]
fn the_browser_checks_catch_a_page_that_loads_or_runs_something() {
    let dir = scratch("guard");
    let loads = dir.join("loads.html");
    std::fs::write(
        &loads,
        "<!DOCTYPE html><title>x</title><p>text</p><img src=\"http://127.0.0.1:9/x.png\">",
    )
    .unwrap();
    let runs = dir.join("runs.html");
    std::fs::write(
        &runs,
        "<!DOCTYPE html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\"><title>x</title><script>document.title='ran'</script>",
    )
    .unwrap();
    if let (Some(l), Some(r)) = (browse(&loads), browse(&runs)) {
        assert_eq!(l.requests, ["http://127.0.0.1:9/x.png"]);
        assert!(l.inked < 0.02, "nearly blank: {}", l.inked);
        assert!(
            r.console
                .iter()
                .any(|c| c.contains("Content Security Policy")),
            "{:?}",
            r.console
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The JSON of the data block `id` of a page.
pub(crate) fn data_block(page: &str, id: &str) -> Value {
    let open = format!(r#"<script type="application/json" id="{id}">"#);
    let start = page.find(&open).expect(id) + open.len();
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}

#[test]
fn a_comparison_page_overlays_the_targets_and_shows_its_json() {
    let fast = builtin(ServeConfig {
        delay: std::time::Duration::from_millis(1),
        ..ServeConfig::default()
    });
    let slow = builtin(ServeConfig {
        delay: std::time::Duration::from_millis(4),
        ..ServeConfig::default()
    });
    let dir = scratch("compare");
    let page = dir.join("compare.html");
    let out = spate(&[
        "compare",
        "--no-progress",
        "-c",
        "2",
        "-n",
        "60",
        "--rounds",
        "2",
        "--format",
        "json",
        "--html",
        page.to_str().unwrap(),
        &format!("fast={}", fast.url()),
        &format!("slow={}", slow.url()),
    ]);
    crate::support::succeeded(&out);
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    let doc = data_block(&html, "spate-compare");
    assert_eq!(doc, printed, "the page holds what --format json prints");
    crate::schema::validate_against("docs/compare-schema.json", &doc);
    let Some(b) = browse(&page) else { return };
    clean(&b, 0.02);
    assert_eq!(
        figures_match(&b.dom, &doc),
        2 * (8 + 6),
        "medians (8 measures) and ladders (6 rungs)"
    );
    // The first plot is the percentile curves: the slower target's lies higher (a smaller y)
    // over the body of the distribution (a hiccup of the machine may lift a tail).
    let (f, s) = (series(&b.dom, "t0"), series(&b.dom, "t1"));
    assert!(!f.is_empty() && !s.is_empty(), "a curve per target");
    for ((_, yf), (_, ys)) in f.iter().zip(&s).take(f.len().min(s.len()) / 3) {
        assert!(ys < yf, "slow below fast: {ys} >= {yf}");
    }
    assert!(b.dom.contains(r#"aria-label="req/s""#), "the rounds' rates");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shown_figures_read_back_in_their_fields_units() {
    assert_eq!(
        shown("1,234", "requests.completed"),
        Some((1234.0, 0.5 + 1e-9))
    );
    let (v, tol) = shown("1.250 s", "latency.max_ms").unwrap();
    assert!((v - 1250.0).abs() < 1e-9 && (tol - 0.5).abs() < 1e-6);
    let (v, _) = shown("8.000 s", "totals.elapsed_s").unwrap();
    assert_eq!(v, 8.0);
    let (v, _) = shown("2.504 s", "latency.percentiles.p99_99").unwrap();
    assert_eq!(v, 2504.0, "percentiles are ms without saying so");
    let (v, _) = shown("0.532 ms", "totals.elapsed_s").unwrap();
    assert!((v - 0.000532).abs() < 1e-12);
    assert_eq!(shown("-", "latency.max_ms"), None);
}

#[test]
fn a_sweep_page_draws_each_level_and_shows_its_json() {
    let server = builtin(ServeConfig::default());
    let dir = scratch("sweep");
    let page = dir.join("sweep.html");
    let out = spate(&[
        "sweep",
        "--no-progress",
        "--format",
        "json",
        "-n",
        "60",
        "--conc",
        "1,2,4",
        "--html",
        page.to_str().unwrap(),
        &server.url(),
    ]);
    crate::support::succeeded(&out);
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    let doc = data_block(&html, "spate-sweep");
    assert_eq!(doc, printed, "the page holds what --format json prints");
    crate::schema::validate_against("docs/sweep-schema.json", &doc);
    let Some(b) = browse(&page) else { return };
    // A short page in a tall window: a table and two small charts.
    clean(&b, 0.005);
    assert_eq!(figures_match(&b.dom, &doc), 3 * 6, "six figures a level");
    // The rate's line: a point a level, left to right.
    let rate = series(&b.dom, "t0");
    assert_eq!(rate.len(), 3, "{rate:?}");
    assert!(rate.windows(2).all(|w| w[0].0 < w[1].0), "{rate:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server whose every response is an OpenAI-style token stream: five chunks with content 5 ms
/// apart, a usage chunk, then `[DONE]`.
fn token_server() -> crate::support::Scripted {
    crate::support::Scripted::start(|peer| {
        while peer.read_request().is_some() {
            let mut body = Vec::new();
            let mut ok = peer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
            );
            for i in 0..7 {
                body.clear();
                match i {
                    0..5 => body
                        .extend_from_slice(br#"data: {"choices":[{"delta":{"content":"tok"}}]}"#),
                    5 => body.extend_from_slice(
                        br#"data: {"choices":[],"usage":{"completion_tokens":5}}"#,
                    ),
                    _ => body.extend_from_slice(b"data: [DONE]"),
                }
                body.extend_from_slice(b"\n\n");
                let mut chunk = format!("{:x}\r\n", body.len()).into_bytes();
                chunk.extend_from_slice(&body);
                chunk.extend_from_slice(b"\r\n");
                ok &= peer.write(&chunk);
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            if !ok || !peer.write(b"0\r\n\r\n") {
                return;
            }
        }
    })
}

#[test]
fn a_streaming_run_shows_its_streams_on_the_page() {
    let server = token_server();
    let dir = scratch("stream");
    let (page, json) = (dir.join("stream.html"), dir.join("stream.json"));
    let out = spate(&[
        "--no-progress",
        "-c",
        "2",
        "-n",
        "20",
        "--done",
        "[DONE]",
        "--usage",
        "openai",
        "--html",
        page.to_str().unwrap(),
        "--save",
        json.to_str().unwrap(),
        &format!("http://{}/", server.addr),
    ]);
    crate::support::succeeded(&out);
    let html = std::fs::read_to_string(&page).unwrap();
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        doc["streaming"]["tokens"]["total"], 100,
        "{}",
        doc["streaming"]
    );
    assert!(html.contains("<section id=\"streaming\">"));
    let keys: Vec<String> = cells(&html).into_iter().map(|(k, _)| k).collect();
    for key in [
        "streaming.responses",
        "streaming.data_events",
        "streaming.ends.done",
        "streaming.truncated",
        "streaming.tokens.total",
        "streaming.tokens.per_second",
        "streaming.first_data.p50_ms",
        "streaming.gap.p99_ms",
        "streaming.longest_gap.max_ms",
    ] {
        assert!(keys.iter().any(|k| k == key), "{key} not on the page");
    }
    // The figures are the JSON's, in the browser too.
    figures_match(&html, &doc);
    check_page(&page, &doc);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_request_list_shows_each_url_on_the_page() {
    let server = builtin(ServeConfig::default());
    let dir = scratch("list");
    let (page, json) = (dir.join("list.html"), dir.join("list.json"));
    let base = server.url();
    let (a, b) = (format!("{base}a"), format!("{base}b"));
    let out = spate(&[
        "--no-progress",
        "-c",
        "2",
        "-n",
        "40",
        "--html",
        page.to_str().unwrap(),
        "--save",
        json.to_str().unwrap(),
        &a,
        &b,
    ]);
    crate::support::succeeded(&out);
    let html = std::fs::read_to_string(&page).unwrap();
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(html.contains("<section id=\"per-url\">"));
    let keys: Vec<String> = cells(&html).into_iter().map(|(k, _)| k).collect();
    for key in [
        "per_url.0.completed",
        "per_url.1.p99_ms",
        "per_url.1.error_status",
    ] {
        assert!(keys.iter().any(|k| k == key), "{key} not on the page");
    }
    assert_eq!(doc["per_url"][1]["completed"], 20);
    figures_match(&html, &doc);
    check_page(&page, &doc);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A --stages run draws the load it asked for beside what it did, with each stage's start and
/// the breaking point marked on the load and latency charts; in the browser the page is clean.
#[test]
fn a_staged_run_draws_its_target_stages_and_breaking_point() {
    let server = builtin(ServeConfig::default());
    let dir = scratch("stages");
    let (page, json) = (dir.join("stages.html"), dir.join("stages.json"));
    // A p99 target no response meets: the first whole second breaks.
    let out = spate(&[
        "--no-progress",
        "-c",
        "4",
        "--stages",
        "1s:100/s,1s:100/s,1s:300/s",
        "--slo",
        "p99=1us",
        "--html",
        page.to_str().unwrap(),
        "--save",
        json.to_str().unwrap(),
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(3), "an SLO that fails");
    let html = std::fs::read_to_string(&page).unwrap();
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(html.contains("<section id=\"load\">"));
    let scheduled: Vec<u64> = doc["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["scheduled"].as_u64().unwrap())
        .collect();
    assert_eq!(scheduled, [50, 100, 200], "the profile's area per second");
    // The target's line: a point per second, higher (a smaller y) as the schedule grows.
    let goal = series(&html, "goal");
    assert_eq!(goal.len(), 3, "{goal:?}");
    assert!(goal[0].1 > goal[1].1 && goal[1].1 > goal[2].1, "{goal:?}");
    // Stages 2 and 3 start inside the run, on both charts; the breaking point too.
    assert_eq!(html.matches("<line class=\"stage\"").count(), 4);
    assert!(html.contains("stage 3</text>"));
    let b = &doc["breaking_point"];
    assert_eq!(b["t_s"], 0.0, "{b}");
    assert_eq!(html.matches("<line class=\"broke\"").count(), 2);
    assert!(html.contains("breaking point 50.0/s</text>"), "{b}");
    check_page(&page, &doc);
    let _ = std::fs::remove_dir_all(&dir);
}
