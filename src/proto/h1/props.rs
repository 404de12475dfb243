//! Properties the HTTP/1.1 parsers must keep for any input whatever a server sends: no panic,
//! never consuming more than given, and the same result however the bytes are split across
//! reads. Checked by the cargo-fuzz targets in fuzz/ and by a short randomized test in
//! `cargo test`; not used at run time. A violated property panics with what differed.

use super::{Chunked, HeadMemo, MAX_HEAD_BYTES, ParseError, ResponseParser, parse_head};
use crate::proto::h1::response::feed_with_carry;
use crate::proto::{Events, Media};

/// What a stream of responses parsed to: each response (status, body bytes, keep-alive), then
/// how the stream ended; and what the parser reported to its `Events` of each complete response
/// (the final head's status, the payload).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub responses: Vec<(u16, u64, bool)>,
    pub end: Result<End, ParseError>,
    pub reported: Vec<Reported>,
}

/// What `Events` heard of one response: the final head (status, media), the payload.
pub type Reported = (Option<(u16, Media)>, Vec<u8>);

/// The events of the response being read.
#[derive(Debug, Default)]
struct Seen {
    head: Option<(u16, Media)>,
    /// The final head's bytes, as `head_bytes` gave them.
    raw: Option<Vec<u8>>,
    payload: Vec<u8>,
}

impl Events for Seen {
    const HEADS: bool = true;

    fn head_bytes(&mut self, head: &[u8]) {
        assert!(self.raw.is_none(), "a second final head's bytes");
        self.raw = Some(head.to_vec());
    }

    fn head(&mut self, status: u16, media: Media) {
        assert!(self.head.is_none(), "a second final head");
        // The bytes handed over are the head itself: they parse, whole, to what is reported.
        let raw = self.raw.as_deref().expect("a head without its bytes");
        let parsed = super::parse_head(raw, false)
            .ok()
            .flatten()
            .expect("the head's bytes do not parse");
        assert_eq!((parsed.len, parsed.status), (raw.len(), status));
        self.head = Some((status, media));
    }

    fn data(&mut self, bytes: &[u8]) {
        assert!(self.head.is_some(), "payload before the head");
        self.payload.extend_from_slice(bytes);
    }
}

/// How a stream without a parse error ended at EOF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Between responses.
    Clean,
    /// EOF completed a close-delimited body (counted in `responses`).
    ClosedBody,
    /// EOF in the middle of a response.
    Cut,
}

/// Split points derived from `seed`: chunk sizes from 1 to `max`, so that every read length is
/// exercised and a seed of 0 feeds byte by byte.
pub fn splits(len: usize, seed: u64, max: usize) -> Vec<usize> {
    let mut x = seed;
    let mut out = Vec::new();
    let mut at = 0;
    while at < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let step = if seed == 0 {
            1
        } else {
            1 + (x % max.max(1) as u64) as usize
        };
        at = (at + step).min(len);
        out.push(at);
    }
    out
}

/// Parses `data` as a response stream on one connection, fed in the chunks ending at `cuts`,
/// the way the lane does: one parser per response, the carry between reads, one memory of the
/// last head for the stream, which captures Locations as a following connection's does.
pub fn parse_stream(data: &[u8], cuts: &[usize], head_request: bool) -> Outcome {
    parse_stream_with(data, cuts, head_request, true)
}

/// [`parse_stream`], with the head memory forgotten before every feed when `remember` is false:
/// every head is parsed.
fn parse_stream_with(data: &[u8], cuts: &[usize], head_request: bool, remember: bool) -> Outcome {
    let mut heads = HeadMemo::default();
    let mut responses = Vec::new();
    let mut parser = ResponseParser::new(head_request);
    let mut carry = Vec::new();
    let mut started = false;
    let mut seen = Seen::default();
    let mut reported = Vec::new();
    let mut from = 0;
    for &to in cuts.iter().chain(std::iter::once(&data.len())) {
        let mut chunk = &data[from..to.max(from)];
        let read = chunk.len();
        from = to.max(from);
        loop {
            let before = carry.len() + chunk.len();
            started |= before > 0;
            if !remember {
                heads = HeadMemo::default();
            }
            match feed_with_carry(&mut parser, &mut carry, chunk, &mut heads, &mut seen) {
                Err(e) => {
                    return Outcome {
                        responses,
                        end: Err(e),
                        reported,
                    };
                }
                Ok(false) => break,
                Ok(true) => {
                    responses.push((parser.status(), parser.body_bytes(), parser.keep_alive()));
                    let s = std::mem::take(&mut seen);
                    reported.push((s.head, s.payload));
                    parser = ResponseParser::new(head_request);
                    started = !carry.is_empty();
                    chunk = &[];
                    // The carry holds what follows the response; process it before more input.
                    if carry.is_empty() {
                        break;
                    }
                }
            }
            // The carry holds at most an incomplete head (under the limit) and one read.
            assert!(
                carry.len() <= MAX_HEAD_BYTES + read,
                "carry grew to {}",
                carry.len()
            );
        }
    }
    let end = if parser.finish_at_eof() {
        responses.push((parser.status(), parser.body_bytes(), parser.keep_alive()));
        let s = std::mem::take(&mut seen);
        reported.push((s.head, s.payload));
        End::ClosedBody
    } else if started {
        End::Cut
    } else {
        End::Clean
    };
    Outcome {
        responses,
        end: Ok(end),
        reported,
    }
}

/// The stream property: the same outcome whole, byte by byte and in `seed`'s splits, and with
/// every head parsed rather than recalled.
pub fn check_stream(data: &[u8], seed: u64) {
    let head_request = seed & 1 == 1;
    let whole = parse_stream(data, &[], head_request);
    let parsed = parse_stream_with(data, &[], head_request, false);
    assert_eq!(
        (&whole.responses, &whole.end, &whole.reported),
        (&parsed.responses, &parsed.end, &parsed.reported),
        "the head memory changed the outcome"
    );
    for cuts in [splits(data.len(), seed, 64), splits(data.len(), 0, 1)] {
        let split = parse_stream(data, &cuts, head_request);
        assert_eq!(whole, split, "split at {cuts:?}");
    }
    for (&(status, body, _), (head, payload)) in whole.responses.iter().zip(&whole.reported) {
        assert!((100..=999).contains(&status), "status {status}");
        // The events saw what was counted: the final head, and the payload byte for byte.
        assert_eq!(head.map(|h| h.0), Some(status));
        assert_eq!(payload.len() as u64, body, "payload reported");
    }
}

/// The head property: a complete head lies within the input, has a three-digit status and parses
/// the same without what follows it (what makes `HeadMemo` sound); incomplete input stays
/// incomplete or fails, never succeeds differently.
pub fn check_head(data: &[u8]) {
    let head_request = data.first().is_some_and(|b| b & 1 == 1);
    match parse_head(data, head_request) {
        Ok(Some(h)) => {
            assert!(h.len > 0 && h.len <= data.len(), "len {}", h.len);
            assert!((100..=999).contains(&h.status), "status {}", h.status);
            assert_eq!(parse_head(&data[..h.len], head_request), Ok(Some(h)));
        }
        Ok(None) => {
            for cut in (0..data.len()).step_by(data.len() / 32 + 1) {
                assert!(
                    matches!(parse_head(&data[..cut], head_request), Ok(None) | Err(_)),
                    "a prefix of an incomplete head parsed"
                );
            }
        }
        Err(_) => {}
    }
}

/// Decodes `data` as one chunked body in the chunks ending at `cuts`: (consumed, payload,
/// done) or the error.
pub fn decode_chunked(data: &[u8], cuts: &[usize]) -> Result<(usize, u64, bool), ParseError> {
    let mut c = Chunked::new();
    let (mut consumed, mut payload) = (0, 0);
    let mut from = 0;
    for &to in cuts.iter().chain(std::iter::once(&data.len())) {
        let chunk = &data[from..to.max(from)];
        from = to.max(from);
        let (n, p) = c.decode(chunk)?;
        assert!(
            n <= chunk.len() && p <= n as u64,
            "consumed {n} of {}",
            chunk.len()
        );
        consumed += n;
        payload += p;
        if c.is_done() {
            break;
        }
        assert_eq!(n, chunk.len(), "stopped early without being done");
    }
    Ok((consumed, payload, c.is_done()))
}

/// The chunked property: the same result whole, byte by byte and in `seed`'s splits.
pub fn check_chunked(data: &[u8], seed: u64) {
    let whole = decode_chunked(data, &[]);
    for cuts in [splits(data.len(), seed, 16), splits(data.len(), 0, 1)] {
        assert_eq!(whole, decode_chunked(data, &cuts), "split at {cuts:?}");
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Seeds for the mutations: valid streams of every framing, from the parser's fixtures.
    const SEEDS: &[&[u8]] = &[
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: v\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.0 200 OK\r\n\r\nclose-delimited body",
        b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\nHTTP/1.1 500 E\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
        // The same head twice: a mutation of one copy must not be answered from the memory.
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    ];
    const BYTES: &[u8] = b"\r\n :;0123456789abcdefABCDEF HTTP/1.1 chunked Content-Length\x00\xff\t";

    /// A xorshift generator for the mutation tests (of both HTTP versions).
    pub(crate) struct Rng(pub u64);
    impl Rng {
        pub fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        pub fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// A seed stream with a few random edits: insert, delete, replace or duplicate a span.
    fn mutated(rng: &mut Rng) -> Vec<u8> {
        let mut d = SEEDS[rng.below(SEEDS.len())].to_vec();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(d.len() + 1);
            match rng.below(4) {
                0 => d.insert(at, BYTES[rng.below(BYTES.len())]),
                1 if at < d.len() => {
                    d.remove(at);
                }
                2 if at < d.len() => d[at] = BYTES[rng.below(BYTES.len())],
                _ => {
                    let end = (at + rng.below(16)).min(d.len());
                    let span = d[at..end].to_vec();
                    d.splice(at..at, span);
                }
            }
        }
        d
    }

    #[test]
    fn seeds_parse_as_their_fixtures_say() {
        let o = parse_stream(SEEDS[0], &[], false);
        assert_eq!(o.responses, [(200, 5, true), (204, 0, true)]);
        assert_eq!(o.end, Ok(End::Clean));
        let o = parse_stream(SEEDS[3], &[], false);
        assert_eq!(o.responses, [(200, 20, false)]);
        assert_eq!(o.end, Ok(End::ClosedBody));
        let o = parse_stream(&SEEDS[1][..30], &[], false);
        assert_eq!(o.end, Ok(End::Cut));
    }

    #[test]
    fn a_head_over_the_limit_fails_however_it_arrives() {
        let mut big = b"HTTP/1.1 200 OK\r\n".to_vec();
        let filler = format!("X-Filler: {}\r\n", "0".repeat(1000));
        while big.len() < MAX_HEAD_BYTES + 100 {
            big.extend_from_slice(filler.as_bytes());
        }
        big.extend_from_slice(b"Content-Length: 0\r\n\r\n");
        let whole = parse_stream(&big, &[], false);
        assert_eq!(whole.end, Err(ParseError::HeadTooLarge));
        // Byte by byte re-parses the growing head each time: too slow for 64 KiB here.
        for max in [100, 4096, 70_000] {
            let cuts = splits(big.len(), 12345, max);
            assert_eq!(parse_stream(&big, &cuts, false), whole, "reads up to {max}");
        }
    }

    /// The fuzz targets' properties on mutated fixtures: a few thousand cases, so a regression
    /// shows in `cargo test` without the fuzzer.
    #[test]
    fn properties_hold_on_mutated_fixtures() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3_000 {
            let d = mutated(&mut rng);
            let seed = rng.next();
            check_stream(&d, seed);
            check_head(&d);
            if let Some(body) = d.windows(4).position(|w| w == b"\r\n\r\n") {
                check_chunked(&d[body + 4..], seed);
            }
        }
    }
}
