//! HTTP/2 against the built-in server (h2c) and a scripted h2 server: prior knowledge, exact
//! counts with C connections x N streams, the server's stream limit, GOAWAY mid-run,
//! RST_STREAM, 1 MiB bodies through small flow-control windows, per-stream timeouts, the end
//! of a duration run, redirects that never end. The accounting invariant is checked in every
//! run.

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use h2::Reason;
use spate::plan::{Protocol, Stop};
use spate::serve::{ServeConfig, Server};
use spate::stats::Failure;

use crate::support::{plan, requests, run};

/// How the scripted server treats the streams of each connection (numbered from 1).
#[derive(Clone, Default)]
struct Script {
    max_streams: Option<u32>,
    /// GOAWAY (graceful) after accepting this many streams.
    goaway_after: Option<u64>,
    /// RST_STREAM(REFUSED_STREAM) on every k-th stream.
    reset_every: Option<u64>,
    /// Never answer every k-th stream.
    silent_every: Option<u64>,
    /// Answer every stream with a 302 to a Location never given before, this many bytes long.
    redirect_bytes: Option<usize>,
    delay: Duration,
}

struct ScriptedH2 {
    url: String,
    requests: Arc<AtomicU64>,
    max_in_flight: Arc<AtomicU64>,
    connections: Arc<AtomicU64>,
}

impl ScriptedH2 {
    fn start(script: Script) -> ScriptedH2 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicU64::new(0));
        let max_in_flight = Arc::new(AtomicU64::new(0));
        let connections = Arc::new(AtomicU64::new(0));
        let (r, m, c) = (requests.clone(), max_in_flight.clone(), connections.clone());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let local = tokio::task::LocalSet::new();
            local.block_on(&rt, async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let in_flight = Arc::new(AtomicU64::new(0));
                while let Ok((tcp, _)) = listener.accept().await {
                    c.fetch_add(1, Ordering::SeqCst);
                    let (script, r, m, in_flight) =
                        (script.clone(), r.clone(), m.clone(), in_flight.clone());
                    tokio::task::spawn_local(async move {
                        let mut b = h2::server::Builder::new();
                        if let Some(n) = script.max_streams {
                            b.max_concurrent_streams(n);
                        }
                        let Ok(mut conn) = b.handshake::<_, Bytes>(tcp).await else {
                            return;
                        };
                        let mut n = 0u64;
                        while let Some(next) = conn.accept().await {
                            let Ok((_request, mut respond)) = next else {
                                break;
                            };
                            n += 1;
                            if script.goaway_after == Some(n) {
                                conn.graceful_shutdown();
                            }
                            if script.reset_every.is_some_and(|k| n.is_multiple_of(k)) {
                                respond.send_reset(Reason::REFUSED_STREAM);
                                continue;
                            }
                            if script.silent_every.is_some_and(|k| n.is_multiple_of(k)) {
                                tokio::task::spawn_local(async move {
                                    tokio::time::sleep(Duration::from_secs(60)).await;
                                    drop(respond);
                                });
                                continue;
                            }
                            let (r, m, in_flight, delay) =
                                (r.clone(), m.clone(), in_flight.clone(), script.delay);
                            let location = script
                                .redirect_bytes
                                .map(|len| format!("/{n}/{}", "x".repeat(len)));
                            tokio::task::spawn_local(async move {
                                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                                m.fetch_max(now, Ordering::SeqCst);
                                if !delay.is_zero() {
                                    tokio::time::sleep(delay).await;
                                }
                                in_flight.fetch_sub(1, Ordering::SeqCst);
                                r.fetch_add(1, Ordering::SeqCst);
                                let head = match &location {
                                    Some(to) => http::Response::builder()
                                        .status(302)
                                        .header("location", to.as_str()),
                                    None => http::Response::builder().status(200),
                                };
                                let head = head.header("content-length", "2").body(()).unwrap();
                                if let Ok(mut send) = respond.send_response(head, false) {
                                    let _ = send.send_data(Bytes::from_static(b"ok"), true);
                                }
                            });
                        }
                    });
                }
            });
        });
        ScriptedH2 {
            url,
            requests,
            max_in_flight,
            connections,
        }
    }
}

fn h2c_server(body_size: usize) -> Server {
    Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        h2c: true,
        body_size,
        ..ServeConfig::default()
    })
    .unwrap()
}

fn h2_plan(url: &str, connections: u32, streams: u32, stop: Stop) -> spate::plan::Plan {
    let mut p = plan(url, connections, stop);
    p.protocol = Protocol::Http2;
    p.h2.streams = streams;
    p
}

#[test]
fn h2c_prior_knowledge_with_exact_counts() {
    let server = h2c_server(12);
    let p = h2_plan(&server.url(), 4, 8, requests(10_000));
    let (out, summary) = run(&p);
    assert_eq!(server.requests(), 10_000);
    assert_eq!(out.stats.completed, 10_000);
    assert_eq!(out.stats.body_bytes, 120_000);
    assert_eq!((out.stats.conns.h2, out.stats.conns.h1), (4, 0));
    assert_eq!(summary.config.protocol, "HTTP/2 (h2c)");
    assert_eq!(summary.config.streams, 8);
    assert!(
        out.stats.bytes_in > out.stats.body_bytes,
        "frames are counted at the connection"
    );
    assert!(out.stats.bytes_out > 0);
}

#[test]
fn never_more_streams_than_the_server_allows() {
    let server = ScriptedH2::start(Script {
        max_streams: Some(2),
        delay: Duration::from_millis(3),
        ..Script::default()
    });
    let p = h2_plan(&server.url, 1, 8, requests(100));
    let (out, summary) = run(&p);
    assert_eq!(out.stats.completed, 100);
    assert_eq!(out.stats.failed(), 0, "{:?}", out.stats.failures);
    assert_eq!(server.max_in_flight.load(Ordering::SeqCst), 2);
    assert_eq!(summary.connections.server_max_streams, Some(2));
}

#[test]
fn goaway_mid_run_reconnects_and_is_counted() {
    let server = ScriptedH2::start(Script {
        goaway_after: Some(25),
        ..Script::default()
    });
    let p = h2_plan(&server.url, 2, 4, requests(300));
    let (out, summary) = run(&p);
    let s = &out.stats;
    assert!(s.conns.goaways >= 2, "{:?}", s.conns);
    assert!(s.conns.reconnects >= 2, "{:?}", s.conns);
    assert_eq!(summary.connections.goaways, s.conns.goaways);
    assert!(server.connections.load(Ordering::SeqCst) >= 4);
    // What the server accepted was finished: every completed response was served.
    assert_eq!(server.requests.load(Ordering::SeqCst), s.completed);
    // Streams the GOAWAY refused went again on the next connection: -n 300 is 300 responses.
    assert_eq!(s.completed, 300, "{:?}", s.failures);
    assert_eq!(s.failed(), 0, "{:?}", s.failures);
    assert_eq!(summary.requests.retried, s.retried);
}

#[test]
fn rst_stream_is_its_own_class() {
    let server = ScriptedH2::start(Script {
        reset_every: Some(3),
        ..Script::default()
    });
    let p = h2_plan(&server.url, 1, 1, requests(30));
    let (out, summary) = run(&p);
    assert_eq!(out.stats.failures.get(Failure::Reset), 10);
    assert_eq!(out.stats.completed, 20);
    let reset = summary.errors.iter().find(|e| e.class == "reset").unwrap();
    assert!(
        reset
            .example
            .as_deref()
            .unwrap()
            .to_lowercase()
            .contains("refused"),
        "{reset:?}"
    );
    assert_eq!(
        out.stats.conns.reconnects, 0,
        "a reset stream leaves the connection alone"
    );
}

#[test]
fn one_mib_bodies_through_small_windows() {
    let server = h2c_server(1 << 20);
    let mut p = h2_plan(&server.url(), 2, 4, requests(24));
    p.h2.stream_window = 65_535;
    p.h2.conn_window = 65_535;
    let (out, _) = run(&p);
    assert_eq!(out.stats.completed, 24);
    assert_eq!(out.stats.body_bytes, 24 << 20);
    let mut p = h2_plan(&server.url(), 2, 4, requests(24));
    p.h2.max_frame = 1 << 20;
    let (out, _) = run(&p);
    assert_eq!(
        out.stats.body_bytes,
        24 << 20,
        "default (large) windows and big frames"
    );
}

#[test]
fn uploads_on_many_streams_are_queued_as_the_socket_takes_them() {
    // Eight 4 MiB bodies a connection, inside the server's windows: far more than spate lets a
    // connection queue for a server that does not read, which must not be mistaken for one.
    let server = h2c_server(12);
    let mut p = h2_plan(&server.url(), 2, 8, requests(32));
    p.method = "POST".into();
    p.body = vec![b'x'; 4 << 20];
    let (out, _) = run(&p);
    assert_eq!(out.stats.failed(), 0, "{:?}", out.stats.failures);
    assert_eq!((out.stats.completed, server.requests()), (32, 32));
    assert_eq!(
        out.stats.bytes_out >> 22,
        32,
        "the bodies and a little framing went out"
    );
}

#[test]
fn a_stream_that_times_out_leaves_the_others_running() {
    let server = ScriptedH2::start(Script {
        silent_every: Some(5),
        ..Script::default()
    });
    let mut p = h2_plan(&server.url, 1, 4, requests(40));
    p.timeout = Duration::from_millis(300);
    let (out, _) = run(&p);
    assert_eq!(out.stats.failures.get(Failure::Timeout), 8);
    assert_eq!(out.stats.completed, 32);
    assert_eq!(
        out.stats.conns.reconnects, 0,
        "one slow stream does not cost the connection"
    );
}

#[test]
fn a_duration_run_interrupts_silent_streams() {
    let server = ScriptedH2::start(Script {
        silent_every: Some(1),
        ..Script::default()
    });
    let mut p = h2_plan(
        &server.url,
        2,
        3,
        Stop::Duration(Duration::from_millis(300)),
    );
    p.timeout = Duration::from_secs(30);
    let (out, _) = run(&p);
    assert_eq!(
        out.stats.interrupted, 6,
        "2 connections x 3 streams in flight at the end"
    );
    assert_eq!(out.stats.failed(), 0);
}

#[test]
fn h2c_from_the_command_line() {
    let server = h2c_server(12);
    let o = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(["--http2", "-p", "4", "-n", "400", "-c", "2", &server.url()])
        .output()
        .unwrap();
    crate::support::succeeded(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("HTTP/2 (h2c)"), "{text}");
    assert!(
        text.contains("HTTP/2: 4 streams per connection asked, server limit: no limit; 0 GOAWAY"),
        "{text}"
    );
    assert_eq!(server.requests(), 400);
}

#[test]
fn requests_beyond_the_server_limit_are_not_admitted() {
    // With a limit of 2, only 2 of the 8 streams may be in flight. Requests queued inside the h2
    // crate would be in flight for spate (their clocks running) without being on the wire; at
    // the end of the run they would show up as 8 interrupted requests instead of 2.
    let server = ScriptedH2::start(Script {
        max_streams: Some(2),
        silent_every: Some(1),
        ..Script::default()
    });
    let mut p = h2_plan(
        &server.url,
        1,
        8,
        Stop::Duration(Duration::from_millis(300)),
    );
    p.timeout = Duration::from_secs(30);
    let (out, _) = run(&p);
    assert_eq!(out.stats.attempts, 2);
    assert_eq!(out.stats.interrupted, 2);
}

/// A server whose every answer is a redirect somewhere new (a token in each Location): each
/// chain fails as `redirect` after --redirect's hops, on the connection's own streams, and the
/// run ends; a Location past spate's header bound resets its stream instead of growing memory.
#[test]
fn redirects_somewhere_new_every_time_end_each_chain_at_the_limit() {
    let server = ScriptedH2::start(Script {
        redirect_bytes: Some(2_000),
        ..Script::default()
    });
    let mut p = h2_plan(&server.url, 2, 4, requests(40));
    p.redirects = 3;
    let (out, summary) = run(&p);
    let s = &out.stats;
    assert_eq!(s.failures.get(Failure::Redirect), 40, "{:?}", s.failures);
    assert_eq!(summary.requests.redirects_followed, 120);
    assert_eq!(server.requests.load(Ordering::SeqCst), 160);
    assert_eq!(
        server.connections.load(Ordering::SeqCst),
        2,
        "every hop on its connection"
    );

    let server = ScriptedH2::start(Script {
        redirect_bytes: Some(200_000),
        ..Script::default()
    });
    let mut p = h2_plan(&server.url, 1, 2, requests(6));
    p.redirects = 3;
    let (out, summary) = run(&p);
    assert_eq!(out.stats.completed, 0, "{:?}", out.stats.failures);
    assert_eq!(summary.requests.redirects_followed, 0);
    assert_eq!(out.stats.failed(), 6, "{:?}", out.stats.failures);
}
