//! Streamed responses from a server no one here wrote: PyPI's `llmock`, an OpenAI-compatible
//! mock, set to a 200 ms first-token latency and 20 ms between chunks. Its event stream goes
//! through spate's HTTP/1.1 response parser into the streaming `Meter`, read by read with each
//! read's time, as the lane hands them over: the meter must see the stream's kind, its first
//! token no sooner than the latency, the gaps no shorter than the delay, the `[DONE]` sentinel
//! and the usage's output tokens; over HTTP/3 too, llmock served by hypercorn. llmock and
//! hypercorn live in target/test-venv (scripts/test-venv.sh).

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::rc::Rc;
use std::time::Duration;

use spate::clock::Tick;
use spate::proto::h1::{HeadMemo, Progress, ResponseParser};
use spate::proto::stream::{Facts, Meter, Rules, Unit};
use spate::proto::{Events, Media};

use crate::nginx::Nginx;
use crate::schema::validate;
use crate::support::{
    Child, Peer, Scripted, failed_json, free_addr, have, spate, spate_json, spawn_listening,
    test_python, usage_error,
};

/// The meter, and what the head said.
struct Watch<G> {
    meter: Meter<G>,
    head: Option<(u16, Media)>,
}

impl<G: FnMut(u64)> Events for Watch<G> {
    fn read_at(&mut self, at: Tick) {
        self.meter.read_at(at);
    }
    fn head(&mut self, status: u16, media: Media) {
        self.head = Some((status, media));
        self.meter.head(status, media);
    }
    fn data(&mut self, bytes: &[u8]) {
        self.meter.data(bytes);
    }
}

/// One streamed chat completion from `addr`: its head, what the meter saw, the gaps it was
/// told of, and when the request had been written.
fn stream_once(addr: std::net::SocketAddr) -> (Option<(u16, Media)>, Facts, Vec<u64>, Tick) {
    let body = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}"#;
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut socket = TcpStream::connect(addr).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    socket.write_all(request.as_bytes()).unwrap();
    let written = Tick::now();
    let mut gaps = Vec::new();
    let rules = Rc::new(Rules {
        done: Some(b"[DONE]".to_vec()),
        openai: true,
        ..Rules::default()
    });
    let mut watch = Watch {
        meter: Meter::new(Unit::Sse, rules, |g| gaps.push(g)),
        head: None,
    };
    let mut parser = ResponseParser::new(false);
    let mut heads = HeadMemo::default();
    let (mut buf, mut held) = (vec![0u8; 64 * 1024], Vec::new());
    loop {
        let n = socket.read(&mut buf).unwrap();
        assert!(n > 0, "llmock closed before the response ended");
        watch.read_at(Tick::now());
        held.extend_from_slice(&buf[..n]);
        match parser.feed_to(&held, &mut heads, &mut watch).unwrap() {
            Progress::Complete { .. } => break,
            Progress::NeedMore { consumed } => {
                held.drain(..consumed);
            }
        }
    }
    let facts = watch.meter.finish();
    (watch.head, facts, gaps, written)
}

/// llmock with a 200 ms first-token latency and 20 ms between chunks, or `None` (skipped)
/// without the test virtualenv.
fn llmock() -> Option<(Child, std::net::SocketAddr)> {
    let python = test_python("llmock")?;
    let llmock = python.with_file_name("llmock");
    let addr = free_addr();
    let server = Child(spawn_listening(
        std::process::Command::new(llmock).args([
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            &addr.port().to_string(),
            "--latency-ms",
            "200",
            "--stream-chunk-delay-ms",
            "20",
            "--response-style",
            "static",
            "--log-level",
            "warning",
        ]),
        addr,
    ));
    Some((server, addr))
}

#[test]
fn an_llm_stream_shows_its_first_token_latency_and_its_chunk_delay() {
    let Some((_server, addr)) = llmock() else {
        return;
    };
    let (head, f, gaps, written) = stream_once(addr);
    assert_eq!(head, Some((200, Media::EventStream)), "{f:?}");
    assert!(f.done, "the [DONE] sentinel: {f:?}");
    assert!(f.data_units >= 3, "tokens: {f:?}");
    assert!(
        f.units > f.data_units,
        "a role chunk and a usage chunk: {f:?}"
    );
    assert!(f.tokens.is_some_and(|t| t >= f.data_units), "usage: {f:?}");
    let ms = |ns: u64| ns as f64 / 1e6;
    let first = ms(f.first_data.unwrap().nanos_since(written));
    // The mock waits 200 ms before its first chunk: no token can come sooner.
    assert!(first >= 195.0, "first token after {first} ms: {f:?}");
    assert!(first < 5_000.0, "first token after {first} ms: {f:?}");
    assert_eq!(gaps.len() as u64, f.data_units - 1);
    // Tokens come at least 20 ms apart, so their mean gap is no shorter.
    let mean = ms(f.mean_gap_ns().unwrap());
    assert!(mean >= 18.0, "mean gap {mean} ms: {gaps:?}");
    assert!(mean < 1_000.0, "mean gap {mean} ms: {gaps:?}");
    assert_eq!(ms(f.longest_gap_ns), ms(*gaps.iter().max().unwrap()));
}

const CHAT: &str = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}"#;

#[test]
fn spate_reports_an_llm_servers_first_token_and_token_gaps() {
    let Some((_server, addr)) = llmock() else {
        return;
    };
    let url = format!("http://{addr}/v1/chat/completions");
    let common = [
        "-m",
        "POST",
        "-H",
        "Content-Type: application/json",
        "-d",
        CHAT,
        "-c",
        "2",
        "-n",
        "8",
    ];
    let mut args = common.to_vec();
    args.extend(["--done", "[DONE]", "--usage", "openai", &url]);
    let doc = spate_json(&args);
    validate(&doc);
    let st = &doc["streaming"];
    let ms = |v: &serde_json::Value| v.as_f64().unwrap();
    assert_eq!(st["mode"], "auto", "{st}");
    assert_eq!(st["responses"], 8, "{st}");
    assert_eq!(st["ends"]["done"], 8, "{st}");
    assert_eq!(st["truncated"], 0, "{st}");
    // The mock waits 200 ms before its first chunk and 20 ms between chunks.
    let first = ms(&st["first_data"]["p50_ms"]);
    assert!(
        (195.0..2_000.0).contains(&first),
        "first token {first} ms: {st}"
    );
    let gap = ms(&st["gap"]["p50_ms"]);
    assert!((18.0..200.0).contains(&gap), "gap {gap} ms: {st}");
    assert_eq!(
        st["gap"]["count"].as_u64().unwrap(),
        st["data_events"].as_u64().unwrap() - 8,
        "one gap fewer than data events per stream: {st}"
    );
    assert!(st["tokens"]["total"].as_u64().unwrap() >= st["data_events"].as_u64().unwrap());
    let insight = doc["insight"].to_string();
    assert!(
        insight.contains("Streams: the first data event came after"),
        "{insight}"
    );
    // The text report says the same.
    let mut args = vec!["--no-progress"];
    args.extend(common);
    args.extend(["--stream", "sse", "--usage", "openai", &url]);
    let out = spate(&args);
    crate::support::succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Streaming (sse)"), "{text}");
    assert!(text.contains("first data event"), "{text}");
    assert!(text.contains("Output tokens"), "{text}");
    let long: Vec<&str> = text.lines().filter(|l| l.chars().count() > 80).collect();
    assert!(long.is_empty(), "lines over 80 columns: {long:#?}");
}

/// A server whose every response is an SSE stream: `events` events of data `x`, then `end`
/// ("[DONE]", or nothing), then, if `stall`, no more bytes for a minute.
fn sse_server(events: usize, gap: Duration, sentinel: bool, stall: bool) -> Scripted {
    Scripted::start(move |peer: &mut Peer| {
        while peer.read_request().is_some() {
            let mut ok = peer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
            );
            let chunk = |data: &[u8]| {
                let mut c = format!("{:x}\r\n", data.len()).into_bytes();
                c.extend_from_slice(data);
                c.extend_from_slice(b"\r\n");
                c
            };
            for i in 0..events {
                ok &= peer.write(&chunk(format!(": keep-alive\n\ndata: x{i}\n\n").as_bytes()));
                std::thread::sleep(gap);
            }
            if stall {
                std::thread::sleep(Duration::from_secs(60));
                return;
            }
            if sentinel {
                ok &= peer.write(&chunk(b"data: [DONE]\n\n"));
            }
            if !ok || !peer.write(b"0\r\n\r\n") {
                return;
            }
        }
    })
}

/// A run whose every request fails (exit 1), with its report checked against the schema.
fn failed_run(args: &[&str]) -> serde_json::Value {
    let doc = failed_json(args);
    validate(&doc);
    doc
}

#[test]
fn a_stream_without_its_sentinel_fails_as_truncated() {
    let server = sse_server(3, Duration::ZERO, false, false);
    let url = format!("http://{}/", server.addr);
    let doc = failed_run(&["-c", "2", "-n", "6", "--done", "[DONE]", &url]);
    let errors = doc["errors"].to_string();
    assert!(errors.contains("stream_truncated"), "{errors}");
    assert_eq!(doc["streaming"]["truncated"], 6, "{doc}");
    assert_eq!(doc["streaming"]["responses"], 0, "{doc}");
    assert_eq!(doc["requests"]["failed"], 6);
    // With the sentinel, the same streams complete: 3 events with data and 3 keep-alives each.
    let server = sse_server(3, Duration::ZERO, true, false);
    let url = format!("http://{}/", server.addr);
    let doc = spate_json(&["-c", "2", "-n", "6", "--done", "[DONE]", &url]);
    let st = &doc["streaming"];
    assert_eq!(st["ends"]["done"], 6, "{st}");
    assert_eq!(st["events"], 18, "{st}");
    assert_eq!(st["keepalives"], 18, "{st}");
    assert_eq!(doc["requests"]["failed"], 0);
}

#[test]
fn a_stalled_stream_fails_at_the_idle_timeout_not_the_request_timeout() {
    // Events come every 50 ms for 0.5 s and the idle timeout is 300 ms: a stream longer than
    // its idle timeout completes, since only the gaps count.
    let server = sse_server(10, Duration::from_millis(50), false, false);
    let url = format!("http://{}/", server.addr);
    let doc = spate_json(&[
        "-c",
        "1",
        "-n",
        "2",
        "--idle-timeout",
        "300ms",
        "-t",
        "5s",
        &url,
    ]);
    assert_eq!(doc["requests"]["failed"], 0, "{doc}");
    assert_eq!(doc["streaming"]["ends"]["server"], 2);
    // The request timeout would also end a stream longer than itself, but not with
    // --idle-timeout: 0.5 s of events against -t 200ms.
    let doc = spate_json(&[
        "-c",
        "1",
        "-n",
        "2",
        "--idle-timeout",
        "300ms",
        "-t",
        "200ms",
        &url,
    ]);
    assert_eq!(doc["requests"]["failed"], 0, "{doc}");
    // A stream that stops sending fails as stream_idle once 300 ms pass without a byte.
    let server = sse_server(2, Duration::ZERO, false, true);
    let url = format!("http://{}/", server.addr);
    let doc = failed_run(&[
        "-c",
        "2",
        "-n",
        "2",
        "--idle-timeout",
        "300ms",
        "-t",
        "30s",
        &url,
    ]);
    assert_eq!(doc["streaming"]["idle"], 2, "{doc}");
    let errors = doc["errors"].to_string();
    assert!(
        errors.contains("stream_idle") && errors.contains("--idle-timeout"),
        "{errors}"
    );
}

#[test]
fn max_events_ends_each_stream_as_a_completed_response() {
    let server = sse_server(1000, Duration::from_millis(2), false, false);
    let url = format!("http://{}/", server.addr);
    let doc = spate_json(&["-c", "1", "-n", "3", "--max-events", "5", "-t", "30s", &url]);
    let st = &doc["streaming"];
    assert_eq!(st["ends"]["max_events"], 3, "{st}");
    assert_eq!(st["events"], 15, "{st}");
    assert_eq!(doc["requests"]["failed"], 0, "{doc}");
    // A capped stream is not read to its end, so its connection is not reused.
    assert_eq!(doc["connections"]["reconnects"], 2, "{doc}");
}

#[test]
fn max_stream_time_ends_each_stream_as_a_completed_response() {
    // A stream of 1,000 events 2 ms apart lasts 2 s or more; the cap ends it at 100 ms.
    let server = sse_server(1000, Duration::from_millis(2), false, false);
    let url = format!("http://{}/", server.addr);
    let doc = spate_json(&[
        "-c",
        "1",
        "-n",
        "3",
        "--max-stream-time",
        "100ms",
        "-t",
        "30s",
        &url,
    ]);
    let st = &doc["streaming"];
    assert_eq!(st["ends"]["max_time"], 3, "{st}");
    assert_eq!(doc["requests"]["failed"], 0, "{doc}");
    let most = st["max_events_per_response"].as_u64().unwrap();
    assert!((1..1000).contains(&most), "{st}");
}

#[test]
fn stream_flags_that_cannot_work_are_refused_with_one_line() {
    for (args, needle) in [
        (&["--stream", "off", "--done", "x"][..], "--stream off"),
        (
            &["--max-events", "0"][..],
            "--max-events must be at least 1",
        ),
        (&["--stream", "sse", "--redirect", "2"][..], "--redirect"),
    ] {
        let mut all = args.to_vec();
        all.push("http://127.0.0.1:9/");
        let err = usage_error(&all);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// Debian's nginx speaking h2c (prior knowledge) in front of the HTTP/1.1 server at `upstream`,
/// passing its responses on as they come (as an AI gateway must).
fn h2_gateway(tag: &str, upstream: std::net::SocketAddr) -> Nginx {
    Nginx::start(
        tag,
        "http2",
        "proxy_buffering off; proxy_http_version 1.1; proxy_read_timeout 120s;",
        &format!(
            "location / {{ proxy_pass http://{upstream}; proxy_set_header Connection \"\"; }}"
        ),
    )
}

#[test]
fn llm_streams_over_http2_show_their_first_token_and_token_gaps() {
    if !have("nginx") {
        return;
    }
    let Some((_server, upstream)) = llmock() else {
        return;
    };
    let nginx = h2_gateway("stream-h2", upstream);
    let url = format!("http://{}/v1/chat/completions", nginx.addr);
    let doc = spate_json(&[
        "--http2",
        "-c",
        "1",
        "-p",
        "4",
        "-n",
        "8",
        "-m",
        "POST",
        "-H",
        "Content-Type: application/json",
        "-d",
        CHAT,
        "--done",
        "[DONE]",
        "--usage",
        "openai",
        &url,
    ]);
    validate(&doc);
    assert_eq!(doc["connections"]["http2"], 1, "{}", doc["connections"]);
    assert_eq!(doc["requests"]["failed"], 0, "{doc}");
    let st = &doc["streaming"];
    assert_eq!(st["responses"], 8, "{st}");
    assert_eq!(st["ends"]["done"], 8, "{st}");
    let ms = |v: &serde_json::Value| v.as_f64().unwrap();
    let first = ms(&st["first_data"]["p50_ms"]);
    assert!(
        (195.0..2_000.0).contains(&first),
        "first token {first} ms: {st}"
    );
    let gap = ms(&st["gap"]["p50_ms"]);
    assert!((18.0..200.0).contains(&gap), "gap {gap} ms: {st}");
    assert!(st["tokens"]["total"].as_u64().unwrap() >= st["data_events"].as_u64().unwrap());
    let http2 = nginx.log("access.log");
    assert_eq!(http2.len(), 8, "{http2:?}");
    assert!(http2.iter().all(|l| l.contains("HTTP/2.0")), "{http2:?}");
}

#[test]
fn over_http2_a_capped_stream_is_reset_and_its_connection_goes_on() {
    if !have("nginx") {
        return;
    }
    let upstream = sse_server(1000, Duration::from_millis(2), false, false);
    let nginx = h2_gateway("stream-cap", upstream.addr);
    let url = format!("http://{}/", nginx.addr);
    let doc = spate_json(&[
        "--http2",
        "-c",
        "1",
        "-p",
        "2",
        "-n",
        "6",
        "--max-events",
        "5",
        "-t",
        "30s",
        &url,
    ]);
    let st = &doc["streaming"];
    assert_eq!(st["ends"]["max_events"], 6, "{st}");
    assert_eq!(st["events"], 30, "{st}");
    assert_eq!(doc["requests"]["failed"], 0, "{doc}");
    // Unlike HTTP/1.1, a stream is cut by RST_STREAM alone: the connection carries the rest.
    let conns = &doc["connections"];
    assert_eq!(
        (&conns["http2"], &conns["reconnects"]),
        (&1.into(), &0.into()),
        "{conns}"
    );
    // A stream that stops sending fails as stream_idle, not at the request timeout: the
    // connection wakes the stream's slot at each frame, so its last read is known.
    let upstream = sse_server(2, Duration::ZERO, false, true);
    let nginx = h2_gateway("stream-idle", upstream.addr);
    let url = format!("http://{}/", nginx.addr);
    let doc = failed_run(&[
        "--http2",
        "-c",
        "1",
        "-p",
        "2",
        "-n",
        "2",
        "--idle-timeout",
        "300ms",
        "-t",
        "30s",
        &url,
    ]);
    assert_eq!(doc["streaming"]["idle"], 2, "{doc}");
}

/// A server that answers every request with `body` as `kind`, whole.
fn whole_body(kind: &'static str, body: &'static str) -> Scripted {
    Scripted::start(move |peer: &mut Peer| {
        while peer.read_request().is_some() {
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            if !peer.write(head.as_bytes()) || !peer.write(body.as_bytes()) {
                return;
            }
        }
    })
}

#[test]
fn a_last_line_without_its_line_break_is_counted() {
    let server = whole_body("application/x-ndjson", "{\"a\":1}\n{\"b\":2}\n{\"c\":3}");
    let url = format!("http://{}/", server.addr);
    let doc = spate_json(&["-c", "1", "-n", "4", "--stream", "lines", &url]);
    assert_eq!(doc["streaming"]["events"], 12, "{}", doc["streaming"]);
}

#[test]
fn a_servers_token_counts_saturate_instead_of_wrapping() {
    let server = whole_body(
        "text/event-stream",
        "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n\
         data: {\"choices\":[],\"usage\":{\"completion_tokens\":18446744073709551615}}\n\n\
         data: [DONE]\n\n",
    );
    let url = format!("http://{}/", server.addr);
    let doc = spate_json(&[
        "-c", "1", "-n", "3", "--stream", "sse", "--usage", "openai", &url,
    ]);
    validate(&doc);
    assert_eq!(
        doc["streaming"]["tokens"]["total"].as_u64(),
        Some(u64::MAX),
        "{}",
        doc["streaming"]
    );
}

/// llmock behind hypercorn over HTTP/3: each stream's events are timed as over TCP, and a cap
/// ends a stream (a reset) while its connection goes on.
#[test]
fn an_llm_stream_over_http3_shows_its_first_token_and_gaps() {
    let Some(python) = test_python("llmock") else {
        return;
    };
    let pki = crate::pki::Pki::new("stream-h3");
    let (cert, key) = (pki.dir.join("server.pem"), pki.dir.join("server.key"));
    std::fs::write(&cert, &pki.server_cert).unwrap();
    std::fs::write(&key, &pki.server_key).unwrap();
    let addr = free_addr();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/servers/llmock_h3.py");
    let _server = Child(spawn_listening(
        std::process::Command::new(python).args([
            script,
            &addr.port().to_string(),
            cert.to_str().unwrap(),
            key.to_str().unwrap(),
        ]),
        addr,
    ));
    let url = format!("https://localhost:{}/v1/chat/completions", addr.port());
    let ca = pki.path("ca.pem");
    let common = [
        "--http3",
        "--cacert",
        &ca,
        "--connect-timeout",
        "10s",
        "-m",
        "POST",
        "-H",
        "Content-Type: application/json",
        "-d",
        CHAT,
        "-c",
        "2",
        "-p",
        "2",
        "-n",
        "8",
    ];
    let mut args = common.to_vec();
    args.extend(["--done", "[DONE]", "--usage", "openai", &url]);
    let doc = spate_json(&args);
    validate(&doc);
    assert_eq!(doc["config"]["protocol"], "HTTP/3");
    let st = &doc["streaming"];
    assert_eq!(
        (&st["responses"], &st["ends"]["done"]),
        (&8.into(), &8.into()),
        "{st}"
    );
    let ms = |v: &serde_json::Value| v.as_f64().unwrap();
    let first = ms(&st["first_data"]["p50_ms"]);
    assert!(
        (195.0..2_000.0).contains(&first),
        "first token {first} ms: {st}"
    );
    let gap = ms(&st["gap"]["p50_ms"]);
    assert!((18.0..200.0).contains(&gap), "gap {gap} ms: {st}");
    assert!(st["tokens"]["total"].as_u64().unwrap() > 0, "{st}");
    // A cap of two events ends each stream as a completed response; the connections carry on.
    let mut args = common.to_vec();
    args.extend(["--stream", "sse", "--max-events", "2", &url]);
    let doc = spate_json(&args);
    let st = &doc["streaming"];
    assert_eq!(doc["requests"]["completed"], 8, "{}", doc["requests"]);
    assert_eq!(st["ends"]["max_events"], 8, "{st}");
    assert_eq!(doc["connections"]["http3"], 2, "{}", doc["connections"]);
}
