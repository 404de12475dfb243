//! Properties the HTTP/2 connection state machine must keep whatever a server sends: no panic,
//! and the same outcome (every stream's result, whether the connection ended, every byte spate
//! queued to send) however the bytes are split across reads. Checked by the cargo-fuzz target
//! `h2` in fuzz/ and by a short randomized test in `cargo test`; not used at run time.

use std::task::{Context, Poll, Waker};

use bytes::Bytes;

use super::Prepared;
use super::conn::{Config, Conn};
use super::frame;
use crate::clock::Tick;
use crate::proto::Events;
use crate::proto::h1::props::splits;

/// What a stream of server bytes did to a connection with every slot open.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Per slot: `Ok((status, body bytes))`, `Err(message)`, or `None` if still open.
    pub streams: Vec<Option<Result<(u16, u64), String>>>,
    pub ended: bool,
    pub out: Vec<u8>,
}

/// A handshake a server would send: SETTINGS, then the acknowledgement of spate's PING.
pub fn handshake() -> Vec<u8> {
    let mut b = Vec::new();
    frame::put_head(&mut b, 6, frame::SETTINGS, 0, 0);
    b.extend([0, 3, 0, 0, 0, 100]);
    frame::put_ping(&mut b, frame::ACK, b"spate-h2");
    b
}

/// A receiver that has had enough of its stream after `cap` payload bytes, if it has a cap.
struct Capped {
    cap: Option<u64>,
    got: u64,
}

impl Events for Capped {
    fn data(&mut self, bytes: &[u8]) {
        self.got += bytes.len() as u64;
    }
    fn enough(&self) -> bool {
        self.cap.is_some_and(|c| self.got >= c)
    }
}

/// Feeds `data` in the chunks ending at `cuts` to a connection whose slots were all opened once
/// the handshake (if `data` starts with one) was read; each slot's receiver has enough after
/// `cap` payload bytes, if given.
pub fn run(data: &[u8], cuts: &[usize], small_windows: bool, cap: Option<u64>) -> Outcome {
    let window = if small_windows { 100 } else { 1 << 20 };
    let cfg = Config {
        stream_window: window,
        conn_window: window,
        max_frame: 16_384,
        max_header_bytes: 4096,
        slots: 4,
    };
    let fields: [(&[u8], &[u8]); 4] = [
        (b":method", b"GET"),
        (b":scheme", b"http"),
        (b":path", b"/"),
        (b":authority", b"h"),
    ];
    let mut c = Conn::with_events(cfg, Prepared::new(&fields, Bytes::new()), || Capped {
        cap,
        got: 0,
    });
    let mut cx = Context::from_waker(Waker::noop());
    let skip = if data.starts_with(&handshake()) {
        handshake().len()
    } else {
        0
    };
    c.receive(&data[..skip], Tick::now());
    for k in 0..4 {
        let _ = c.poll_open(k, &mut cx, None);
    }
    let mut buf = Vec::new();
    let mut from = skip;
    for &to in cuts.iter().chain([&data.len()]) {
        let to = to.max(from);
        buf.extend_from_slice(&data[from..to]);
        from = to;
        let used = c.receive(&buf, Tick::now());
        assert!(used <= buf.len(), "consumed {used} of {}", buf.len());
        buf.drain(..used);
    }
    let streams = (0..4)
        .map(|k| match c.poll_response(k, &mut cx) {
            Poll::Ready(Ok(r)) => Some(Ok((r.status, r.body_bytes))),
            Poll::Ready(Err(e)) => Some(Err(e.to_string())),
            Poll::Pending => None,
        })
        .collect();
    Outcome {
        streams,
        ended: c.is_ended(),
        out: std::mem::take(&mut c.out),
    }
}

/// The split property, for `data` after an optional valid handshake (bit 1 of `seed`), with
/// small windows (bit 0) and receivers that cut their streams short (bit 2, after a number of
/// bytes from the seed's high bits).
pub fn check_stream(data: &[u8], seed: u64) {
    let data = if seed & 2 == 2 {
        [handshake().as_slice(), data].concat()
    } else {
        data.to_vec()
    };
    let small = seed & 1 == 1;
    let cap = (seed & 4 == 4).then_some((seed >> 32) % 64);
    let whole = run(&data, &[], small, cap);
    for cuts in [splits(data.len(), seed, 64), splits(data.len(), 0, 1)] {
        let split = run(&data, &cuts, small, cap);
        assert_eq!(whole, split, "split at {cuts:?}");
    }
    for s in whole.streams.iter().flatten().flatten() {
        assert!((100..=999).contains(&s.0), "status {}", s.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::h1::props::tests::Rng;
    use crate::proto::h2::frame::*;

    fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
        put_head(out, payload.len(), kind, flags, stream);
        out.extend_from_slice(payload);
    }

    /// Valid response streams to mutate: heads with indexing and Huffman, DATA with padding,
    /// trailers, a reset, a GOAWAY, window updates and pings.
    fn seeds() -> Vec<Vec<u8>> {
        let mut a = Vec::new();
        frame(
            &mut a,
            HEADERS,
            END_HEADERS,
            1,
            &[0x88, 0x40, 0x01, b'k', 0x01, b'v'],
        );
        frame(&mut a, DATA, PADDED, 1, &[2, b'h', b'i', 0, 0]);
        frame(&mut a, HEADERS, END_HEADERS | END_STREAM, 3, &[0x8d, 0xbe]);
        frame(&mut a, HEADERS, END_HEADERS | END_STREAM, 1, &[0xbe]);
        let mut b = Vec::new();
        frame(&mut b, HEADERS, 0, 5, &[0x88]);
        frame(
            &mut b,
            CONTINUATION,
            END_HEADERS,
            5,
            &[0x0f, 0x12, 0x83, 0xd0, 0x7a, 0xbf],
        );
        frame(&mut b, DATA, 0, 5, &[b'x'; 90]);
        frame(&mut b, WINDOW_UPDATE, 0, 0, &10u32.to_be_bytes());
        frame(&mut b, PING, 0, 0, b"12345678");
        frame(&mut b, RST_STREAM, 0, 7, &2u32.to_be_bytes());
        frame(&mut b, DATA, END_STREAM, 5, b"end");
        let mut c = Vec::new();
        frame(
            &mut c,
            SETTINGS,
            0,
            0,
            &[0, 4, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0],
        );
        frame(&mut c, GOAWAY, 0, 0, &[0, 0, 0, 3, 0, 0, 0, 0]);
        frame(&mut c, HEADERS, END_HEADERS | END_STREAM, 1, &[0x88]);
        frame(&mut c, PRIORITY, 0, 3, &[0, 0, 0, 0, 1]);
        frame(&mut c, 0xfe, 0, 0, b"unknown");
        vec![a, b, c]
    }

    #[test]
    fn valid_streams_complete_and_any_split_agrees() {
        for (i, s) in seeds().iter().enumerate() {
            for seed in [2, 3, 0x2a, 0x2b, 6, 0x3_0000_0006] {
                check_stream(s, seed);
            }
            let done = run(&[handshake(), s.clone()].concat(), &[], false, None);
            assert!(!done.ended, "seed {i} ends the connection");
            assert!(
                done.streams.iter().any(|s| matches!(s, Some(Ok(_)))),
                "seed {i}"
            );
        }
    }

    #[test]
    fn mutated_streams_keep_the_properties() {
        let seeds = seeds();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..1500 {
            let mut d = seeds[rng.below(seeds.len())].clone();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(d.len());
                match rng.below(3) {
                    0 => d[at] = rng.next() as u8,
                    1 => {
                        d.remove(at);
                    }
                    _ => d.insert(at, rng.next() as u8),
                }
            }
            check_stream(&d, rng.next() | 2);
            check_stream(&d, rng.next() & !2);
        }
    }
}
