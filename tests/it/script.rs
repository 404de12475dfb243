//! `--script` against Debian's wrk, which no one here wrote, running the example scripts its
//! package installs: each is run by wrk and by spate against one recording server, which must
//! see the same shape of traffic from both, and what the scripts print must have the same form.
//! wrk is required in CI (SPATE_REQUIRE_TOOLS=1).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::support::{Peer, Scripted, have, spate, spate_json, succeeded, usage_error};

const SCRIPTS: &str = "/usr/share/doc/wrk/examples/scripts";

/// What a recording server was sent: each request's head and body.
pub type Seen = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A server that keeps what it was sent and answers 200 (`/authenticate` with an X-Token).
pub fn recorder() -> (Scripted, Seen) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = seen.clone();
    let server = Scripted::start(move |peer: &mut Peer| {
        while let Some(r) = peer.read_request() {
            let auth = r.head.starts_with("GET /authenticate ");
            keep.lock().unwrap().push((r.head, r.body));
            let answer: &[u8] = match auth {
                true => b"HTTP/1.1 200 OK\r\nX-Token: t0k3n\r\ncontent-length: 2\r\n\r\nok",
                false => b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok",
            };
            if !peer.write(answer) {
                return;
            }
        }
    });
    (server, seen)
}

/// Debian's wrk (when it is here: required in CI), and a recording server with its URL.
fn with_wrk() -> Option<(Scripted, Seen, String)> {
    if !have("wrk") {
        return None;
    }
    let (server, seen) = recorder();
    let url = server.url();
    Some((server, seen, url))
}

fn example(name: &str) -> String {
    Path::new(SCRIPTS).join(name).to_str().unwrap().to_owned()
}

/// Runs Debian's wrk with `args`; its stdout.
fn wrk(args: &[&str]) -> String {
    let out = std::process::Command::new("wrk")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "wrk {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `flags` split at spaces, then `rest`.
fn words<'a>(flags: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    flags
        .split_whitespace()
        .chain(rest.iter().copied())
        .collect()
}

/// spate's JSON for `flags` (words split at spaces) with `script` at `url`.
fn scripted_json(flags: &str, script: &str, url: &str) -> serde_json::Value {
    let mut args: Vec<&str> = flags.split_whitespace().collect();
    args.extend(["-s", script, url]);
    spate_json(&args)
}

/// spate's text report and the script's output, for `flags` with `script` at `url`.
fn scripted_text(flags: &str, script: &str, url: &str) -> String {
    let mut args = vec!["--no-progress"];
    args.extend(flags.split_whitespace());
    args.extend(["-s", script, url]);
    let out = spate(&args);
    succeeded(&out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Takes what the server recorded so far.
fn take(seen: &Seen) -> Vec<(String, Vec<u8>)> {
    std::mem::take(&mut *seen.lock().unwrap())
}

/// The request line of a recorded head.
fn line(head: &str) -> &str {
    head.lines().next().unwrap_or_default()
}

/// The value of header `name` in a recorded head.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(n, _)| n.trim().eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
}

/// The request line and the headers named `names` (lower case) of a recorded head.
fn shape_of(head: &str, names: &[&str]) -> (String, Vec<String>) {
    let mut picked: Vec<String> = names
        .iter()
        .filter_map(|n| header(head, n).map(|v| format!("{n}: {v}")))
        .collect();
    picked.sort();
    (line(head).to_owned(), picked)
}

/// A script of the test's own, in a directory removed when the test is done.
pub struct Own(PathBuf);

impl Own {
    pub fn new(name: &str, text: &str) -> Own {
        let dir =
            std::env::temp_dir().join(format!("spate-it-script-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        Own(path)
    }

    pub fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Own {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[test]
fn post_lua_sends_what_wrk_sends() {
    if !have("wrk") {
        return;
    }
    let (server, seen) = recorder();
    let url = format!("http://{}/form?x=1", server.addr);
    wrk(&["-t1", "-c1", "-d1s", "-s", &example("post.lua"), &url]);
    let from_wrk = take(&seen).into_iter().next().expect("wrk sent a request");
    let doc = scripted_json("-c 1 -n 5", &example("post.lua"), &url);
    assert_eq!(doc["requests"]["successful"], 5, "{}", doc["requests"]);
    // Built once: no Lua ran per request, and the report says none.
    assert!(doc["generator"]["script_us_per_request"].is_null());
    let got = take(&seen);
    assert_eq!(got.len(), 5);
    let names = ["content-type", "content-length", "host"];
    for (head, body) in &got {
        assert_eq!(
            shape_of(head, &names),
            shape_of(&from_wrk.0, &names),
            "{head}"
        );
        assert_eq!(body, &from_wrk.1);
    }
    assert!(
        from_wrk.0.starts_with("POST /form?x=1 HTTP/1.1"),
        "{}",
        from_wrk.0
    );
    assert_eq!(from_wrk.1, b"foo=bar&baz=quux");
}

/// Paths and X-Counter values of counter.lua's requests, in the order the server got them.
fn counted(got: &[(String, Vec<u8>)]) -> Vec<(u64, u64)> {
    got.iter()
        .map(|(head, _)| {
            let path = line(head).split(' ').nth(1).unwrap();
            let n = path.trim_start_matches('/').parse().expect(path);
            let c = header(head, "x-counter").expect(head).parse().unwrap();
            (n, c)
        })
        .collect()
}

#[test]
fn counter_lua_counts_its_paths_as_wrk_does() {
    let Some((_server, seen, url)) = with_wrk() else {
        return;
    };
    // wrk's requests say so: its last one may reach the server after wrk has exited, among
    // spate's.
    let counter = example("counter.lua");
    wrk(&[
        "-t1",
        "-c1",
        "-d1s",
        "-H",
        "X-Who: wrk",
        "-s",
        &counter,
        &url,
    ]);
    let by_wrk = |head: &str| header(head, "x-who") == Some("wrk");
    let from_wrk = counted(&take(&seen));
    assert!(from_wrk.len() > 10, "{}", from_wrk.len());
    let doc = scripted_json("-c 1 --threads 1 -n 40", &example("counter.lua"), &url);
    assert_eq!(doc["requests"]["successful"], 40);
    crate::schema::validate(&doc);
    // request() ran per request, and the report says what it cost.
    assert!(doc["generator"]["script_us_per_request"].as_f64().unwrap() > 0.0);
    assert!(
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "script_cost"),
        "{}",
        doc["findings"]
    );
    let spates: Vec<_> = take(&seen)
        .into_iter()
        .filter(|(h, _)| !by_wrk(h))
        .collect();
    let from_spate = counted(&spates);
    // One connection: consecutive paths, each with its counter, as wrk's. wrk calls
    // request() once before its first request and drops what it returns, so its first is /1;
    // spate's is /0.
    let first = from_wrk[0].0;
    assert_eq!(first, 1, "wrk's first counter");
    for (who, got, from) in [
        ("wrk", &from_wrk[..40], first),
        ("spate", &from_spate[..], 0),
    ] {
        let want: Vec<(u64, u64)> = (from..from + 40).map(|n| (n, n)).collect();
        assert_eq!(got, want, "{who}");
    }
    // Two threads, two connections each: a counter per thread, every value once per thread.
    scripted_json("-c 4 --threads 2 -n 40", &example("counter.lua"), &url);
    let mut got: Vec<u64> = counted(&take(&seen)).into_iter().map(|(n, _)| n).collect();
    got.sort_unstable();
    let mut want: Vec<u64> = (0..20).chain(0..20).collect();
    want.sort_unstable();
    assert_eq!(got, want);
}

#[test]
fn pipeline_lua_sends_its_three_paths_in_equal_numbers_and_counts_each_response() {
    let Some((_server, seen, url)) = with_wrk() else {
        return;
    };
    let paths = |got: &[(String, Vec<u8>)]| {
        let mut n = [0u64; 3];
        for (head, _) in got {
            let i = ["GET /?foo ", "GET /?bar ", "GET /?baz "]
                .iter()
                .position(|p| head.starts_with(p))
                .expect(head);
            n[i] += 1;
        }
        n
    };
    wrk(&["-t1", "-c2", "-d1s", "-s", &example("pipeline.lua"), &url]);
    let n = paths(&take(&seen));
    assert!(n[0] > 0 && n[0].abs_diff(n[2]) <= 2, "wrk: {n:?}");
    let doc = scripted_json("-c 2 -n 30", &example("pipeline.lua"), &url);
    assert_eq!(doc["requests"]["completed"], 30);
    assert_eq!(paths(&take(&seen)), [10, 10, 10]);
    // A count that ends inside a batch sends only the requests it admits: the server answers
    // exactly as many as spate counts.
    let doc = scripted_json("-c 1 -n 31", &example("pipeline.lua"), &url);
    assert_eq!(doc["requests"]["completed"], 31);
    assert_eq!(paths(&take(&seen)), [11, 10, 10]);
}

#[test]
fn auth_lua_authenticates_once_per_thread_then_sends_the_token() {
    let Some((_server, seen, url)) = with_wrk() else {
        return;
    };
    let check = |got: Vec<(String, Vec<u8>)>, who: &str| {
        let auth = got
            .iter()
            .filter(|(h, _)| h.starts_with("GET /authenticate "))
            .count();
        assert_eq!(auth, 2, "{who}: one /authenticate per thread");
        let rest: Vec<_> = got
            .iter()
            .filter(|(h, _)| !h.starts_with("GET /authenticate "))
            .collect();
        assert!(!rest.is_empty(), "{who}");
        for (head, _) in rest {
            assert!(head.starts_with("GET /resource "), "{who}: {head}");
            assert_eq!(header(head, "x-token"), Some("t0k3n"), "{who}: {head}");
        }
    };
    wrk(&["-t2", "-c2", "-d1s", "-s", &example("auth.lua"), &url]);
    check(take(&seen), "wrk");
    scripted_json("-c 2 --threads 2 -n 20", &example("auth.lua"), &url);
    check(take(&seen), "spate");
}

/// The count in wrk's "N requests in" line.
fn wrk_requests(out: &str) -> u64 {
    out.lines()
        .find_map(|l| l.trim().split_once(" requests in "))
        .and_then(|(n, _)| n.parse().ok())
        .expect(out)
}

#[test]
fn stop_lua_stops_each_thread_after_its_hundredth_response() {
    let Some((_server, _, url)) = with_wrk() else {
        return;
    };
    let out = wrk(&["-t2", "-c4", "-d2s", "-s", &example("stop.lua"), &url]);
    // wrk may count a response that completes in the same turn of its loop as the stop.
    assert!((200..=204).contains(&wrk_requests(&out)), "{out}");
    // A duration long enough that only the script can end the run this soon.
    let doc = scripted_json("-c 4 --threads 2 -z 60s", &example("stop.lua"), &url);
    assert_eq!(doc["requests"]["completed"], 200, "{}", doc["requests"]);
    // The run ended when its threads stopped, and its rate is over that time.
    let elapsed = doc["totals"]["elapsed_s"].as_f64().unwrap();
    assert!(elapsed < 30.0, "{elapsed}");
    let rate = doc["totals"]["requests_per_sec"].as_f64().unwrap();
    assert!((rate * elapsed - 200.0).abs() < 1.0, "{rate} x {elapsed}");
    assert_eq!(doc["generator"]["script_stopped"], true);
    // The report says the script ended it, not that it lasted -z.
    let text = scripted_text("-c 4 --threads 2 -z 60s", &example("stop.lua"), &url);
    assert!(
        text.contains("60.000 s duration, stopped early by the script"),
        "{text}"
    );
    let elapsed = text.lines().find(|l| l.contains("Elapsed")).unwrap();
    assert!(
        elapsed.ends_with("(the script stopped every thread: wrk.thread:stop())"),
        "{elapsed}"
    );
    // A run the script does not stop says nothing of the kind.
    let doc = scripted_json("-c 2 -z 300ms", &example("counter.lua"), &url);
    assert_eq!(doc["generator"]["script_stopped"], false);
}

#[test]
fn delay_lua_paces_requests_as_its_delays_imply() {
    let Some((_server, _, url)) = with_wrk() else {
        return;
    };
    // 10-50 ms before each request on each of 2 connections for 2 s: at most 2 x 2 s / 10 ms
    // requests however fast the server, and at least a quarter of 2 x 2 s / 50 ms.
    let bounds = 20..=402;
    let out = wrk(&["-t1", "-c2", "-d2s", "-s", &example("delay.lua"), &url]);
    assert!(bounds.contains(&wrk_requests(&out)), "wrk: {out}");
    let doc = scripted_json("-c 2 -z 2s", &example("delay.lua"), &url);
    let n = doc["requests"]["completed"].as_u64().unwrap();
    assert!(bounds.contains(&n), "spate: {n}");
}

/// Lines of `text` that start with `prefix`.
fn lines_with<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

#[test]
fn setup_lua_prints_the_same_lines_as_wrk() {
    let Some((_server, _, url)) = with_wrk() else {
        return;
    };
    let from_wrk = wrk(&["-t2", "-c2", "-d1s", "-s", &example("setup.lua"), &url]);
    let text = scripted_text("-c 2 --threads 2 -n 30", &example("setup.lua"), &url);
    let created = |t: &str| {
        let mut l: Vec<String> = lines_with(t, "thread ")
            .into_iter()
            .filter(|l| l.ends_with(" created"))
            .map(str::to_owned)
            .collect();
        l.sort();
        l
    };
    assert_eq!(created(&text), ["thread 1 created", "thread 2 created"]);
    assert_eq!(created(&text), created(&from_wrk));
    // done(): a line per thread, whose requests and responses add up to the run's.
    let made: Vec<(u64, u64)> = lines_with(&text, "thread ")
        .iter()
        .filter_map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            (w.get(2) == Some(&"made")).then(|| (w[3].parse().unwrap(), w[7].parse().unwrap()))
        })
        .collect();
    assert_eq!(made.len(), 2, "{text}");
    assert_eq!(made.iter().map(|m| m.0).sum::<u64>(), 30);
    assert_eq!(made.iter().map(|m| m.1).sum::<u64>(), 30);
    assert_eq!(
        lines_with(&from_wrk, "thread 1 made ").len(),
        1,
        "{from_wrk}"
    );
}

#[test]
fn report_lua_prints_spates_own_percentiles() {
    let Some((_server, _, url)) = with_wrk() else {
        return;
    };
    let from_wrk = wrk(&["-t1", "-c1", "-d1s", "-s", &example("report.lua"), &url]);
    assert_eq!(lines_with(&from_wrk, "50%,").len(), 1, "{from_wrk}");
    // With the result on stdout, what the script prints goes to stderr.
    let out = spate(&words(
        "--no-progress --format json -c 2 -n 200 -s",
        &[&example("report.lua"), &url],
    ));
    succeeded(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    for (line, key) in [("50%,", "p50"), ("90%,", "p90"), ("99%,", "p99")] {
        let printed: u64 = lines_with(&err, line)[0][line.len()..].parse().unwrap();
        let ms = doc["latency"]["percentiles"][key].as_f64().unwrap();
        assert_eq!(printed, (ms * 1e6).round() as u64 / 1000, "{line} {err}");
    }
    assert_eq!(lines_with(&err, "99.999%,").len(), 1, "{err}");
}

#[test]
fn addr_lua_prints_each_threads_address_as_wrk_does() {
    if !have("wrk") {
        return;
    }
    let (server, seen) = recorder();
    let url = format!("http://localhost:{}/", server.addr.port());
    let from_wrk = wrk(&["-t2", "-c2", "-d1s", "-s", &example("addr.lua"), &url]);
    let text = scripted_text("-c 2 --threads 2 -n 10", &example("addr.lua"), &url);
    let want = format!("thread addr: 127.0.0.1:{}", server.addr.port());
    assert_eq!(lines_with(&text, "thread addr: "), [&want, &want]);
    assert_eq!(lines_with(&from_wrk, "thread addr: "), [&want, &want]);
    assert!(!take(&seen).is_empty());
}

#[test]
fn wrk_format_writes_what_wrks_writes() {
    if !have("wrk") {
        return;
    }
    let (server, _) = recorder();
    let script = Own::new(
        "format.lua",
        "function init(args)\n\
         for _, r in ipairs({ wrk.format(nil, '/f', { ['X-B'] = '2' }), \
         wrk.format('POST', nil, nil, 'abc'), wrk.format(nil, nil, { Host = 'x' }) }) do\n\
         print('req ' .. r:gsub('\\r\\n', '|'))\n end\nend\n",
    );
    let url = format!("{}p?q=1", server.url());
    let from_wrk = wrk(&["-t1", "-c1", "-d1s", "-s", script.path(), &url]);
    let text = scripted_text("-c 1 -n 1", script.path(), &url);
    // Header order is the Lua table's, which differs from run to run in wrk: compared as sets.
    let requests = |t: &str| -> Vec<(String, Vec<String>, String)> {
        lines_with(t, "req ")
            .iter()
            .map(|l| {
                let (head, body) = l.split_once("||").unwrap();
                let mut lines = head.split('|');
                let first = lines.next().unwrap().to_owned();
                let mut fields: Vec<String> = lines.map(str::to_owned).collect();
                fields.sort();
                (first, fields, body.to_owned())
            })
            .collect()
    };
    assert_eq!(requests(&text).len(), 3, "{text}");
    assert_eq!(requests(&text), requests(&from_wrk));
}

#[test]
fn init_args_come_after_the_double_dash() {
    let (server, seen) = recorder();
    let script = Own::new(
        "init.lua",
        "function init(args)\n  wrk.path = '/' .. args[1]\n  wrk.headers['X-Second'] = args[2]\nend\n",
    );
    let url = server.url();
    let doc = spate_json(&words(
        "-c 1 -n 2 -s",
        &[script.path(), &url, "--", "first", "two words"],
    ));
    assert_eq!(doc["requests"]["successful"], 2);
    for (head, _) in take(&seen) {
        assert!(head.starts_with("GET /first HTTP/1.1"), "{head}");
        assert!(head.contains("X-Second: two words"), "{head}");
    }
}

#[test]
fn a_batch_whose_connection_closes_fails_its_unanswered_requests() {
    // One answer per connection, then a close: of each batch of three, the first is answered
    // and the two behind it can never be. The batches are wrk's example, which Debian's wrk
    // installs.
    if !have("wrk") {
        return;
    }
    let server = Scripted::start(|peer: &mut Peer| {
        if peer.read_request().is_some() {
            peer.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok");
        }
    });
    let pipeline = example("pipeline.lua");
    let url = server.url();
    let out = spate(&words(
        "--no-progress --format json -c 1 -n 6 -s",
        &[&pipeline, &url],
    ));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["requests"];
    assert_eq!(
        (r["attempted"].as_u64(), r["completed"].as_u64()),
        (Some(6), Some(2)),
        "{r}"
    );
    assert_eq!(r["failed"], 4, "{r}");
    assert_eq!(server.requests(), 2);
}

#[test]
fn script_errors_are_one_line_exit_2() {
    let (server, _) = recorder();
    let url = server.url();
    let broken = Own::new("broken.lua", "wrk.method = 'GET'\nwrk.path = \n");
    let not_http = Own::new("nothttp.lua", "function request() return 'hello' end\n");
    let not_text = Own::new("number.lua", "function request() return 7 end\n");
    let in_response = Own::new(
        "response.lua",
        "function response(status)\n  local t = nil\n  return t.field\nend\n",
    );
    let in_setup = Own::new("setup.lua", "function setup(t)\n  error('no setup')\nend\n");
    let in_done = Own::new(
        "done.lua",
        "function done(s, l, r)\n  error('not done')\nend\n",
    );
    let in_init = Own::new(
        "init_fails.lua",
        "function setup(t) end\nfunction init()\n  error('no init')\nend\n",
    );
    let each = Own::new("each.lua", "function request() return wrk.format() end\n");
    let each = each.path();
    for (args, needle) in [
        (vec!["-s", broken.path(), &url], "broken.lua:3:"),
        (
            vec!["-s", not_http.path(), &url],
            "did not return an HTTP request",
        ),
        (
            vec!["-s", not_text.path(), &url],
            "not a string with an HTTP request",
        ),
        (
            vec!["-s", in_response.path(), &url],
            "response.lua:3: attempt to index",
        ),
        (vec!["-s", in_setup.path(), &url], "setup.lua:2: no setup"),
        (vec!["-s", in_done.path(), &url], "done.lua:2: not done"),
        (
            vec!["-s", in_init.path(), &url],
            "init_fails.lua:3: no init",
        ),
        (vec!["-s", "/nonexistent/x.lua", &url], "/nonexistent/x.lua"),
        (vec![&url, "--", "a"], "there is no --script"),
        (vec!["--redirect", "3", "-s", each, &url], "--redirect"),
    ] {
        let mut all = vec!["--no-progress", "-n", "4", "-c", "2"];
        all.extend(args);
        let out = spate(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {err}");
        assert!(err.contains(needle), "{all:?}: {err}");
        let during_the_load = [
            "did not return an HTTP request",
            "not a string with an HTTP request",
            "response.lua:3: attempt to index",
        ];
        let text = String::from_utf8_lossy(&out.stdout);
        if during_the_load.contains(&needle) {
            // The run stopped there: the report of what it did, then the error.
            assert!(
                text.contains("stopped early by the script's error"),
                "{all:?}: {text}"
            );
            assert!(
                err.lines().last().unwrap().contains(needle),
                "{all:?}: {err}"
            );
        } else if !needle.contains("not done") {
            // done() fails after the report; everything else before any.
            assert!(out.stdout.is_empty(), "{all:?}: {text}");
            assert_eq!(err.lines().count(), 1, "{all:?}: {err}");
        }
    }
    let err = usage_error(&["-n", "1", "-s", broken.path(), &url]);
    assert!(err.contains("broken.lua:3:"), "{err}");
}

#[test]
fn compare_and_sweep_run_per_request_scripts_and_refuse_setup_and_done() {
    let (server, seen) = recorder();
    let url = server.url();
    let counter = Own::new(
        "count.lua",
        "n = 0\nfunction request()\n  n = n + 1\n  return wrk.format(nil, '/' .. n)\nend\n",
    );
    let (a, b) = (format!("a={url}"), format!("b={url}"));
    let out = spate(&words(
        "compare --no-progress -c 1 -n 10 --rounds 2 -s",
        &[counter.path(), &a, &b],
    ));
    succeeded(&out);
    // Each run's thread has its own state: its counter starts again, in all four runs.
    let mut paths: Vec<String> = take(&seen)
        .iter()
        .map(|(h, _)| line(h).to_owned())
        .collect();
    paths.sort();
    let mut want: Vec<String> = (1..=10)
        .flat_map(|n| std::iter::repeat_n(format!("GET /{n} HTTP/1.1"), 4))
        .collect();
    want.sort();
    assert_eq!(paths, want);
    let staged = Own::new("staged.lua", "function setup(t) end\nfunction done() end\n");
    for cmd in ["compare", "sweep"] {
        let mut args = words(cmd, &["-n", "10", "-s", staged.path()]);
        match cmd {
            "compare" => args.extend([a.as_str(), b.as_str()]),
            _ => args.extend(["--conc", "1,2", url.as_str()]),
        }
        let err = usage_error(&args);
        assert!(
            err.contains("setup() and done() belong to a single run"),
            "{err}"
        );
    }
}
