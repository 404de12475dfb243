//! Sans-IO gRPC over HTTP/2, as the gRPC protocol document describes it: a body of
//! Length-Prefixed-Messages (one flag byte, 0 or 1 for compressed, a four-byte big-endian
//! length, the message), which DATA frames may split anywhere, and the call's status, read from
//! the `grpc-status` and `grpc-message` fields of its trailers (or of a Trailers-Only head).
//! Bounded whatever a server sends: messages are counted, never buffered, and one longer than
//! `MAX_MESSAGE` is refused as the gRPC libraries refuse it; a status message is kept to
//! `MAX_STATUS_MESSAGE` bytes. Must not know sockets, clocks or what the messages mean.

use std::fmt;

/// The longest message read, in bytes: the gRPC libraries' default receive limit.
pub const MAX_MESSAGE: u32 = 4 << 20;

/// The most of a `grpc-message` kept for the report, in bytes (after percent-decoding).
pub const MAX_STATUS_MESSAGE: usize = 1024;

/// The prefix of a message of `len` bytes, uncompressed: what a request body starts with.
pub fn prefix(len: u32) -> [u8; 5] {
    let l = len.to_be_bytes();
    [0, l[0], l[1], l[2], l[3]]
}

/// One message of a response body, as its prefix described it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Message {
    pub len: u32,
    pub compressed: bool,
}

/// Why a response body is not gRPC's framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// A flag byte other than 0 and 1.
    Flag(u8),
    /// A message longer than `MAX_MESSAGE`.
    TooLong(u32),
    /// The body ended inside a message or its prefix.
    Truncated,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Flag(b) => write!(f, "a gRPC message with flag byte {b} (0 or 1 expected)"),
            FrameError::TooLong(n) => write!(
                f,
                "a gRPC message of {n} bytes, more than the {MAX_MESSAGE} spate reads"
            ),
            FrameError::Truncated => write!(f, "the response ended inside a gRPC message"),
        }
    }
}

/// The framing of one response body, between reads.
#[derive(Debug, Default, Clone)]
pub struct Frames {
    /// The prefix read so far of the next message.
    prefix: [u8; 5],
    have: u8,
    /// The current message, and its bytes still to come.
    current: Message,
    left: u32,
    /// A message or prefix was refused: nothing more is read.
    failed: Option<FrameError>,
}

impl Frames {
    pub fn new() -> Frames {
        Frames::default()
    }

    /// Reads the next `bytes` of the body, calling `on` with each message whose last byte is
    /// in them: a message has arrived when all of it has.
    pub fn feed(
        &mut self,
        mut bytes: &[u8],
        mut on: impl FnMut(Message),
    ) -> Result<(), FrameError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        while !bytes.is_empty() {
            if self.left > 0 {
                let n = bytes.len().min(self.left as usize);
                self.left -= n as u32;
                bytes = &bytes[n..];
                if self.left == 0 {
                    on(self.current);
                }
                continue;
            }
            let n = bytes.len().min(5 - usize::from(self.have));
            let at = usize::from(self.have);
            self.prefix[at..at + n].copy_from_slice(&bytes[..n]);
            self.have += n as u8;
            bytes = &bytes[n..];
            if self.have < 5 {
                break;
            }
            self.have = 0;
            let p = self.prefix;
            let len = u32::from_be_bytes([p[1], p[2], p[3], p[4]]);
            let refused = match p[0] {
                0 | 1 if len > MAX_MESSAGE => Some(FrameError::TooLong(len)),
                0 | 1 => None,
                flag => Some(FrameError::Flag(flag)),
            };
            if let Some(e) = refused {
                self.failed = Some(e);
                return Err(e);
            }
            self.current = Message {
                len,
                compressed: p[0] == 1,
            };
            self.left = len;
            if len == 0 {
                on(self.current);
            }
        }
        Ok(())
    }

    /// The body ended: an error if it ended inside a message or a prefix.
    pub fn finish(&self) -> Result<(), FrameError> {
        match self.failed {
            Some(e) => Err(e),
            None if self.have > 0 || self.left > 0 => Err(FrameError::Truncated),
            None => Ok(()),
        }
    }
}

/// The status codes gRPC defines, by number.
pub const CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// A status code's name (`NOT_FOUND`); a code gRPC does not define is named by its number.
pub fn code_name(code: u32) -> String {
    match CODES.get(code as usize) {
        Some(name) => (*name).to_owned(),
        None => format!("code {code}"),
    }
}

/// The call's status, as its fields said it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// `grpc-status`; `None` while none was read, or when its value was not a number.
    pub code: Option<u32>,
    /// `grpc-status` was there but not a number.
    pub malformed: bool,
    /// `grpc-message`, percent-decoded and cut to `MAX_STATUS_MESSAGE` bytes.
    pub message: Option<String>,
}

impl Status {
    /// Takes the header field `name: value` of a head or trailers, if it is the status's.
    pub fn field(&mut self, name: &[u8], value: &[u8]) {
        if name.eq_ignore_ascii_case(b"grpc-status") {
            self.code = code(value);
            self.malformed = self.code.is_none();
        } else if name.eq_ignore_ascii_case(b"grpc-message") {
            self.message = Some(percent_decoded(value));
        }
    }

    /// The call succeeded: `grpc-status: 0`.
    pub fn is_ok(&self) -> bool {
        self.code == Some(0)
    }
}

/// A `grpc-status` value: one to three ASCII digits (codes are small; a longer number is no
/// code).
fn code(value: &[u8]) -> Option<u32> {
    let v = value.trim_ascii();
    if v.is_empty() || v.len() > 3 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    v.iter()
        .try_fold(0u32, |n, d| Some(n * 10 + u32::from(d - b'0')))
}

/// A `grpc-message` value: percent-encoded UTF-8, decoded; an escape that is not two hex
/// digits is kept as it is, and bytes that are not UTF-8 become U+FFFD. At most
/// `MAX_STATUS_MESSAGE` bytes are kept.
pub fn percent_decoded(value: &[u8]) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(value.len().min(MAX_STATUS_MESSAGE));
    let mut i = 0;
    while i < value.len() && out.len() < MAX_STATUS_MESSAGE {
        let digit = |k: usize| value.get(i + k).and_then(|&b| hex(b));
        let escaped = match (value[i], digit(1), digit(2)) {
            (b'%', Some(h), Some(l)) => Some(h << 4 | l),
            _ => None,
        };
        match escaped {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(value[i]);
                i += 1;
            }
        }
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    // Cut on a character boundary within the bound (U+FFFD is three bytes).
    let mut end = text.len().min(MAX_STATUS_MESSAGE);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// The messages of a whole body (each at most `MAX_MESSAGE` bytes), for a caller that keeps
/// them: a reflection answer, read once before a run. The body's framing is checked as
/// `Frames` checks it.
pub fn messages(body: &[u8]) -> Result<Vec<&[u8]>, FrameError> {
    let mut out = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let Some((p, tail)) = rest.split_first_chunk::<5>() else {
            return Err(FrameError::Truncated);
        };
        let len = u32::from_be_bytes([p[1], p[2], p[3], p[4]]);
        match p[0] {
            0 if len > MAX_MESSAGE => return Err(FrameError::TooLong(len)),
            0 => {}
            // Compressed messages are not asked for, so none should come.
            flag => return Err(FrameError::Flag(flag)),
        }
        let Some(m) = tail.get(..len as usize) else {
            return Err(FrameError::Truncated);
        };
        out.push(m);
        rest = &tail[len as usize..];
    }
    Ok(out)
}

/// One call's response as HTTP/2 reads it (an `Events` receiver): its HTTP status, whether its
/// content type is gRPC's, its messages counted, and its status from the head (Trailers-Only)
/// or the trailers. Judged at the end by `verdict`; `reset` makes it ready for the next call.
#[derive(Debug, Default, Clone)]
pub struct Call {
    http: u16,
    grpc_type: bool,
    frames: Frames,
    messages: u64,
    framing: Option<FrameError>,
    status: Status,
}

/// How a call ended, as its response said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// `grpc-status: 0`, with this many messages.
    Ok { messages: u64 },
    /// Another status code, and its message.
    Status { code: u32, message: Option<String> },
    /// An HTTP status of 300 or more: left to be counted by that status.
    Http(u16),
    /// A 2xx that is not gRPC's: another status than 200, no gRPC content type, no
    /// `grpc-status` (or one that is no number), a body that is not gRPC's framing, or a unary
    /// call answered with other than one message.
    Protocol(String),
}

impl super::Events for Call {
    const FIELDS: bool = true;

    fn field(&mut self, name: &[u8], value: &[u8]) {
        if name.eq_ignore_ascii_case(b"content-type") {
            let v = value.trim_ascii();
            self.grpc_type = v.len() >= 16 && v[..16].eq_ignore_ascii_case(b"application/grpc");
        }
        self.status.field(name, value);
    }

    fn head(&mut self, status: u16, _media: super::Media) {
        self.http = status;
    }

    fn data(&mut self, bytes: &[u8]) {
        let messages = &mut self.messages;
        if let Err(e) = self.frames.feed(bytes, |_| *messages += 1) {
            self.framing.get_or_insert(e);
        }
    }
}

impl Call {
    /// The call ended with its response complete: what it said. `unary`: exactly one message
    /// is the answer to a unary call.
    pub fn verdict(&self, unary: bool) -> Verdict {
        let protocol = |why: String| Verdict::Protocol(why);
        match self.http {
            200 => {}
            // A success of HTTP's that is not gRPC's one answer.
            s @ 201..=299 => return protocol(format!("a {s} response, where gRPC answers 200")),
            s => return Verdict::Http(s),
        }
        if !self.grpc_type {
            return protocol("a 200 response without a gRPC content type".into());
        }
        match self.status.code {
            None if self.status.malformed => {
                return protocol("a grpc-status that is not a number".into());
            }
            None => return protocol("a response without grpc-status".into()),
            Some(0) => {}
            Some(code) => {
                return Verdict::Status {
                    code,
                    message: self.status.message.clone(),
                };
            }
        }
        if let Some(e) = self.framing.or(self.frames.finish().err()) {
            return protocol(e.to_string());
        }
        if unary && self.messages != 1 {
            return protocol(format!(
                "a unary call answered with {} messages, not one",
                self.messages
            ));
        }
        Verdict::Ok {
            messages: self.messages,
        }
    }

    /// The framing was refused (a bad flag, a message over the bound) in what came so far; a
    /// body cut short is not among these (a cap that ends a stream cuts it).
    pub fn framing(&self) -> Option<FrameError> {
        self.framing
    }

    /// Ready for the next call.
    pub fn reset(&mut self) {
        *self = Call::default();
    }
}

/// The messages and the outcome of reading `body` at the cuts `cuts` (ascending offsets).
fn parse_at(body: &[u8], cuts: &[usize]) -> (Vec<Message>, Result<(), FrameError>) {
    let mut f = Frames::new();
    let mut got = Vec::new();
    let mut from = 0;
    for &at in cuts.iter().chain(std::iter::once(&body.len())) {
        if let Err(e) = f.feed(&body[from..at], |m| got.push(m)) {
            return (got, Err(e));
        }
        from = at;
    }
    (got, f.finish())
}

/// The property the fuzz target checks: `body` read whole and read in the pieces `seed` cuts
/// it into gives the same messages and the same end, and no message is longer than the bound.
pub fn check_split(body: &[u8], seed: u64) {
    let whole = parse_at(body, &[]);
    let cuts = super::h1::props::splits(body.len(), seed, 16);
    assert_eq!(parse_at(body, &cuts), whole, "cuts {cuts:?}");
    assert!(whole.0.iter().all(|m| m.len <= MAX_MESSAGE));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(messages: &[(u8, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (flag, m) in messages {
            let mut p = prefix(m.len() as u32);
            p[0] = *flag;
            out.extend_from_slice(&p);
            out.extend_from_slice(m);
        }
        out
    }

    /// Every cut in two, and byte by byte, reads as the whole does.
    fn at_every_split(body: &[u8]) -> (Vec<Message>, Result<(), FrameError>) {
        let whole = parse_at(body, &[]);
        for at in 0..=body.len() {
            assert_eq!(parse_at(body, &[at]), whole, "cut at {at}");
        }
        let bytes: Vec<usize> = (1..body.len()).collect();
        assert_eq!(parse_at(body, &bytes), whole, "byte by byte");
        whole
    }

    #[test]
    fn messages_are_read_at_every_split() {
        let body = framed(&[
            (0, b"\x08\x96\x01"),
            (0, b""),
            (1, b"zipped"),
            (0, &[7; 300]),
        ]);
        let (got, end) = at_every_split(&body);
        assert_eq!(end, Ok(()));
        let lens: Vec<(u32, bool)> = got.iter().map(|m| (m.len, m.compressed)).collect();
        assert_eq!(lens, [(3, false), (0, false), (6, true), (300, false)]);
        assert_eq!(
            at_every_split(b""),
            (vec![], Ok(())),
            "an empty body has no message"
        );
    }

    #[test]
    fn a_bad_flag_a_long_message_or_a_cut_body_is_refused_at_every_split() {
        let mut bad = framed(&[(0, b"ok")]);
        bad.extend_from_slice(&[2, 0, 0, 0, 1, 9]);
        let (got, end) = at_every_split(&bad);
        assert_eq!((got.len(), end), (1, Err(FrameError::Flag(2))));
        let long = [0, 0x00, 0x40, 0x00, 0x01];
        assert_eq!(
            at_every_split(&long),
            (vec![], Err(FrameError::TooLong(MAX_MESSAGE + 1)))
        );
        let mut limit = prefix(MAX_MESSAGE).to_vec();
        limit.resize(5 + MAX_MESSAGE as usize, 0);
        assert_eq!(
            parse_at(&limit, &[7, 1 << 20]).1,
            Ok(()),
            "the limit itself is read"
        );
        let cut = framed(&[(0, b"abcdef")]);
        assert_eq!(at_every_split(&cut[..8]).1, Err(FrameError::Truncated));
        assert_eq!(at_every_split(&cut[..3]).1, Err(FrameError::Truncated));
        // Nothing is read after a refusal.
        let mut f = Frames::new();
        assert!(f.feed(&[9, 0, 0, 0, 0], |_| {}).is_err());
        assert_eq!(
            f.feed(&prefix(0), |_| panic!("read after a refusal")),
            Err(FrameError::Flag(9))
        );
    }

    #[test]
    fn only_a_200_is_judged_as_grpc_and_3xx_and_over_keep_their_status() {
        use crate::proto::{Events as _, Media};
        let told = |status: u16| {
            let mut c = Call::default();
            c.field(b"content-type", b"application/grpc+proto");
            c.field(b"grpc-status", b"0");
            c.head(status, Media::Other);
            c.data(&[0, 0, 0, 0, 0]);
            c.verdict(true)
        };
        assert_eq!(told(200), Verdict::Ok { messages: 1 });
        assert_eq!(told(503), Verdict::Http(503));
        assert_eq!(told(302), Verdict::Http(302));
        assert!(matches!(told(204), Verdict::Protocol(w) if w.contains("204")));
        let mut plain = Call::default();
        plain.head(200, Media::Other);
        assert!(matches!(plain.verdict(true), Verdict::Protocol(w) if w.contains("content type")));
    }

    #[test]
    fn a_whole_body_gives_its_messages_or_why_not() {
        let body = framed(&[(0, b"one"), (0, b""), (0, b"three")]);
        let got = messages(&body).unwrap();
        assert_eq!(got, [&b"one"[..], b"", b"three"]);
        assert_eq!(
            messages(&body[..body.len() - 1]),
            Err(FrameError::Truncated)
        );
        assert_eq!(messages(&body[..2]), Err(FrameError::Truncated));
        assert_eq!(messages(&framed(&[(1, b"z")])), Err(FrameError::Flag(1)));
        assert_eq!(
            messages(&[0, 0xff, 0xff, 0xff, 0xff]),
            Err(FrameError::TooLong(u32::MAX))
        );
        assert_eq!(messages(b""), Ok(vec![]));
    }

    #[test]
    fn the_status_comes_from_its_fields() {
        let mut s = Status::default();
        assert!(!s.is_ok());
        s.field(b"content-type", b"application/grpc");
        s.field(b"grpc-status", b"5");
        s.field(b"grpc-message", b"no%20such%20key%3A%20%E2%82%AC");
        assert_eq!(s.code, Some(5));
        assert_eq!(s.message.as_deref(), Some("no such key: \u{20ac}"));
        assert_eq!(code_name(5), "NOT_FOUND");
        assert_eq!(code_name(16), "UNAUTHENTICATED");
        assert_eq!(code_name(99), "code 99");
        s.field(b"Grpc-Status", b"0");
        assert!(s.is_ok());
        for bad in [&b""[..], b"x", b"-1", b"1234", b"0x1", b"9999999999999"] {
            let mut s = Status::default();
            s.field(b"grpc-status", bad);
            assert_eq!((s.code, s.malformed), (None, true), "{bad:?}");
            assert!(!s.is_ok());
        }
    }

    #[test]
    fn a_status_message_is_decoded_within_its_bound() {
        assert_eq!(percent_decoded(b"100%"), "100%", "a lone percent is kept");
        assert_eq!(percent_decoded(b"%zz%4"), "%zz%4");
        assert_eq!(percent_decoded(b"%FF"), "\u{fffd}", "not UTF-8");
        assert_eq!(
            percent_decoded(b"a%0Ab"),
            "a\nb",
            "decoded, not escaped: the report escapes"
        );
        let long = percent_decoded(&[b'x'; 10_000]);
        assert_eq!(long.len(), MAX_STATUS_MESSAGE);
        let euros = percent_decoded(&b"%E2%82%AC".repeat(1000));
        assert!(euros.len() <= MAX_STATUS_MESSAGE && euros.chars().all(|c| c == '\u{20ac}'));
    }
}
