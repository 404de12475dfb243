//! The engine against loopback servers: exact counts, framing variants, closes, failures,
//! timeouts and the end of a duration run. Every test checks the accounting invariant.

use std::io::Write as _;
use std::time::Duration;

use spate::engine::{self, RunError};
use spate::plan::Stop;
use spate::serve::ServeConfig;
use spate::stats::Failure;

use crate::support::{Scripted, builtin, plan, requests, run};

#[test]
fn exact_count_reaches_the_server_and_the_report() {
    let server = builtin(ServeConfig::default());
    let mut p = plan(&server.url(), 32, requests(10_000));
    p.threads = 3;
    let (out, summary) = run(&p);
    assert_eq!(server.requests(), 10_000);
    assert_eq!(out.stats.attempts, 10_000);
    assert_eq!(out.stats.completed, 10_000);
    assert_eq!(summary.status_codes.len(), 1);
    assert_eq!(
        (summary.status_codes[0].code, summary.status_codes[0].count),
        (200, 10_000)
    );
    assert_eq!(out.stats.body_bytes, 10_000 * 12);
    assert_eq!(
        (out.stats.conns.established, out.stats.conns.reconnects),
        (32, 0)
    );
    assert_eq!(out.threads, 3);
}

#[test]
fn more_connections_than_connects_in_flight_all_open_and_all_are_served() {
    // One thread has at most `CONNECT_CONCURRENCY` connects in flight; the rest start as
    // earlier ones finish and free their places in the set of attempts.
    let n = engine::CONNECT_CONCURRENCY + 44;
    let server = builtin(ServeConfig::default());
    let mut p = plan(&server.url(), n as u32, requests(2 * n as u64));
    p.threads = 1;
    let (out, _) = run(&p);
    assert_eq!(out.stats.conns.established, n as u64);
    let per = &out.stats.per_client;
    assert_eq!(per.len(), n);
    assert!(per.iter().all(|&k| k > 0), "a connection was not served");
    assert_eq!(
        (out.stats.completed, server.requests()),
        (2 * n as u64, 2 * n as u64)
    );
}

#[test]
fn uneven_split_of_requests_and_connections_is_exact() {
    let server = builtin(ServeConfig::default());
    let mut p = plan(&server.url(), 7, requests(1_001));
    p.threads = 3;
    let (out, _) = run(&p);
    assert_eq!((server.requests(), out.stats.completed), (1_001, 1_001));
}

#[test]
fn server_connection_close_is_followed_by_a_reconnect() {
    // Every third response on a connection says Connection: close and the server hangs up.
    let server = Scripted::start(|p| {
        for i in 1.. {
            if p.read_request().is_none() {
                return;
            }
            if i % 3 == 0 {
                p.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
                return;
            }
            p.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        }
    });
    let (out, _) = run(&plan(&server.url(), 1, requests(30)));
    assert_eq!(out.stats.completed, 30);
    assert_eq!(out.stats.failed(), 0);
    assert_eq!(
        out.stats.conns.reconnects, 9,
        "closes after responses 3, 6, ... 27"
    );
    assert_eq!(server.connections(), 10);
}

#[test]
fn chunked_bodies_with_extensions_and_trailers() {
    let server = Scripted::constant(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nwiki\r\n5\r\npedia\r\n0\r\nX-Trailer: yes\r\n\r\n",
    );
    let (out, _) = run(&plan(&server.url(), 4, requests(400)));
    assert_eq!(out.stats.completed, 400);
    assert_eq!(out.stats.body_bytes, 400 * 9);
    assert_eq!(
        out.stats.conns.reconnects, 0,
        "chunked responses keep the connection"
    );
}

#[test]
fn close_delimited_bodies_complete_at_eof() {
    let server = Scripted::start(|p| {
        if p.read_request().is_some() {
            p.write(b"HTTP/1.0 200 OK\r\nServer: old\r\n\r\nclose-delimited body");
        }
    });
    let (out, _) = run(&plan(&server.url(), 2, requests(20)));
    assert_eq!(out.stats.completed, 20);
    assert_eq!(out.stats.body_bytes, 20 * 20);
    assert_eq!(out.stats.failed(), 0);
    assert_eq!(out.stats.conns.reconnects, 18);
}

#[test]
fn head_responses_have_no_body() {
    let server = builtin(ServeConfig {
        body_size: 5_000,
        ..ServeConfig::default()
    });
    let mut p = plan(&server.url(), 2, requests(50));
    p.method = "HEAD".into();
    let (out, _) = run(&p);
    assert_eq!(out.stats.completed, 50);
    assert_eq!(out.stats.body_bytes, 0);
    assert_eq!(out.stats.conns.reconnects, 0);
}

#[test]
fn no_content_and_not_modified_have_no_body() {
    let server = Scripted::start(|p| {
        for i in 0.. {
            if p.read_request().is_none() {
                return;
            }
            let r: &[u8] = if i % 2 == 0 {
                b"HTTP/1.1 204 No Content\r\n\r\n"
            } else {
                b"HTTP/1.1 304 Not Modified\r\nContent-Length: 1234\r\n\r\n"
            };
            p.write(r);
        }
    });
    let (out, summary) = run(&plan(&server.url(), 1, requests(10)));
    assert_eq!(out.stats.completed, 10);
    let codes: Vec<_> = summary
        .status_codes
        .iter()
        .map(|s| (s.code, s.count))
        .collect();
    assert_eq!(codes, vec![(204, 5), (304, 5)]);
    assert_eq!(out.stats.body_bytes, 0);
}

#[test]
fn interim_responses_are_skipped() {
    let server = Scripted::constant(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nnew",
    );
    let (out, summary) = run(&plan(&server.url(), 2, requests(20)));
    assert_eq!(summary.status_codes.len(), 1);
    assert_eq!(
        (summary.status_codes[0].code, out.stats.completed),
        (201, 20)
    );
}

#[test]
fn two_responses_in_one_segment_are_both_counted() {
    // The server answers every odd request with two responses in one write and stays silent on
    // the even ones: the second response is already buffered when the next request goes out.
    let server = Scripted::start(|p| {
        for i in 0.. {
            if p.read_request().is_none() {
                return;
            }
            if i % 2 == 0 {
                p.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 202 Accepted\r\nContent-Length: 2\r\n\r\nbb");
            }
        }
    });
    let (out, summary) = run(&plan(&server.url(), 1, requests(10)));
    assert_eq!(server.requests(), 10);
    let codes: Vec<_> = summary
        .status_codes
        .iter()
        .map(|s| (s.code, s.count))
        .collect();
    assert_eq!(codes, vec![(200, 5), (202, 5)]);
    assert_eq!(out.stats.body_bytes, 15);
    assert_eq!(out.stats.failed(), 0);
}

#[test]
fn server_that_closes_after_n_requests_without_notice() {
    // Five responses per connection, then the server hangs up silently: the sixth request on
    // each connection meets the close unanswered and, being a GET, goes again on a new
    // connection; a POST fails as `closed` instead.
    let server = Scripted::start(|p| {
        for _ in 0..5 {
            if p.read_request().is_none() {
                return;
            }
            p.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        }
    });
    let (out, _) = run(&plan(&server.url(), 1, requests(20)));
    assert_eq!((out.stats.completed, out.stats.failed()), (20, 0));
    assert_eq!((out.stats.retried, out.stats.conns.reconnects), (3, 3));
    let mut post = plan(&server.url(), 1, requests(20));
    post.method = "POST".into();
    let (out, summary) = run(&post);
    assert_eq!(out.stats.completed, 17);
    assert_eq!(out.stats.failures.get(Failure::Closed), 3);
    assert_eq!(out.stats.failed(), 3);
    assert_eq!(out.stats.conns.reconnects, 3);
    assert_eq!(out.stats.retried, 0);
    let closed = summary.errors.iter().find(|e| e.class == "closed").unwrap();
    assert!(closed.example.is_some());
}

#[test]
fn a_close_in_the_middle_of_an_answer_is_a_failure_not_a_resend() {
    // The third response on each connection stops inside its head: the server had begun to
    // answer, so the request is not sent again (RFC 9112 9.3.1) but fails as `closed`.
    let server = Scripted::start(|p| {
        for i in 0..3 {
            if p.read_request().is_none() {
                return;
            }
            match i {
                2 => p.write(b"HTTP/1.1 200 O"),
                _ => p.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
            };
        }
    });
    let (out, _) = run(&plan(&server.url(), 1, requests(9)));
    assert_eq!(out.stats.retried, 0);
    assert_eq!(out.stats.failures.get(Failure::Closed), 3);
    assert_eq!(out.stats.completed, 6);
    assert_eq!(server.requests(), 9);
}

#[test]
fn unreachable_port_is_an_error_before_the_clock() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let p = plan(&format!("http://127.0.0.1:{port}/"), 4, requests(10));
    match engine::run(&p) {
        Err(RunError::Unreachable { target, reason, .. }) => {
            assert_eq!(target, format!("127.0.0.1:{port}"));
            assert!(reason.to_lowercase().contains("refused"), "{reason}");
        }
        other => panic!("expected unreachable, got {other:?}"),
    }
}

#[test]
fn server_that_never_answers_times_out() {
    let server = Scripted::start(|p| while p.read_request().is_some() {});
    let mut p = plan(&server.url(), 2, requests(4));
    p.timeout = Duration::from_millis(200);
    let (out, summary) = run(&p);
    assert_eq!(out.stats.failures.get(Failure::Timeout), 4);
    assert_eq!(out.stats.completed, 0);
    assert!(!summary.any_success());
    assert!(summary.latency.percentiles.p50.is_none());
}

#[test]
fn a_response_that_completes_after_the_timeout_is_a_timeout() {
    // Every response takes 1.5 ms; the timeout is 1 ms. The sweeper looks once a millisecond,
    // so many responses complete before it would cancel them: each is late all the same.
    let server = builtin(ServeConfig {
        delay: Duration::from_micros(1500),
        ..ServeConfig::default()
    });
    let mut p = plan(&server.url(), 3, requests(300));
    p.timeout = Duration::from_millis(1);
    let (out, _) = run(&p);
    assert_eq!(
        out.stats.completed, 0,
        "a response later than --timeout completed"
    );
    assert_eq!(out.stats.failures.get(Failure::Timeout), 300);
}

#[test]
fn duration_run_interrupts_what_is_still_in_flight_after_the_drain() {
    let server = Scripted::start(|p| while p.read_request().is_some() {});
    let mut p = plan(&server.url(), 3, Stop::Duration(Duration::from_millis(300)));
    p.timeout = Duration::from_secs(30);
    let (out, _) = run(&p);
    assert_eq!(out.stats.attempts, 3);
    assert_eq!(out.stats.interrupted, 3);
    assert_eq!(out.stats.failed(), 0);
    // The window is the -z; the drain after it is apart.
    assert_eq!(out.elapsed, Duration::from_millis(300));
    assert!(out.drain >= Duration::from_millis(900), "{:?}", out.drain);
}

#[test]
fn duration_run_against_a_healthy_server_ends_and_counts_everything() {
    let server = builtin(ServeConfig::default());
    let (out, summary) = run(&plan(
        &server.url(),
        8,
        Stop::Duration(Duration::from_millis(400)),
    ));
    assert!(out.stats.completed > 0);
    assert_eq!(out.stats.failed(), 0);
    // The server answered everything spate counted, and nothing spate did not admit.
    assert!(server.requests() >= out.stats.completed);
    assert!(server.requests() <= out.stats.attempts);
    assert!(summary.totals.requests_per_sec > 0.0);
}

#[test]
fn garbage_responses_are_parse_failures() {
    let server = Scripted::constant(b"this is not http\r\n\r\n");
    let (out, summary) = run(&plan(&server.url(), 2, requests(6)));
    assert_eq!(out.stats.failures.get(Failure::Parse), 6);
    assert_eq!(
        out.stats.conns.reconnects, 4,
        "a connection with a bad response is replaced"
    );
    let parse = summary.errors.iter().find(|e| e.class == "parse").unwrap();
    assert!(
        parse.example.as_deref().unwrap().contains("malformed"),
        "{parse:?}"
    );
}

#[test]
fn error_statuses_complete_but_are_not_successful() {
    let server = builtin(ServeConfig {
        status: 503,
        ..ServeConfig::default()
    });
    let (out, summary) = run(&plan(&server.url(), 2, requests(10)));
    assert_eq!(out.stats.completed, 10);
    assert_eq!(summary.requests.successful, 0);
    assert!(!summary.any_success());
}

#[test]
fn disable_keepalive_opens_a_connection_per_request() {
    let server = builtin(ServeConfig::default());
    let mut p = plan(&server.url(), 4, requests(40));
    p.keep_alive = false;
    let (out, _) = run(&p);
    assert_eq!(out.stats.completed, 40);
    assert_eq!(
        out.stats.conns.reconnects, 36,
        "40 requests, 4 pre-connected"
    );
    assert_eq!(out.stats.connect.len(), 40);
    assert_eq!(server.requests(), 40);
}

#[test]
fn request_bytes_method_headers_and_body_reach_the_server() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let server = Scripted::start(move |p| {
        while let Some(r) = p.read_request() {
            log.lock().unwrap().push(r);
            p.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let mut p = plan(&format!("{}items?x=1", server.url()), 1, requests(3));
    p.method = "POST".into();
    p.body = b"{\"a\":1}".to_vec();
    p.headers = vec![
        ("Host".into(), "example.test".into()),
        ("X-Extra".into(), "1".into()),
    ];
    run(&p);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    let r = &seen[0];
    assert!(
        r.head.starts_with("POST /items?x=1 HTTP/1.1\r\n"),
        "{}",
        r.head
    );
    assert_eq!(
        r.head.to_lowercase().matches("host:").count(),
        1,
        "{}",
        r.head
    );
    assert!(r.head.contains("Host: example.test\r\n"));
    assert!(r.head.contains("X-Extra: 1\r\n"));
    assert!(r.head.contains(&format!(
        "User-Agent: spate/{}\r\n",
        env!("CARGO_PKG_VERSION")
    )));
    assert!(r.head.contains("Content-Length: 7\r\n"));
    assert_eq!(r.body, b"{\"a\":1}");
    assert!(
        seen.iter().all(|x| x.head == r.head && x.body == r.body),
        "identical bytes each time"
    );
}

#[test]
fn large_chunked_bodies_stream_through() {
    let server = builtin(ServeConfig {
        body_size: 1_000_000,
        chunked: true,
        ..ServeConfig::default()
    });
    let (out, summary) = run(&plan(&server.url(), 2, requests(20)));
    assert_eq!(out.stats.body_bytes, 20_000_000);
    assert!(
        out.stats.bytes_in > out.stats.body_bytes,
        "framing and heads are on the wire too"
    );
    assert_eq!(summary.totals.body_bytes_per_response, Some(1_000_000.0));
}

#[test]
fn head_split_across_many_writes_is_parsed() {
    let server = Scripted::start(|p| {
        while p.read_request().is_some() {
            for b in b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX-Slow: yes\r\n\r\nabc".chunks(7) {
                if !p.write(b) {
                    return;
                }
                let _ = p.stream.flush();
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    });
    let (out, _) = run(&plan(&server.url(), 2, requests(10)));
    assert_eq!((out.stats.completed, out.stats.body_bytes), (10, 30));
}

#[test]
fn connects_that_hang_time_out_and_are_reported() {
    // A listener that never accepts, with no room in its accept queue: after the first
    // connection the kernel drops SYNs, so further connects hang until our connect timeout.
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket
        .bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    socket.listen(0).unwrap();
    let addr = socket.local_addr().unwrap().as_socket().unwrap();
    let mut p = plan(&format!("http://{addr}/"), 4, requests(4));
    p.threads = 1;
    p.connect_timeout = Duration::from_millis(300);
    p.timeout = Duration::from_millis(500);
    let (out, summary) = run(&p);
    let s = &out.stats;
    assert!(
        s.conns.established >= 1 && s.conns.established < 4,
        "{:?}",
        s.conns
    );
    assert!(s.conns.connect_failures >= 1);
    let e = summary.connections.connect_error.as_deref().unwrap();
    assert!(e.contains("connect timed out after 300ms"), "{e}");
    // Whatever was admitted timed out waiting for a response or for a new connection.
    assert_eq!(
        s.failures.get(Failure::Timeout) + s.failures.get(Failure::Connect),
        4
    );
    assert_eq!(s.completed, 0);
    drop(socket);
}

#[test]
fn a_connection_close_request_header_is_honoured() {
    // An HTTP/1.1 server may close after answering a request that said Connection: close,
    // without saying so in the response. spate must not reuse that connection.
    let server = Scripted::start(|p| {
        if p.read_request().is_some() {
            p.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        }
    });
    let mut p = plan(&server.url(), 2, requests(10));
    p.headers = vec![("Connection".into(), "close".into())];
    let (out, _) = run(&p);
    assert_eq!(out.stats.completed, 10);
    assert_eq!(out.stats.failed(), 0);
    assert_eq!(out.stats.conns.reconnects, 8);
}

#[test]
fn a_reset_connection_is_a_closed_failure_and_is_replaced() {
    // Every second request on a connection is answered with a TCP reset.
    let server = Scripted::start(|p| {
        if p.read_request().is_none() {
            return;
        }
        p.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        if p.read_request().is_some() {
            let _ = socket2::SockRef::from(&p.stream).set_linger(Some(Duration::ZERO));
        }
    });
    // Unanswered, a GET may go again (RFC 9112 9.3.1) as the first request of a new connection,
    // which the server answers: every later one is reset once, counted, and none fails.
    let (out, _) = run(&plan(&server.url(), 1, requests(10)));
    assert_eq!((out.stats.completed, out.stats.retried), (10, 9));
    // A POST is not sent twice: each reset is a `closed` failure.
    let mut post = plan(&server.url(), 1, requests(10));
    post.method = "POST".into();
    let (out, summary) = run(&post);
    assert_eq!(out.stats.completed, 5);
    assert_eq!(out.stats.failures.get(Failure::Closed), 5);
    assert_eq!(
        out.stats.conns.reconnects, 4,
        "the last reset is the last request"
    );
    let example = summary.errors[0].example.as_deref().unwrap().to_lowercase();
    assert!(
        example.contains("reset") || example.contains("closed"),
        "{example}"
    );
}

#[test]
fn builtin_server_delay_is_applied_to_every_response() {
    let server = builtin(ServeConfig {
        delay: Duration::from_millis(30),
        ..ServeConfig::default()
    });
    let (out, _) = run(&plan(&server.url(), 2, requests(6)));
    // A lower bound only: the server sleeps at least this long before each response.
    assert!(
        out.stats.latency.hdr().min() >= 30_000_000,
        "{}",
        out.stats.latency.hdr().min()
    );
    assert_eq!(out.stats.completed, 6);
}

#[test]
fn refused_reconnects_back_off_and_resume_when_the_target_returns() {
    // The target answers 3 requests, closes, refuses connections for 300 ms, then serves
    // again on the same port.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let serve = |s: std::net::TcpStream, close_after: Option<usize>| {
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut r = std::io::BufReader::new(s.try_clone().unwrap());
            let mut w = s;
            let mut line = String::new();
            for served in 1.. {
                loop {
                    line.clear();
                    match std::io::BufRead::read_line(&mut r, &mut line) {
                        Ok(0) | Err(_) => return,
                        Ok(_) if line == "\r\n" => break,
                        Ok(_) => {}
                    }
                }
                let close = close_after == Some(served);
                let head = if close { "Connection: close\r\n" } else { "" };
                let response = format!("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n{head}\r\nok");
                if w.write_all(response.as_bytes()).is_err() || close {
                    return;
                }
            }
        };
        let (first, _) = listener.accept().unwrap();
        serve(first, Some(3));
        drop(listener);
        std::thread::sleep(Duration::from_millis(300));
        let listener = std::net::TcpListener::bind(addr).unwrap();
        for s in listener.incoming().flatten() {
            std::thread::spawn(move || serve(s, None));
        }
    });
    let (out, _) = run(&plan(
        &format!("http://{addr}/"),
        1,
        Stop::Duration(Duration::from_millis(1200)),
    ));
    let refused = out.stats.failures.get(Failure::Connect);
    // Waits of 1, 2, 4 ... 100 ms make about 8 tries in 300 ms; without them, thousands.
    assert!(
        (1..=40).contains(&refused),
        "{refused} refused connects while the target was away"
    );
    assert!(
        out.stats.completed > 3,
        "the connection never came back: {} completed",
        out.stats.completed
    );
    assert!(out.stats.is_balanced());
}

#[test]
fn bytes_of_responses_that_did_not_complete_are_counted() {
    // Half of a 20 MB body, then silence until the timeout.
    const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 20000000\r\n\r\n";
    let server = Scripted::start(|p| {
        if p.read_request().is_some() {
            let mut bytes = HEAD.to_vec();
            bytes.resize(HEAD.len() + 10_000_000, b'x');
            if p.write(&bytes) {
                std::thread::sleep(Duration::from_secs(3));
            }
        }
    });
    let mut p = plan(&server.url(), 1, requests(1));
    p.timeout = Duration::from_secs(1);
    let (out, summary) = run(&p);
    assert_eq!(out.stats.failures.get(Failure::Timeout), 1);
    assert_eq!(out.stats.bytes_in, (HEAD.len() + 10_000_000) as u64);
    assert_eq!(summary.totals.bytes_in, out.stats.bytes_in);

    // A reply that does not parse: its bytes arrived too.
    let garbage = Scripted::constant(b"garbage\r\n\r\n");
    let (out, _) = run(&plan(&garbage.url(), 1, requests(1)));
    assert_eq!(out.stats.failures.get(Failure::Parse), 1);
    assert_eq!(out.stats.bytes_in, 11);
}

#[test]
fn the_rate_counts_the_window_and_what_completes_in_the_drain_is_apart() {
    // Every answer takes 300 ms; the window is 500 ms: four answers at 300 ms, four more at
    // 600 ms, in the drain. wrk would say 4 / 0.5 s.
    let server = builtin(ServeConfig {
        delay: Duration::from_millis(300),
        ..ServeConfig::default()
    });
    let mut p = plan(&server.url(), 4, Stop::Duration(Duration::from_millis(500)));
    p.threads = 1;
    p.timeout = Duration::from_secs(5);
    let (out, summary) = run(&p);
    assert_eq!(out.stats.completed, 8);
    assert_eq!(summary.totals.completed_in_drain, 4);
    assert_eq!(summary.totals.elapsed_s, 0.5);
    assert_eq!(summary.totals.requests_per_sec, 8.0);
    assert!(summary.totals.drain_s > 0.0);
}

#[test]
fn a_prepared_run_sends_nothing_until_go_and_ends_its_threads_when_dropped() {
    let server = builtin(ServeConfig::default());
    let mut p = plan(&server.url(), 6, requests(300));
    p.threads = 2;
    let control = engine::Control::new();
    let armed = engine::prepare(&p, None, &control).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(server.requests(), 0, "connected, and nothing sent");
    drop(armed);
    assert_eq!(
        server.requests(),
        0,
        "dropped: the threads ended without a request"
    );
    let control = engine::Control::new();
    let out = engine::prepare(&p, None, &control).unwrap().go().unwrap();
    assert_eq!((out.stats.completed, server.requests()), (300, 300));
    assert_eq!(out.stats.conns.established, 6);
}
