//! The connection state machine against scripted server bytes, fed whole and split at every
//! byte: the same outcomes either way.

use std::task::{Context, Poll, Waker};

use bytes::Bytes;

use super::*;
use crate::proto::Media;
use crate::proto::h2::frame::Head;
use crate::proto::h2::frame::*;

fn cfg(slots: usize) -> Config {
    Config {
        stream_window: 1 << 20,
        conn_window: 1 << 20,
        max_frame: 16_384,
        max_header_bytes: 64 * 1024,
        slots,
    }
}

fn request(body: &[u8]) -> Prepared {
    Prepared::new(
        &[
            (b":method", b"GET"),
            (b":scheme", b"http"),
            (b":path", b"/"),
            (b":authority", b"127.0.0.1:1"),
            (b"user-agent", b"spate-test"),
        ],
        Bytes::copy_from_slice(body),
    )
}

fn cx() -> Context<'static> {
    Context::from_waker(Waker::noop())
}

/// Frames as a server sends them.
#[derive(Default)]
struct Script(Vec<u8>);

impl Script {
    fn frame(mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Self {
        put_head(&mut self.0, payload.len(), kind, flags, stream);
        self.0.extend_from_slice(payload);
        self
    }
    fn settings(self, list: &[(u16, u32)]) -> Self {
        let mut p = Vec::new();
        for (id, v) in list {
            p.extend(id.to_be_bytes());
            p.extend(v.to_be_bytes());
        }
        self.frame(SETTINGS, 0, 0, &p)
    }
    fn pong(self) -> Self {
        self.frame(PING, ACK, 0, &PING_PAYLOAD)
    }
}

/// A whole response (status 200, no body) on `stream`.
fn ok(stream: u32) -> Vec<u8> {
    Script::default()
        .frame(HEADERS, END_HEADERS | END_STREAM, stream, &[0x88])
        .0
}

/// Feeds `bytes` in pieces cut at `cuts`, keeping what `receive` leaves as a real driver does.
fn feed<S: Events>(c: &mut Conn<S>, bytes: &[u8], cuts: &[usize]) {
    let mut buf = Vec::new();
    let mut from = 0;
    for &to in cuts.iter().chain([&bytes.len()]) {
        buf.extend_from_slice(&bytes[from..to]);
        from = to;
        let used = c.receive(&buf, Tick::now());
        buf.drain(..used);
    }
}

fn settled(slots: usize, server: &[(u16, u32)], body: &[u8]) -> Conn {
    settled_with(slots, server, body)
}

fn settled_with<S: Events + Default>(slots: usize, server: &[(u16, u32)], body: &[u8]) -> Conn<S> {
    let mut c = Conn::with_events(cfg(slots), request(body), S::default);
    feed(&mut c, &Script::default().settings(server).pong().0, &[]);
    assert!(c.poll_settled(&mut cx()).is_ready());
    c.out.clear();
    c
}

fn open<S: Events>(c: &mut Conn<S>, k: usize) {
    assert!(matches!(
        c.poll_open(k, &mut cx(), None),
        Poll::Ready(Ok(()))
    ));
}

fn outcome<S: Events>(c: &mut Conn<S>, k: usize) -> Option<Result<Response, Fail>> {
    match c.poll_response(k, &mut cx()) {
        Poll::Ready(r) => Some(r),
        Poll::Pending => None,
    }
}

/// The frames in `out` (after the preface, if any): (kind, flags, stream, payload).
fn frames(out: &[u8]) -> Vec<(u8, u8, u32, Vec<u8>)> {
    let mut at = if out.starts_with(PREFACE) {
        PREFACE.len()
    } else {
        0
    };
    let mut list = Vec::new();
    while at < out.len() {
        let h = Head::parse(out[at..at + 9].try_into().unwrap());
        list.push((
            h.kind,
            h.flags,
            h.stream,
            out[at + 9..at + 9 + h.len].to_vec(),
        ));
        at += 9 + h.len;
    }
    list
}

#[test]
fn the_handshake_says_what_spate_allows_and_learns_the_limit() {
    let mut c = Conn::new(cfg(4), request(b""));
    assert!(c.out.starts_with(PREFACE));
    let sent = frames(&c.out);
    let kinds: Vec<u8> = sent.iter().map(|f| f.0).collect();
    assert_eq!(kinds, [SETTINGS, WINDOW_UPDATE, PING]);
    assert!(
        sent[0].3.chunks(6).any(|s| s == [0, 2, 0, 0, 0, 0]),
        "push disabled"
    );
    assert!(c.poll_settled(&mut cx()).is_pending());
    assert_eq!(
        c.ready(),
        Ready::Yes,
        "one stream before the server's SETTINGS"
    );
    let server = Script::default()
        .settings(&[(SETTINGS_MAX_CONCURRENT_STREAMS, 3)])
        .pong();
    feed(&mut c, &server.0, &[]);
    assert!(matches!(c.poll_settled(&mut cx()), Poll::Ready(Ok(()))));
    assert_eq!(c.max_streams(), 3);
    assert!(
        frames(&c.out).iter().any(|f| f.0 == SETTINGS && f.1 == ACK),
        "the server's SETTINGS are acknowledged"
    );
    let mut none = Conn::new(cfg(1), request(b""));
    feed(&mut none, &Script::default().settings(&[]).pong().0, &[]);
    assert_eq!(none.max_streams(), usize::MAX, "no limit announced");
}

/// Two streams: one with a body in DATA, one ending in its HEADERS; a dynamic table entry, a
/// Huffman literal and padding on the way.
fn two_responses() -> Vec<u8> {
    let mut head1 = vec![0x88]; // :status 200
    head1.extend([0x40, 0x03]); // x-a: v (literal with indexing, new name)
    head1.extend(b"x-a");
    head1.extend([0x01, b'v']);
    let mut head3 = vec![0x8d, 0xbe]; // :status 404, then x-a: v from the dynamic table
    head3.extend([0x0f, 0x12]); // date (literal without indexing), Huffman value
    let date = crate::proto::h2::huffman::encode(b"Mon, 21 Oct 2013 20:13:21 GMT");
    head3.push(0x80 | date.len() as u8);
    head3.extend(&date);
    let mut padded = vec![3];
    padded.extend(b"hello");
    padded.extend([0, 0, 0]);
    Script::default()
        .frame(HEADERS, END_HEADERS, 1, &head1)
        .frame(DATA, PADDED, 1, &padded)
        .frame(HEADERS, END_HEADERS | END_STREAM, 3, &head3)
        .frame(DATA, END_STREAM, 1, b" world")
        .0
}

#[test]
fn responses_are_the_same_however_the_bytes_are_split() {
    let bytes = two_responses();
    for cut in 0..=bytes.len() {
        for cuts in [vec![cut], (0..bytes.len()).collect()] {
            let mut c = settled(2, &[], b"");
            open(&mut c, 0);
            open(&mut c, 1);
            feed(&mut c, &bytes, &cuts);
            let a = outcome(&mut c, 0).expect("stream 1 done").unwrap();
            let b = outcome(&mut c, 1).expect("stream 3 done").unwrap();
            assert_eq!((a.status, a.body_bytes), (200, 11), "cut {cut}");
            assert_eq!((b.status, b.body_bytes), (404, 0), "cut {cut}");
            assert!(a.first_byte.is_some() && b.first_byte.is_some());
            assert_eq!(c.active(), 0);
            assert!(!c.is_ended());
        }
    }
}

#[test]
fn the_first_request_indexes_its_fields_and_later_ones_refer_to_them() {
    let mut c = settled(2, &[], b"");
    open(&mut c, 0);
    open(&mut c, 1);
    let sent = frames(&c.out);
    assert_eq!((sent[0].0, sent[0].1), (HEADERS, END_HEADERS | END_STREAM));
    assert_eq!((sent[0].2, sent[1].2), (1, 3));
    assert!(sent[1].3.len() < sent[0].3.len());
    assert!(sent[1].3.len() <= 5, "one byte a field: {:?}", sent[1].3);
    let mut server = Decoder::default();
    for f in &sent {
        let mut got = Vec::new();
        server
            .decode(&f.3, |n, v| got.push((n.to_vec(), v.to_vec())))
            .unwrap();
        assert_eq!(got.len(), 5);
        assert!(got.contains(&(b":authority".to_vec(), b"127.0.0.1:1".to_vec())));
    }
}

#[test]
fn a_smaller_server_table_gets_a_size_update_and_a_change_empties_it() {
    let mut c = settled(2, &[(SETTINGS_HEADER_TABLE_SIZE, 0)], b"");
    open(&mut c, 0);
    let first = frames(&c.out)[0].3.clone();
    assert_eq!(first[0], 0x20, "size update to 0");
    let mut server = Decoder::default();
    server.decode(&first, |_, _| {}).unwrap();
    // A server that changes its table size after spate indexed fields.
    let mut c = settled(2, &[], b"");
    open(&mut c, 0);
    feed(
        &mut c,
        &Script::default()
            .settings(&[(SETTINGS_HEADER_TABLE_SIZE, 100)])
            .0,
        &[],
    );
    c.out.clear();
    feed(&mut c, &ok(1), &[]);
    assert!(outcome(&mut c, 0).unwrap().is_ok());
    open(&mut c, 0);
    open(&mut c, 1);
    let sent = frames(&c.out);
    assert_eq!(sent[0].3[0], 0x20, "the next block empties the table");
    assert_ne!(sent[1].3[0], 0x20);
}

#[test]
fn flow_control_gives_the_window_back_and_bodies_wait_for_it() {
    let mut small = cfg(1);
    small.stream_window = 100;
    small.conn_window = 100;
    let mut c = Conn::new(small, request(b""));
    feed(&mut c, &Script::default().settings(&[]).pong().0, &[]);
    c.out.clear();
    open(&mut c, 0);
    c.out.clear();
    let server = Script::default()
        .frame(HEADERS, END_HEADERS, 1, &[0x88])
        .frame(DATA, 0, 1, &[b'x'; 60]);
    feed(&mut c, &server.0, &[]);
    let updates: Vec<_> = frames(&c.out)
        .into_iter()
        .filter(|f| f.0 == WINDOW_UPDATE)
        .map(|f| (f.2, u32::from_be_bytes(f.3.try_into().unwrap())))
        .collect();
    assert_eq!(updates, [(0, 60), (1, 60)]);
    // Beyond the window: a flow-control error.
    feed(
        &mut c,
        &Script::default().frame(DATA, 0, 1, &[b'x'; 200]).0,
        &[],
    );
    assert!(c.is_ended() || outcome(&mut c, 0).is_some_and(|r| r.is_err()));

    // A body larger than the server's window: sent as the window opens.
    let mut c = settled(1, &[(SETTINGS_INITIAL_WINDOW_SIZE, 10)], &[b'b'; 25]);
    open(&mut c, 0);
    let data = |c: &Conn| -> usize {
        frames(&c.out)
            .iter()
            .filter(|f| f.0 == DATA)
            .map(|f| f.3.len())
            .sum()
    };
    assert_eq!(data(&c), 10);
    feed(
        &mut c,
        &Script::default()
            .frame(WINDOW_UPDATE, 0, 1, &20u32.to_be_bytes())
            .0,
        &[],
    );
    assert_eq!(data(&c), 25);
    let last = frames(&c.out).into_iter().rfind(|f| f.0 == DATA).unwrap();
    assert_eq!(last.1, END_STREAM);
}

#[test]
fn the_server_limit_holds_streams_back() {
    let mut c = settled(2, &[(SETTINGS_MAX_CONCURRENT_STREAMS, 1)], b"");
    open(&mut c, 0);
    assert_eq!(c.ready(), Ready::Wait);
    assert!(c.poll_open(1, &mut cx(), None).is_pending());
    feed(&mut c, &ok(1), &[]);
    assert_eq!(c.ready(), Ready::Yes);
    open(&mut c, 1);
}

mod failures;
mod heads_and_others;
mod receivers;
