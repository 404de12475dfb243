//! How the connection state machine fails: resets, GOAWAY, cancellation, protocol violations and
//! servers that do not speak HTTP/2, each ending only what it names.

use std::task::Poll;

use super::*;

#[test]
fn goaway_and_rst_stream_fail_the_streams_they_name() {
    let mut c = settled(3, &[], b"");
    for k in 0..3 {
        open(&mut c, k);
    }
    let mut goaway = 3u32.to_be_bytes().to_vec();
    goaway.extend(NO_ERROR.to_be_bytes());
    let server = Script::default()
        .frame(RST_STREAM, 0, 1, &7u32.to_be_bytes())
        .frame(GOAWAY, 0, 0, &goaway);
    feed(&mut c, &server.0, &[]);
    let reset = outcome(&mut c, 0).unwrap().unwrap_err();
    assert_eq!(reset.class, Failure::Reset);
    assert!(reset.to_string().contains("REFUSED_STREAM"), "{reset}");
    assert!(
        outcome(&mut c, 1).is_none(),
        "stream 3 is below the GOAWAY's last id"
    );
    assert_eq!(
        outcome(&mut c, 2).unwrap().unwrap_err().class,
        Failure::Closed
    );
    assert_eq!(c.ready(), Ready::Gone { goaway: true });
    feed(
        &mut c,
        &Script::default()
            .frame(HEADERS, END_HEADERS | END_STREAM, 3, &[0x88])
            .0,
        &[],
    );
    assert_eq!(outcome(&mut c, 1).unwrap().unwrap().status, 200);
}

#[test]
fn a_cancelled_stream_is_reset_and_its_late_frames_still_decode() {
    let mut c = settled(2, &[], b"");
    open(&mut c, 0);
    open(&mut c, 1);
    c.out.clear();
    c.cancel(0);
    assert_eq!(frames(&c.out)[0].0, RST_STREAM);
    assert_eq!(c.active(), 1);
    // The late response indexes a field that the next one refers to.
    let server = Script::default()
        .frame(
            HEADERS,
            END_HEADERS,
            1,
            &[0x88, 0x40, 0x01, b'k', 0x01, b'v'],
        )
        .frame(DATA, END_STREAM, 1, b"late")
        .frame(HEADERS, END_HEADERS | END_STREAM, 3, &[0x8d, 0xbe]);
    feed(&mut c, &server.0, &[]);
    assert!(outcome(&mut c, 0).is_none());
    assert_eq!(outcome(&mut c, 1).unwrap().unwrap().status, 404);
    assert!(!c.is_ended());
}

#[test]
fn protocol_violations_end_the_connection_with_goaway() {
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "DATA on a stream",
            Script::default().frame(DATA, 0, 9, b"x").0,
        ),
        (
            "larger than",
            Script::default().frame(DATA, 0, 1, &vec![0; 20_000]).0,
        ),
        ("interrupted", {
            Script::default()
                .frame(HEADERS, 0, 1, &[0x88])
                .frame(DATA, 0, 1, b"x")
                .0
        }),
        (
            "COMPRESSION_ERROR",
            Script::default().frame(HEADERS, END_HEADERS, 1, &[0x80]).0,
        ),
        (
            "PUSH_PROMISE",
            Script::default()
                .frame(PUSH_PROMISE, END_HEADERS, 1, &[0, 0, 0, 2])
                .0,
        ),
        (
            "PING of the wrong size",
            Script::default().frame(PING, 0, 0, b"short").0,
        ),
        ("GOAWAY (PROTOCOL_ERROR)", {
            let mut p = 0u32.to_be_bytes().to_vec();
            p.extend(PROTOCOL_ERROR.to_be_bytes());
            Script::default().frame(GOAWAY, 0, 0, &p).0
        }),
        ("larger than 65536 bytes", {
            let mut s = Script::default().frame(HEADERS, 0, 1, &[0x88]);
            for _ in 0..5 {
                s = s.frame(CONTINUATION, 0, 1, &[0x40; 16_000]);
            }
            s.0
        }),
    ];
    for (want, bytes) in cases {
        let mut c = settled(1, &[], b"");
        open(&mut c, 0);
        c.out.clear();
        feed(&mut c, &bytes, &[]);
        assert!(c.is_ended(), "{want}");
        let e = outcome(&mut c, 0).unwrap().unwrap_err();
        assert_eq!(e.class, Failure::H2, "{want}");
        assert!(e.to_string().contains(want), "{want}: {e}");
        assert!(
            c.poll_open(0, &mut cx(), None).is_ready(),
            "nothing new starts"
        );
        if !want.starts_with("GOAWAY") {
            assert_eq!(frames(&c.out).last().unwrap().0, GOAWAY, "{want}");
        }
    }
}

#[test]
fn a_server_that_does_not_start_with_settings_is_refused() {
    for (bytes, want) in [
        (b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec(), "HTTP/1.x"),
        (Script::default().pong().0, "did not start with SETTINGS"),
    ] {
        let mut c = Conn::new(cfg(1), request(b""));
        feed(&mut c, &bytes, &[]);
        match c.poll_settled(&mut cx()) {
            Poll::Ready(Err(e)) => assert!(e.to_string().contains(want), "{e}"),
            _ => panic!("{want}: not refused"),
        }
    }
}

#[test]
fn an_http1_answer_after_a_settings_ack_is_the_same_error_however_split() {
    // Found by the fuzzer: the HTTP/1.x check once looked only at the start of a read.
    let mut bytes = Script::default().frame(SETTINGS, ACK, 0, &[]).0;
    bytes.extend(b"HTTP/1.1 400 Bad Request\r\n\r\n");
    for seed in [0, 2, 0x51, 0x1234] {
        crate::proto::h2::props::check_stream(&bytes, seed & !2);
    }
    let mut c = Conn::new(cfg(1), request(b""));
    feed(&mut c, &bytes, &[]);
    match c.poll_settled(&mut cx()) {
        Poll::Ready(Err(e)) => assert!(e.to_string().contains("HTTP/1.x"), "{e}"),
        _ => panic!("not refused"),
    }
}
