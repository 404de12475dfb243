//! Hostile servers: scripted loopback servers that break HTTP/1.1, HTTP/2 and TLS in every way
//! the robustness issue lists. Each case asserts that spate does not panic, that the run ends
//! within the request timeout plus one second (per request a connection carries), that every
//! failure lands in the expected class, and the accounting invariant (checked by `run`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use spate::engine::{self, RunError};
use spate::plan::{Plan, Protocol};
use spate::report::{Report, ReportOptions};
use spate::stats::Failure;

use crate::support::{Peer, Scripted, plan, requests};

const TIMEOUT: Duration = Duration::from_secs(1);

/// What a case must end with.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Done {
    /// Every request completed.
    All,
    /// At least one completed and at least one failed.
    Some,
    /// None completed.
    None,
    /// None completed, and the failures may land in any of the classes given (a race decides
    /// which), but in at least one of them.
    NoneInAny,
    /// At least one completed; the classes may occur but need not.
    Mostly,
}

/// Runs `p` against a hostile server and checks the common assertions; `classes` are the only
/// failure classes allowed, and the first must occur.
fn expect(mut p: Plan, done: Done, classes: &[Failure]) -> Option<Report> {
    p.timeout = TIMEOUT;
    p.connect_timeout = TIMEOUT;
    p.threads = 1;
    let per_connection = match p.stop {
        spate::plan::Stop::Requests(n) => n.div_ceil(u64::from(p.connections)),
        spate::plan::Stop::Duration(_) => 1,
    };
    let bound = TIMEOUT * u32::try_from(per_connection).unwrap() + Duration::from_secs(1);
    // On its own thread, so that a run that hangs fails the test instead of stalling the suite.
    let (tx, rx) = mpsc::channel();
    let q = p.clone();
    let t = Instant::now();
    std::thread::spawn(move || {
        let _ = tx.send(engine::run(&q));
    });
    let result = match rx.recv_timeout(bound + Duration::from_secs(10)) {
        Ok(result) => result,
        Err(RecvTimeoutError::Timeout) => panic!("the run did not end within {bound:?} + 10 s"),
        Err(RecvTimeoutError::Disconnected) => panic!("the run panicked"),
    };
    let took = t.elapsed();
    assert!(took <= bound, "the run took {took:?}, more than {bound:?}");
    let out = match result {
        Ok(out) => out,
        // Every pre-connect failed: the run never started, in the class of the first failure.
        Err(RunError::Unreachable { class, reason, .. }) => {
            assert!(
                matches!(done, Done::None | Done::NoneInAny),
                "unreachable: {reason}"
            );
            assert!(classes.contains(&class), "{}: {reason}", class.name());
            return None;
        }
        Err(e) => panic!("the run failed: {e}"),
    };
    let s = &out.stats;
    assert!(s.is_balanced(), "accounting invariant");
    let summary = Report::new(&p, &out, &ReportOptions::default());
    let r = &summary.requests;
    assert_eq!(r.attempted, r.completed + r.failed + r.interrupted);
    for f in Failure::ALL {
        if s.failures.get(f) > 0 {
            assert!(
                classes.contains(&f),
                "unexpected class {}: {:?}",
                f.name(),
                s.failures.example(f)
            );
        }
    }
    if done == Done::NoneInAny {
        let seen = classes.iter().map(|c| s.failures.get(*c)).sum::<u64>();
        assert!(seen > 0, "none of {classes:?}: {:?}", summary.errors);
    } else if let Some(first) = classes.first().filter(|_| done != Done::Mostly) {
        assert!(
            s.failures.get(*first) > 0,
            "no {} failure: {:?}",
            first.name(),
            summary.errors
        );
    }
    match done {
        Done::All => assert_eq!(r.completed, r.attempted, "{:?}", summary.errors),
        Done::Some => assert!(r.completed > 0 && r.failed > 0, "{r:?}"),
        Done::None | Done::NoneInAny => assert_eq!(r.completed, 0, "{r:?}"),
        Done::Mostly => assert!(r.completed > 0, "{r:?}"),
    }
    Some(summary)
}

fn h1(server: &Scripted, n: u64, c: u32) -> Plan {
    plan(&server.url(), c, requests(n))
}

/// One response per request, then `after` decides whether to go on.
fn answer(reply: &'static [u8]) -> impl Fn(&mut Peer) + Send + Sync + 'static {
    move |p| {
        while p.read_request().is_some() {
            if !p.write(reply) {
                return;
            }
        }
    }
}

/// Answers the first request with `bytes`, then closes.
fn once(bytes: &'static [u8]) -> impl Fn(&mut Peer) + Send + Sync + 'static {
    move |p| {
        if p.read_request().is_some() {
            p.write(bytes);
        }
    }
}

/// Answers the first request with `bytes`, then keeps the connection open without a word.
fn once_then_silence(bytes: &'static [u8]) -> impl Fn(&mut Peer) + Send + Sync + 'static {
    move |p| {
        if p.read_request().is_some() {
            p.write(bytes);
            hold(p);
        }
    }
}

/// Answers the first request with `head`, then repeats `more` for up to three seconds.
fn endless(head: &'static [u8], more: Vec<u8>) -> impl Fn(&mut Peer) + Send + Sync + 'static {
    move |p| {
        if p.read_request().is_some() && p.write(head) {
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(3) && p.write(&more) {}
        }
    }
}

/// Sends `bytes`, then resets the connection (RST instead of FIN).
fn reset_after(p: &mut Peer, bytes: &[u8]) {
    p.write(bytes);
    let _ = socket2::SockRef::from(&p.stream).set_linger(Some(Duration::ZERO));
}

/// Keeps the connection open, reading, until the client goes away (bounded by the socket's
/// read timeout in `Scripted`, and by three seconds here).
fn hold(p: &mut Peer) {
    let _ = p.stream.set_read_timeout(Some(Duration::from_secs(3)));
    let mut buf = [0u8; 4096];
    while matches!(p.stream.read(&mut buf), Ok(n) if n > 0) {}
}

// ---- HTTP/1.1 ----

#[test]
fn garbage_instead_of_a_status_line() {
    let s = Scripted::start(answer(b"SSH-2.0-OpenSSH_9.6\r\n\r\n"));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Parse]);
}

#[test]
fn a_status_below_100() {
    let s = Scripted::start(answer(b"HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n"));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Parse]);
}

#[test]
fn a_truncated_head_then_close() {
    let s = Scripted::start(once(b"HTTP/1.1 200 OK\r\nContent-Le"));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Closed]);
}

#[test]
fn a_truncated_head_then_silence() {
    let s = Scripted::start(once_then_silence(b"HTTP/1.1 200 OK\r\nContent-Le"));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Timeout]);
}

#[test]
fn a_head_larger_than_the_limit() {
    let s = Scripted::start(|p| {
        if p.read_request().is_some() {
            p.write(b"HTTP/1.1 200 OK\r\n");
            let line = format!("X-Big: {}\r\n", "x".repeat(4000));
            for _ in 0..20 {
                if !p.write(line.as_bytes()) {
                    return;
                }
            }
            hold(p);
        }
    });
    expect(h1(&s, 4, 4), Done::None, &[Failure::Parse]);
}

#[test]
fn an_endless_head_without_line_breaks() {
    let s = Scripted::start(endless(b"HTTP/1.1 200 OK\r\nX: ", vec![b'a'; 8192]));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Parse]);
}

#[test]
fn too_many_headers() {
    let s = Scripted::start(|p| {
        while p.read_request().is_some() {
            let mut r = String::from("HTTP/1.1 200 OK\r\n");
            for i in 0..200 {
                r.push_str(&format!("X-{i}: v\r\n"));
            }
            r.push_str("Content-Length: 0\r\n\r\n");
            if !p.write(r.as_bytes()) {
                return;
            }
        }
    });
    expect(h1(&s, 4, 4), Done::None, &[Failure::Parse]);
}

#[test]
fn an_invalid_content_length() {
    let s = Scripted::start(answer(b"HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\n"));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Parse]);
}

#[test]
fn a_content_length_beyond_64_bits() {
    let s = Scripted::start(answer(
        b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    ));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Parse]);
}

#[test]
fn conflicting_content_lengths() {
    let s = Scripted::start(answer(
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
    ));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Parse]);
}

#[test]
fn an_enormous_content_length_then_close() {
    let s = Scripted::start(once(
        b"HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\n\r\nsome",
    ));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Closed]);
}

#[test]
fn a_body_longer_than_its_content_length() {
    // "llo" is left over and read as the next response's head: those requests fail to parse,
    // and their connections are replaced.
    let s = Scripted::start(answer(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhello"));
    expect(h1(&s, 8, 2), Done::Some, &[Failure::Parse]);
}

#[test]
fn a_body_shorter_than_its_content_length_then_close() {
    let s = Scripted::start(once(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello"));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Closed]);
}

#[test]
fn a_body_shorter_than_its_content_length_then_silence() {
    let s = Scripted::start(once_then_silence(
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello",
    ));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Timeout]);
}

#[test]
fn an_invalid_chunk_size() {
    let s = Scripted::start(answer(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
    ));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Parse]);
}

#[test]
fn a_chunk_size_overflow() {
    let s = Scripted::start(answer(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1ffffffffffffffff\r\nx\r\n0\r\n\r\n",
    ));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Parse]);
}

#[test]
fn a_missing_crlf_after_chunk_data() {
    let s = Scripted::start(answer(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n",
    ));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Parse]);
}

#[test]
fn garbage_trailers_of_bounded_size_are_skipped() {
    // Trailer fields are not used; their syntax is not checked, only their framing and size.
    let s = Scripted::start(answer(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\x01\x02garbage\r\n: :\r\n\r\n",
    ));
    let summary = expect(h1(&s, 4, 4), Done::All, &[]).unwrap();
    assert_eq!(summary.totals.body_bytes, 8);
}

#[test]
fn endless_trailers() {
    let line = format!("X-Trailer: {}\r\n", "t".repeat(1000));
    let s = Scripted::start(endless(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n",
        line.into_bytes(),
    ));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Parse]);
}

#[test]
fn a_chunked_body_that_never_ends() {
    let chunk = [&b"400\r\n"[..], &[b'z'; 1024], b"\r\n"].concat();
    let s = Scripted::start(endless(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        chunk,
    ));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Timeout]);
}

#[test]
fn a_close_delimited_body_that_never_ends() {
    let s = Scripted::start(endless(b"HTTP/1.0 200 OK\r\n\r\n", vec![b'z'; 4096]));
    expect(h1(&s, 4, 4), Done::None, &[Failure::Timeout]);
}

#[test]
fn one_byte_every_second() {
    let s = Scripted::start(|p| {
        if p.read_request().is_some() {
            for b in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" {
                if !p.write(&[*b]) {
                    return;
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    });
    expect(h1(&s, 4, 4), Done::None, &[Failure::Timeout]);
}

#[test]
fn interim_responses_before_the_final_one() {
    let s = Scripted::start(answer(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    ));
    let summary = expect(h1(&s, 8, 2), Done::All, &[]).unwrap();
    assert_eq!(summary.status_codes[0].code, 200);
}

#[test]
fn endless_interim_responses() {
    let s = Scripted::start(|p| {
        if p.read_request().is_some() {
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(3)
                && p.write(b"HTTP/1.1 102 Processing\r\n\r\n")
            {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    });
    expect(h1(&s, 4, 4), Done::None, &[Failure::Timeout]);
}

#[test]
fn a_reset_in_the_middle_of_a_head() {
    let s = Scripted::start(|p| {
        if p.read_request().is_some() {
            reset_after(p, b"HTTP/1.1 200 OK\r\nContent-");
        }
    });
    expect(h1(&s, 4, 4), Done::None, &[Failure::Closed]);
}

#[test]
fn a_reset_in_the_middle_of_a_body() {
    let s = Scripted::start(|p| {
        if p.read_request().is_some() {
            reset_after(p, b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf");
        }
    });
    expect(h1(&s, 4, 4), Done::None, &[Failure::Closed]);
}

#[test]
fn a_close_right_after_accept() {
    let s = Scripted::start(|_| {});
    expect(h1(&s, 4, 4), Done::None, &[Failure::Closed]);
}

#[test]
fn a_reset_right_after_accept() {
    // A reconnect may see the reset before its connect returns: then it failed to connect.
    // When the reset reaches a kept connection before its first request does, every request
    // goes to a reconnect, and all four can end that way (seen under CI load).
    let s = Scripted::start(|p| reset_after(p, b""));
    expect(
        h1(&s, 4, 4),
        Done::NoneInAny,
        &[Failure::Closed, Failure::Connect],
    );
}

#[test]
fn a_close_after_n_requests_without_connection_close() {
    let s = Scripted::start(|p| {
        for _ in 0..3 {
            if p.read_request().is_none()
                || !p.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            {
                return;
            }
        }
    });
    // A GET that crossed the close is sent again on a new connection: every one completes,
    // each read by the server once, and the resends are counted apart.
    let summary = expect(h1(&s, 12, 2), Done::All, &[]).unwrap();
    assert!(summary.connections.reconnects > 0);
    assert!(summary.requests.retried > 0, "{:?}", summary.requests);
    assert_eq!(s.requests(), 12);
    // A POST is not idempotent: it is not sent twice, and fails as the close made it.
    let mut post = h1(&s, 12, 2);
    post.method = "POST".into();
    let summary = expect(post, Done::Some, &[Failure::Closed]).unwrap();
    assert_eq!(summary.requests.retried, 0);
}

#[test]
fn redirects_are_counted_not_followed() {
    let s = Scripted::start(answer(
        b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/elsewhere\r\nContent-Length: 0\r\n\r\n",
    ));
    let summary = expect(h1(&s, 10, 2), Done::All, &[]).unwrap();
    assert_eq!(summary.status_codes[0].code, 302);
    assert_eq!(summary.requests.successful, 10);
    assert_eq!(
        s.requests(),
        10,
        "every request went to the server, none elsewhere"
    );
}

#[test]
fn followed_redirects_that_lead_nowhere_end_cleanly() {
    let follow = |s: &Scripted| Plan {
        redirects: 2,
        ..h1(s, 6, 2)
    };
    // An empty Location is no redirect: the 302 is the answer.
    let s = Scripted::start(answer(
        b"HTTP/1.1 302 Found\r\nLocation: \r\nContent-Length: 0\r\n\r\n",
    ));
    let summary = expect(follow(&s), Done::All, &[]).unwrap();
    assert_eq!(summary.status_codes[0].code, 302);
    assert_eq!(summary.requests.redirects_followed, 0);
    // To a port nothing listens on: each request fails to connect there, and the run ends.
    let s = Scripted::start(answer(
        b"HTTP/1.1 307 Temporary\r\nLocation: http://127.0.0.1:1/x\r\nContent-Length: 0\r\n\r\n",
    ));
    let summary = expect(follow(&s), Done::None, &[Failure::Connect]).unwrap();
    assert_eq!(summary.requests.redirects_followed, 6);
    // A 60 KB Location back to the server itself: followed twice, then a failure of its own.
    let long: &'static [u8] = format!(
        "HTTP/1.1 301 Moved\r\nLocation: /{}\r\nContent-Length: 0\r\n\r\n",
        "x".repeat(60_000)
    )
    .into_bytes()
    .leak();
    let s = Scripted::start(answer(long));
    let summary = expect(follow(&s), Done::None, &[Failure::Redirect]).unwrap();
    assert_eq!(summary.requests.redirects_followed, 12);
    assert_eq!(s.requests(), 18);
}

/// A redirect that closes its connection: the chain's next hop opens the connection's next
/// inside the attempt (a reconnect), and the answer comes on it.
#[test]
fn a_redirect_that_closes_its_connection_goes_on_on_the_next() {
    let s = Scripted::start(|p: &mut Peer| {
        while let Some(req) = p.read_request() {
            if req.head.starts_with("GET /a ") {
                p.write(b"HTTP/1.1 302 Found\r\nLocation: /b\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
                return;
            }
            if !p.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") {
                return;
            }
        }
    });
    let p = Plan {
        redirects: 2,
        ..plan(&format!("{}a", s.url()), 2, requests(20))
    };
    let summary = expect(p, Done::All, &[]).unwrap();
    assert_eq!(summary.status_codes[0].code, 200);
    assert_eq!(summary.requests.redirects_followed, 20);
    // Each chain's /a closed its connection: /b went on a new one, which the next /a used.
    assert_eq!(summary.connections.reconnects, 20);
    assert_eq!(s.connections(), 22);
    assert_eq!(s.requests(), 40);
}

#[test]
fn two_responses_for_one_request() {
    // The extra response is taken as the answer to the next request on the connection: an
    // HTTP/1.1 client cannot tell, so both count as completed.
    let s = Scripted::start(|p| {
        let mut first = true;
        while p.read_request().is_some() {
            let r: &[u8] = if first {
                b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"
            } else {
                b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
            };
            first = false;
            if !p.write(r) {
                return;
            }
        }
    });
    let summary = expect(h1(&s, 6, 1), Done::All, &[]).unwrap();
    assert!(summary.status_codes.iter().any(|r| r.code == 201));
}

#[test]
fn a_response_before_the_request_was_written() {
    // The server answers 413 at once and closes without reading the 4 MiB body: the write fails
    // with a reset, and the answer, still readable, is what the request got.
    let s = Scripted::start(|p| {
        p.write(
            b"HTTP/1.1 413 Content Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        );
        std::thread::sleep(Duration::from_millis(100));
    });
    let mut pl = h1(&s, 4, 4);
    pl.method = "POST".into();
    pl.body = vec![b'b'; 4 << 20];
    let summary = expect(pl, Done::All, &[]).unwrap();
    assert_eq!(summary.status_codes[0].code, 413);
}

#[test]
fn an_early_response_that_waits_for_the_body() {
    // Every response is written before its request is read: always one response ahead.
    let s = Scripted::start(|p| {
        while p.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") {
            match p.read_request() {
                Some(r) => assert_eq!(r.body.len(), 64 << 10),
                None => return,
            }
        }
    });
    let mut pl = h1(&s, 8, 4);
    pl.method = "POST".into();
    pl.body = vec![b'b'; 64 << 10];
    expect(pl, Done::All, &[]);
}

// ---- TLS ----

#[test]
fn a_tls_handshake_answered_with_garbage() {
    let s = Scripted::start(|p| {
        let mut hello = [0u8; 512];
        let _ = p.stream.read(&mut hello);
        p.write(&[0x16, 0x03, 0x03, 0x00, 0x05, 1, 2, 3, 4, 5]);
    });
    let p = plan(&format!("https://{}/", s.addr), 2, requests(4));
    expect(p, Done::None, &[Failure::Tls]);
}

#[test]
fn a_plaintext_reply_to_tls() {
    let s = Scripted::start(|p| {
        let mut hello = [0u8; 512];
        let _ = p.stream.read(&mut hello);
        p.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    });
    let p = plan(&format!("https://{}/", s.addr), 2, requests(4));
    expect(p, Done::None, &[Failure::Tls]);
}

#[test]
fn a_tls_server_that_never_answers_the_hello() {
    let s = Scripted::start(hold);
    let p = plan(&format!("https://{}/", s.addr), 2, requests(4));
    expect(p, Done::None, &[Failure::Connect]);
}

// ---- HTTP/2 (h2c prior knowledge, frames written by hand) ----

const DATA: u8 = 0;
const HEADERS: u8 = 1;
const RST_STREAM: u8 = 3;
const SETTINGS: u8 = 4;
const PING: u8 = 6;
const GOAWAY: u8 = 7;
const CONTINUATION: u8 = 9;
const END_STREAM: u8 = 1;
const END_HEADERS: u8 = 4;
const ACK: u8 = 1;
/// HPACK: ":status: 200" from the static table.
const STATUS_200: &[u8] = &[0x88];

struct Frame {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: Vec<u8>,
}

/// One end of a raw HTTP/2 connection.
struct H2 {
    s: TcpStream,
}

impl H2 {
    /// Reads the client preface and sends our SETTINGS.
    fn accept(p: &Peer, settings: &[(u16, u32)]) -> Option<H2> {
        let mut s = p.stream.try_clone().ok()?;
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let mut preface = [0u8; 24];
        s.read_exact(&mut preface).ok()?;
        let mut h = H2 { s };
        let body: Vec<u8> = settings
            .iter()
            .flat_map(|(id, v)| id.to_be_bytes().into_iter().chain(v.to_be_bytes()))
            .collect();
        h.send(SETTINGS, 0, 0, &body).then_some(h)
    }

    fn send(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) -> bool {
        let len = payload.len() as u32;
        let mut f = len.to_be_bytes()[1..].to_vec();
        f.extend([kind, flags]);
        f.extend(stream.to_be_bytes());
        f.extend(payload);
        self.s.write_all(&f).is_ok()
    }

    fn frame(&mut self) -> Option<Frame> {
        let mut h = [0u8; 9];
        self.s.read_exact(&mut h).ok()?;
        let len = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
        let mut payload = vec![0u8; len];
        self.s.read_exact(&mut payload).ok()?;
        Some(Frame {
            kind: h[3],
            flags: h[4],
            stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff,
            payload,
        })
    }

    /// Reads frames, acknowledging SETTINGS and PING, until a request's HEADERS; its stream.
    fn request(&mut self) -> Option<u32> {
        loop {
            let f = self.frame()?;
            match f.kind {
                HEADERS => return Some(f.stream),
                SETTINGS if f.flags & ACK == 0 => {
                    self.send(SETTINGS, ACK, 0, &[]);
                }
                PING if f.flags & ACK == 0 => {
                    self.send(PING, ACK, 0, &f.payload);
                }
                _ => {}
            }
        }
    }

    fn ok(&mut self, stream: u32) -> bool {
        self.send(HEADERS, END_HEADERS | END_STREAM, stream, STATUS_200)
    }

    fn goaway(&mut self, last: u32, code: u32) -> bool {
        let mut p = last.to_be_bytes().to_vec();
        p.extend(code.to_be_bytes());
        self.send(GOAWAY, 0, 0, &p)
    }

    /// Reads and answers (SETTINGS, PING) until the client closes or three seconds pass.
    fn drain(&mut self) {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(3) && self.request().is_some() {}
    }
}

fn h2c(server: &Scripted, n: u64, c: u32, streams: u32) -> Plan {
    let mut p = plan(&server.url(), c, requests(n));
    p.protocol = Protocol::Http2;
    p.h2.streams = streams;
    p
}

#[test]
fn h2_goaway_with_an_error_on_the_first_request() {
    let s = Scripted::start(|p| {
        if let Some(mut h) = H2::accept(p, &[])
            && h.request().is_some()
        {
            h.goaway(0, 1);
        }
    });
    expect(
        h2c(&s, 4, 2, 1),
        Done::None,
        &[Failure::H2, Failure::Closed],
    );
}

#[test]
fn h2_graceful_goaway_after_some_requests() {
    let s = Scripted::start(|p| {
        if let Some(mut h) = H2::accept(p, &[]) {
            for _ in 0..3 {
                match h.request() {
                    Some(id) if h.ok(id) => {}
                    _ => return,
                }
            }
            h.goaway(5, 0);
            h.drain();
        }
    });
    // A request sent before the GOAWAY arrived is refused by it, unprocessed: it goes again on
    // a new connection, neither failed nor counted twice.
    let summary = expect(h2c(&s, 12, 1, 1), Done::All, &[]).unwrap();
    assert!(summary.connections.reconnects > 0);
    assert_eq!(summary.requests.completed, 12, "{:?}", summary.requests);
    assert!(summary.requests.retried > 0, "{:?}", summary.requests);
}

#[test]
fn h2_rst_stream_on_every_request() {
    let s = Scripted::start(|p| {
        if let Some(mut h) = H2::accept(p, &[]) {
            while let Some(id) = h.request() {
                if !h.send(RST_STREAM, 0, id, &2u32.to_be_bytes()) {
                    return;
                }
            }
        }
    });
    expect(h2c(&s, 8, 2, 2), Done::None, &[Failure::Reset]);
}

#[test]
fn h2_settings_flood() {
    let s = Scripted::start(|p| {
        if let Some(mut h) = H2::accept(p, &[]) {
            for _ in 0..20_000 {
                if !h.send(SETTINGS, 0, 0, &[]) {
                    return;
                }
            }
            while let Some(id) = h.request() {
                if !h.ok(id) {
                    return;
                }
            }
        }
    });
    // The h2 crate may answer a flood with ENHANCE_YOUR_CALM; either way the run ends.
    let _ = expect(h2c(&s, 8, 2, 1), Done::All, &[]);
}

#[test]
fn h2_a_stream_limit_of_one() {
    let s = Scripted::start(|p| {
        if let Some(mut h) = H2::accept(p, &[(3, 1)]) {
            while let Some(id) = h.request() {
                // A second HEADERS before this answer would break the limit.
                let _ = h.s.set_read_timeout(Some(Duration::from_millis(20)));
                let mut probe = [0u8; 9];
                let early =
                    h.s.peek(&mut probe)
                        .is_ok_and(|n| n == 9 && probe[3] == HEADERS);
                let _ = h.s.set_read_timeout(Some(Duration::from_secs(5)));
                if early || !h.ok(id) {
                    return;
                }
            }
        }
    });
    let summary = expect(h2c(&s, 20, 1, 8), Done::All, &[]).unwrap();
    assert_eq!(summary.requests.completed, 20);
}

#[test]
fn h2_a_stream_limit_of_zero() {
    // RFC 9113 allows MAX_CONCURRENT_STREAMS 0; with none of spate's streams open, nothing but
    // new SETTINGS would free a place. Each attempt waits for one under its timeout.
    let s = Scripted::start(|p| {
        if let Some(mut h) = H2::accept(p, &[(3, 0)]) {
            // Reads until a HEADERS frame beyond the limit, then closes: never answers one.
            let _ = h.request();
        }
    });
    let summary = expect(h2c(&s, 4, 2, 2), Done::None, &[Failure::Timeout]).unwrap();
    assert_eq!(summary.requests.failed, 4);
    assert_eq!(summary.connections.server_max_streams, Some(0));
    let timeouts = summary
        .errors
        .iter()
        .find(|e| e.class == "timeout")
        .unwrap();
    let example = timeouts.example.as_deref().unwrap_or_default();
    assert!(example.contains("could not be sent"), "{timeouts:?}");
}

#[test]
fn h2_a_header_block_larger_than_the_limit() {
    let s = Scripted::start(|p| {
        if let Some(mut h) = H2::accept(p, &[]) {
            while let Some(id) = h.request() {
                // ":status: 200" then literal headers, 16 KiB per frame, 256 KiB in all.
                let mut block = STATUS_200.to_vec();
                let value = vec![b'v'; 1000];
                for _ in 0..256 {
                    block.extend([0x00, 0x01, b'x', 0x7f, 0xe9, 0x06]);
                    block.extend(&value);
                }
                let frames: Vec<&[u8]> = block.chunks(16_384).collect();
                for (i, part) in frames.iter().enumerate() {
                    let kind = if i == 0 { HEADERS } else { CONTINUATION };
                    let last = i + 1 == frames.len();
                    let flags = if last { END_HEADERS | END_STREAM } else { 0 };
                    if !h.send(kind, flags, id, part) {
                        return;
                    }
                }
            }
        }
    });
    expect(h2c(&s, 4, 2, 1), Done::None, &[Failure::H2, Failure::Reset]);
}

#[test]
fn h2_endless_continuation_frames() {
    let s = Scripted::start(|p| {
        if let Some(mut h) = H2::accept(p, &[])
            && let Some(id) = h.request()
        {
            h.send(HEADERS, 0, id, STATUS_200);
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(3)
                && h.send(CONTINUATION, 0, id, &[0x40, 0x01, b'x', 0x01, b'y'])
            {}
        }
    });
    expect(
        h2c(&s, 4, 2, 1),
        Done::None,
        &[Failure::H2, Failure::Closed],
    );
}

#[test]
fn h2_a_connection_window_that_never_opens() {
    // A body larger than the 65,535-byte connection window the server never raises.
    let s = Scripted::start(|p| {
        if let Some(mut h) = H2::accept(p, &[]) {
            h.drain();
        }
    });
    let mut pl = h2c(&s, 2, 2, 1);
    pl.method = "POST".into();
    pl.body = vec![b'b'; 100_000];
    expect(pl, Done::None, &[Failure::Timeout]);
}

#[test]
fn h2_a_stream_window_of_zero() {
    let s = Scripted::start(|p| {
        if let Some(mut h) = H2::accept(p, &[(4, 0)]) {
            h.drain();
        }
    });
    let mut pl = h2c(&s, 2, 2, 1);
    pl.method = "POST".into();
    pl.body = b"body".to_vec();
    expect(pl, Done::None, &[Failure::Timeout]);
}

#[test]
fn h2_data_on_a_stream_that_was_never_opened() {
    let s = Scripted::start(|p| {
        if let Some(mut h) = H2::accept(p, &[])
            && h.request().is_some()
        {
            h.send(DATA, END_STREAM, 99, b"stray");
            h.drain();
        }
    });
    expect(
        h2c(&s, 4, 2, 1),
        Done::None,
        &[Failure::H2, Failure::Closed],
    );
}

#[test]
fn h2_a_frame_larger_than_allowed() {
    let s = Scripted::start(|p| {
        if let Some(mut h) = H2::accept(p, &[])
            && let Some(id) = h.request()
        {
            h.send(HEADERS, END_HEADERS, id, STATUS_200);
            h.send(DATA, END_STREAM, id, &vec![0u8; 100_000]);
            h.drain();
        }
    });
    expect(
        h2c(&s, 4, 2, 1),
        Done::None,
        &[Failure::H2, Failure::Closed],
    );
}

#[test]
fn h2_an_http1_reply_to_prior_knowledge() {
    let s = Scripted::start(|p| {
        let mut buf = [0u8; 256];
        let _ = p.stream.read(&mut buf);
        p.write(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    });
    // The server closes after its HTTP/1.1 answer, usually before the preface is written.
    expect(
        h2c(&s, 4, 2, 1),
        Done::None,
        &[Failure::Closed, Failure::H2],
    );
}

#[test]
fn h2_a_close_right_after_the_preface() {
    let s = Scripted::start(|p| {
        let _ = H2::accept(p, &[]);
    });
    expect(
        h2c(&s, 4, 2, 1),
        Done::None,
        &[Failure::Closed, Failure::H2],
    );
}

/// A duration run of one second on two connections against `s`: how many connections the
/// server saw.
fn connections_in_one_second(s: &Scripted, protocol: Protocol) -> u64 {
    let mut p = plan(
        &s.url(),
        2,
        spate::plan::Stop::Duration(Duration::from_secs(1)),
    );
    p.protocol = protocol;
    p.threads = 1;
    p.timeout = TIMEOUT;
    let out = engine::run(&p).expect("the run starts");
    assert!(out.stats.is_balanced());
    assert!(out.stats.failed() > 0);
    s.connections()
}

// A tight reconnect loop made a new connection every few hundred microseconds; waiting as after a
// refused connect (1 ms doubling to 100 ms) allows at most a few dozen in a second. The bound
// is far above that, and far below what the loop made (thousands).

#[test]
fn h2_goaway_on_every_connection_backs_off() {
    let s = Scripted::start(|p| {
        if let Some(mut h) = H2::accept(p, &[])
            && h.request().is_some()
        {
            h.goaway(0, 0);
        }
    });
    let n = connections_in_one_second(&s, Protocol::Http2);
    assert!(n < 200, "{n} connections in one second");
}

#[test]
fn h1_close_on_every_connection_backs_off() {
    let s = Scripted::start(|p| {
        p.read_request();
    });
    let n = connections_in_one_second(&s, Protocol::Http1);
    assert!(n < 200, "{n} connections in one second");
}

#[test]
fn h2_refusing_every_stream_still_ends_a_count_run() {
    // GOAWAY(0) on every connection refuses each request unprocessed: each goes again three
    // times, then fails, so -n 4 ends.
    let s = Scripted::start(|p| {
        if let Some(mut h) = H2::accept(p, &[])
            && h.request().is_some()
        {
            h.goaway(0, 0);
        }
    });
    let summary = expect(h2c(&s, 4, 1, 1), Done::None, &[Failure::Closed]).unwrap();
    assert_eq!(summary.requests.failed, 4, "{:?}", summary.requests);
    assert_eq!(summary.requests.retried, 12, "{:?}", summary.requests);
}

/// A plan for `https://127.0.0.1:1/` through `server` as its proxy: every connection asks it for
/// a tunnel first.
fn through(server: &Scripted, n: u64, c: u32) -> Plan {
    let mut p = plan("https://127.0.0.1:1/", c, requests(n));
    p.tls.insecure = true;
    p.route.proxy = Some(server.url().trim_end_matches('/').parse().unwrap());
    p
}

/// Reads a CONNECT request (its head), then does what `after` says.
fn proxy(after: fn(&mut Peer)) -> impl Fn(&mut Peer) + Send + Sync + 'static {
    move |p| {
        if p.read_request().is_some() {
            after(p);
        }
    }
}

#[test]
fn a_proxy_that_never_answers_connect_is_a_connect_timeout() {
    let s = Scripted::start(proxy(|p| {
        let mut rest = Vec::new();
        let _ = p.stream.read_to_end(&mut rest);
    }));
    expect(through(&s, 4, 2), Done::None, &[Failure::Connect]);
}

#[test]
fn a_proxy_that_refuses_garbles_or_drops_the_tunnel() {
    for reply in [
        &b"HTTP/1.1 403 Forbidden\r\n\r\n"[..],
        b"SSH-2.0-OpenSSH\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n",
        b"",
    ] {
        let s = Scripted::start(move |p| {
            if p.read_request().is_some() {
                p.write(reply);
            }
        });
        expect(through(&s, 4, 2), Done::None, &[Failure::Connect]);
    }
    // A head that never ends is cut off, not read forever.
    let s = Scripted::start(proxy(|p| {
        p.write(b"HTTP/1.1 200 OK\r\n");
        let filler = [b'x'; 1024];
        while p.write(b"X-Filler: ") && p.write(&filler) && p.write(b"\r\n") {}
    }));
    expect(through(&s, 4, 2), Done::None, &[Failure::Connect]);
}
