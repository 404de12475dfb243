//! Sans-IO state machine of one HTTP/1.x response: skips interim 1xx heads, parses the final head,
//! then frames the body. Also the carry rule for bytes that straddle reads. No IO, no clock.

use super::{Body, HeadMemo, MAX_HEAD_BYTES, ParseError};
use crate::proto::Events;

/// How far [`ResponseParser::feed`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The response is not complete. Bytes from `consumed` on are an incomplete head and must be
    /// fed again, followed by more input.
    NeedMore { consumed: usize },
    /// The response ended after `consumed` bytes; the rest of the input belongs to what follows.
    Complete { consumed: usize },
}

impl Progress {
    pub fn consumed(self) -> usize {
        match self {
            Progress::NeedMore { consumed } | Progress::Complete { consumed } => consumed,
        }
    }
}

/// Parser of one response. Create one per request.
#[derive(Debug, Clone)]
pub struct ResponseParser {
    head_request: bool,
    /// `None` while the (final) head is still being read.
    body: Option<Body>,
    status: u16,
    keep_alive: bool,
    body_bytes: u64,
}

impl ResponseParser {
    /// `head_request`: the request was HEAD, so the response has no body whatever it says.
    pub fn new(head_request: bool) -> Self {
        ResponseParser {
            head_request,
            body: None,
            status: 0,
            keep_alive: false,
            body_bytes: 0,
        }
    }

    /// Status of the final response; 0 before its head is parsed.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Whether the connection can carry the next request once this response is complete.
    pub fn keep_alive(&self) -> bool {
        self.keep_alive
    }

    /// Payload bytes of the body so far.
    pub fn body_bytes(&self) -> u64 {
        self.body_bytes
    }

    /// Feeds the bytes that follow what was consumed so far. `heads` is the thread's memory of
    /// the last head, which spares parsing a head identical to it.
    pub fn feed(&mut self, buf: &[u8], heads: &mut HeadMemo) -> Result<Progress, ParseError> {
        self.feed_to(buf, heads, &mut ())
    }

    /// As [`ResponseParser::feed`], reporting the final head and the body's payload to `events`.
    #[inline]
    pub fn feed_to<E: Events>(
        &mut self,
        buf: &[u8],
        heads: &mut HeadMemo,
        events: &mut E,
    ) -> Result<Progress, ParseError> {
        let mut off = 0;
        loop {
            match &mut self.body {
                // The parser sees at most MAX_HEAD_BYTES of a head, so that the verdict on a
                // head does not depend on how its bytes were split across reads.
                None => match heads.parse(
                    &buf[off..buf.len().min(off + MAX_HEAD_BYTES)],
                    self.head_request,
                )? {
                    None if buf.len() - off >= MAX_HEAD_BYTES => {
                        return Err(ParseError::HeadTooLarge);
                    }
                    None => return Ok(Progress::NeedMore { consumed: off }),
                    Some(head) => {
                        if E::HEADS && !head.is_interim() {
                            events.head_bytes(&buf[off..off + head.len]);
                        }
                        off += head.len;
                        if !head.is_interim() {
                            events.head(head.status, head.media);
                            self.status = head.status;
                            self.keep_alive = head.keep_alive;
                            self.body = Some(Body::new(head.framing));
                        }
                    }
                },
                Some(body) => {
                    let d = body.decode_to(&buf[off..], events)?;
                    off += d.consumed;
                    self.body_bytes += d.payload;
                    return Ok(if d.done {
                        Progress::Complete { consumed: off }
                    } else {
                        Progress::NeedMore { consumed: off }
                    });
                }
            }
        }
    }

    /// The server closed the connection. True when that completes the response (a
    /// close-delimited body); false when the response was cut short or never began.
    pub fn finish_at_eof(&mut self) -> bool {
        self.body.as_mut().is_some_and(Body::finish_at_eof)
    }
}

/// Feeds newly read `data` to `parser`, keeping in `carry` what must survive until the next read:
/// an incomplete head, or bytes that arrived after the end of the response. With `carry` empty
/// and a head that fits in one read (the normal case) nothing is copied. Call with empty `data`
/// to process what `carry` already holds. Returns whether the response is complete; its final
/// head and payload go to `events` as they are parsed.
#[inline]
pub fn feed_with_carry(
    parser: &mut ResponseParser,
    carry: &mut Vec<u8>,
    data: &[u8],
    heads: &mut HeadMemo,
    events: &mut impl Events,
) -> Result<bool, ParseError> {
    if carry.is_empty() {
        let progress = parser.feed_to(data, heads, events)?;
        carry.extend_from_slice(&data[progress.consumed()..]);
        return Ok(matches!(progress, Progress::Complete { .. }));
    }
    carry.extend_from_slice(data);
    let progress = parser.feed_to(carry, heads, events)?;
    carry.drain(..progress.consumed());
    // A head that straddled a large read may have grown the buffer; do not keep that memory
    // for the life of the connection.
    if carry.capacity() > 16 * 1024 && carry.len() <= 4 * 1024 {
        carry.shrink_to(4 * 1024);
    }
    Ok(matches!(progress, Progress::Complete { .. }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One fixture: a response stream and what each response in it must parse to.
    struct Fixture {
        name: &'static str,
        raw: &'static [u8],
        head_request: bool,
        /// (status, body bytes, keep-alive) per response, in order.
        want: &'static [(u16, u64, bool)],
        /// Whether the last response is close-delimited (completed by EOF).
        ends_at_eof: bool,
    }

    const FIXTURES: &[Fixture] = &[
        Fixture {
            name: "content-length",
            raw: b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            head_request: false,
            want: &[(200, 5, true)],
            ends_at_eof: false,
        },
        Fixture {
            name: "two responses back to back",
            raw: b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
            head_request: false,
            want: &[(200, 2, true), (404, 0, true)],
            ends_at_eof: false,
        },
        Fixture {
            name: "chunked with extensions and trailers, then close",
            raw: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;a=b\r\nwiki\r\n5\r\npedia\r\n0\r\nX-T: 1\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\nz",
            head_request: false,
            want: &[(200, 9, true), (200, 1, false)],
            ends_at_eof: false,
        },
        Fixture {
            name: "interim 100 and 103 before the final response",
            raw: b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nabc",
            head_request: false,
            want: &[(201, 3, true)],
            ends_at_eof: false,
        },
        Fixture {
            name: "204 and 304 carry no body",
            raw: b"HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n",
            head_request: false,
            want: &[(204, 0, true), (304, 0, true)],
            ends_at_eof: false,
        },
        Fixture {
            name: "HEAD response with a Content-Length",
            raw: b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
            head_request: true,
            want: &[(200, 0, true), (200, 0, true)],
            ends_at_eof: false,
        },
        Fixture {
            name: "close-delimited HTTP/1.0",
            raw: b"HTTP/1.0 200 OK\r\nServer: old\r\n\r\nuntil the end",
            head_request: false,
            want: &[(200, 13, false)],
            ends_at_eof: true,
        },
    ];

    /// Runs the fixture with the stream cut at the given points, as the lane would see reads.
    fn run(f: &Fixture, cuts: &[usize]) -> Vec<(u16, u64, bool)> {
        let mut reads: Vec<&[u8]> = Vec::new();
        let mut start = 0;
        for &c in cuts {
            reads.push(&f.raw[start..c]);
            start = c;
        }
        reads.push(&f.raw[start..]);
        let mut reads = reads.into_iter();

        let mut got = Vec::new();
        let mut carry = Vec::new();
        // One memory for the whole stream, as the lane keeps one per thread.
        let mut heads = HeadMemo::default();
        for _ in 0..f.want.len() {
            let mut p = ResponseParser::new(f.head_request);
            // Bytes left over from the previous response come first.
            let mut done = !carry.is_empty()
                && feed_with_carry(&mut p, &mut carry, &[], &mut heads, &mut ()).unwrap();
            while !done {
                match reads.next() {
                    Some(data) => {
                        done =
                            feed_with_carry(&mut p, &mut carry, data, &mut heads, &mut ()).unwrap()
                    }
                    None => {
                        assert!(f.ends_at_eof, "{}: ran out of input", f.name);
                        assert!(p.finish_at_eof(), "{}: eof did not complete", f.name);
                        done = true;
                    }
                }
            }
            got.push((p.status(), p.body_bytes(), p.keep_alive()));
        }
        assert!(
            carry.is_empty() && reads.all(<[u8]>::is_empty),
            "{}: bytes left over",
            f.name
        );
        got
    }

    #[test]
    fn every_fixture_in_one_read() {
        for f in FIXTURES {
            assert_eq!(run(f, &[]), f.want, "{}", f.name);
        }
    }

    #[test]
    fn every_fixture_split_at_every_byte() {
        for f in FIXTURES {
            for cut in 0..=f.raw.len() {
                assert_eq!(run(f, &[cut]), f.want, "{} cut at {cut}", f.name);
            }
        }
    }

    #[test]
    fn every_fixture_split_at_every_pair_of_bytes() {
        for f in FIXTURES {
            for a in 0..=f.raw.len() {
                for b in a..=f.raw.len() {
                    assert_eq!(run(f, &[a, b]), f.want, "{} cuts at {a},{b}", f.name);
                }
            }
        }
    }

    #[test]
    fn every_fixture_one_byte_per_read() {
        for f in FIXTURES {
            let cuts: Vec<usize> = (1..f.raw.len()).collect();
            assert_eq!(run(f, &cuts), f.want, "{}", f.name);
        }
    }

    #[test]
    fn eof_before_or_inside_a_response_is_not_completion() {
        let mut heads = HeadMemo::default();
        let mut p = ResponseParser::new(false);
        assert!(!p.finish_at_eof(), "no bytes at all");
        let mut p = ResponseParser::new(false);
        let mut carry = Vec::new();
        assert!(
            !feed_with_carry(
                &mut p,
                &mut carry,
                b"HTTP/1.1 200 OK\r\nContent-Le",
                &mut heads,
                &mut ()
            )
            .unwrap()
        );
        assert!(!p.finish_at_eof(), "inside the head");
        let mut p = ResponseParser::new(false);
        let progress = p
            .feed(
                b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc",
                &mut heads,
            )
            .unwrap();
        assert_eq!(progress, Progress::NeedMore { consumed: 41 });
        assert!(!p.finish_at_eof(), "inside a fixed-length body");
    }

    #[test]
    fn head_without_end_is_rejected_once_too_large() {
        let mut heads = HeadMemo::default();
        let mut p = ResponseParser::new(false);
        let mut carry = Vec::new();
        assert!(
            !feed_with_carry(
                &mut p,
                &mut carry,
                b"HTTP/1.1 200 OK\r\nX-Filler: ",
                &mut heads,
                &mut ()
            )
            .unwrap()
        );
        let block = [b'a'; 1024];
        let mut result = Ok(false);
        for _ in 0..=MAX_HEAD_BYTES / block.len() {
            result = feed_with_carry(&mut p, &mut carry, &block, &mut heads, &mut ());
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(ParseError::HeadTooLarge));
    }

    #[test]
    fn body_errors_surface() {
        let mut p = ResponseParser::new(false);
        let mut heads = HeadMemo::default();
        let r = p.feed(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            &mut heads,
        );
        assert_eq!(r, Err(ParseError::ChunkSize));
    }

    /// Responses whose redirect target a following receiver must read, and what it reads of
    /// each: through the heads' bytes (`Events::HEADS`), recalled from the memo or parsed.
    const LOCATED: &[u8] = b"HTTP/1.1 301 Moved\r\nLocation:  /next?a=1 \r\nContent-Length: 3\r\n\r\nabc\
HTTP/1.1 301 Moved\r\nLocation:  /next?a=1 \r\nContent-Length: 3\r\n\r\nabc\
HTTP/1.1 200 OK\r\nLocation: /not-a-redirect\r\nContent-Length: 0\r\n\r\n\
HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\nHTTP/1.1 302 Found\r\nlocation: http://b:2/x\r\nLocation: /second\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n\
HTTP/1.1 307 Temporary Redirect\r\nContent-Length: 0\r\n\r\n";
    const KEPT: [Option<&[u8]>; 5] = [
        Some(b"/next?a=1"),
        // The same head again: recalled from the memo, not parsed, and still read.
        Some(b"/next?a=1"),
        None,
        Some(b"http://b:2/x"),
        None,
    ];

    /// What a receiver that follows redirects reads of a response: a 3xx's Location.
    #[derive(Default)]
    struct Led(Option<Vec<u8>>);

    impl Events for Led {
        const HEADS: bool = true;
        fn head_bytes(&mut self, head: &[u8]) {
            self.0 = crate::proto::h1::location(head).map(<[u8]>::to_vec);
        }
        fn head(&mut self, status: u16, _: crate::proto::Media) {
            if !(300..400).contains(&status) {
                self.0 = None;
            }
        }
    }

    fn locations_with_cut(cut: usize) -> Vec<Option<Vec<u8>>> {
        let mut reads = [&LOCATED[..cut], &LOCATED[cut..]].into_iter();
        let mut heads = HeadMemo::default();
        let mut carry = Vec::new();
        let mut got = Vec::new();
        for _ in 0..KEPT.len() {
            let mut led = Led::default();
            let mut p = ResponseParser::new(false);
            let mut done = !carry.is_empty()
                && feed_with_carry(&mut p, &mut carry, &[], &mut heads, &mut led).unwrap();
            while !done {
                let data = reads.next().expect("ran out of input");
                done = feed_with_carry(&mut p, &mut carry, data, &mut heads, &mut led).unwrap();
            }
            got.push(led.0);
        }
        got
    }

    #[test]
    fn each_redirects_location_is_read_however_the_bytes_are_split() {
        let want: Vec<Option<Vec<u8>>> = KEPT.iter().map(|k| k.map(<[u8]>::to_vec)).collect();
        for cut in 0..=LOCATED.len() {
            assert_eq!(locations_with_cut(cut), want, "cut at {cut}");
        }
    }
}
