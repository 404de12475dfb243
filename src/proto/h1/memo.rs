//! HOT: the last response head a thread parsed, so that a byte-identical head (the same server
//! answering the same request, as it does for every response within a second of its `Date`) is
//! recognised by one comparison instead of parsed again. Must not change any verdict: it keeps
//! only heads that parsed completely, and answers only for input that begins with one of them.
//! Must not allocate after it is made: its buffer holds the longest head it keeps.
//!
//! Sound because [`parse_head`] reads nothing past the end of a complete head: input that begins
//! with a complete head `h` parses to `h` whatever follows (the `check_head` property, fuzzed).

use super::{Head, ParseError, parse_head};

/// Heads longer than this are parsed every time: comparing and copying them would approach the
/// cost of parsing, and a head that long usually carries per-response values (cookies, ids).
pub const MEMO_MAX_BYTES: usize = 1024;

/// One remembered head: its bytes and what they parsed to.
#[derive(Debug)]
pub struct HeadMemo {
    /// Capacity `MEMO_MAX_BYTES`, so that remembering a head never allocates.
    bytes: Vec<u8>,
    /// The parse of `bytes` and the `head_request` it was parsed with; `None` before the first.
    head: Option<(Head, bool)>,
}

impl Default for HeadMemo {
    fn default() -> Self {
        HeadMemo {
            bytes: Vec::with_capacity(MEMO_MAX_BYTES),
            head: None,
        }
    }
}

impl HeadMemo {
    /// [`parse_head`], answered from memory when `buf` begins with the remembered head. Always
    /// inlined: the response parser has a copy per response receiver, and with two callers the
    /// compiler would call it out of line on the static path too.
    #[inline(always)]
    pub fn parse(&mut self, buf: &[u8], head_request: bool) -> Result<Option<Head>, ParseError> {
        if let Some(head) = self.recall(buf, head_request) {
            return Ok(Some(head));
        }
        let parsed = parse_head(buf, head_request)?;
        if let Some(head) = parsed
            && head.len <= MEMO_MAX_BYTES
        {
            self.bytes.clear();
            self.bytes.extend_from_slice(&buf[..head.len]);
            self.head = Some((head, head_request));
        }
        Ok(parsed)
    }

    /// The remembered head, when `buf` begins with its bytes.
    #[inline]
    fn recall(&self, buf: &[u8], head_request: bool) -> Option<Head> {
        match self.head {
            Some((head, hr)) if hr == head_request && buf.starts_with(&self.bytes) => Some(head),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::h1::Framing;

    const OK5: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";

    #[test]
    fn a_repeated_head_is_recalled_with_what_follows_it() {
        let mut m = HeadMemo::default();
        assert_eq!(m.recall(OK5, false), None, "nothing remembered yet");
        let first = m.parse(OK5, false).unwrap().unwrap();
        assert_eq!(first.framing, Framing::Length(5));
        let next = [OK5, b"helloHTTP/1.1 404 Not Found\r\n"].concat();
        assert_eq!(m.recall(&next, false), Some(first));
        assert_eq!(m.parse(&next, false), parse_head(&next, false));
    }

    #[test]
    fn a_head_that_differs_anywhere_is_parsed_and_then_remembered() {
        let mut m = HeadMemo::default();
        m.parse(OK5, false).unwrap();
        let heads: [&[u8]; 5] = [
            b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n",
            b"HTTP/1.1 500 OK\r\nContent-Length: 5\r\n\r\n",
            b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        ];
        for h in heads {
            m.parse(OK5, false).unwrap();
            assert_eq!(m.recall(h, false), None, "{}", h.escape_ascii());
            assert_eq!(m.parse(h, false), parse_head(h, false));
            assert_eq!(m.recall(h, false), parse_head(h, false).unwrap());
        }
    }

    #[test]
    fn the_request_method_is_part_of_what_is_remembered() {
        let mut m = HeadMemo::default();
        m.parse(OK5, false).unwrap();
        assert_eq!(m.recall(OK5, true), None);
        assert_eq!(m.parse(OK5, true).unwrap().unwrap().framing, Framing::Empty);
    }

    #[test]
    fn incomplete_failed_and_long_heads_are_not_remembered() {
        let mut m = HeadMemo::default();
        m.parse(OK5, false).unwrap();
        // A prefix of the remembered head is incomplete, not a match.
        assert_eq!(m.parse(&OK5[..OK5.len() - 1], false), Ok(None));
        assert!(m.parse(b"HTTP/1.1 099 X\r\n\r\n", false).is_err());
        assert!(
            m.recall(OK5, false).is_some(),
            "the failures left the memo as it was"
        );
        let filler = "x".repeat(MEMO_MAX_BYTES);
        let long = format!("HTTP/1.1 200 OK\r\nX-Filler: {filler}\r\nContent-Length: 0\r\n\r\n");
        assert!(m.parse(long.as_bytes(), false).unwrap().is_some());
        assert_eq!(m.recall(long.as_bytes(), false), None);
        assert!(m.recall(OK5, false).is_some(), "a long head does not evict");
    }

    #[test]
    fn remembering_the_longest_head_kept_does_not_grow_the_buffer() {
        let mut m = HeadMemo::default();
        let cap = m.bytes.capacity();
        let fill = MEMO_MAX_BYTES - b"HTTP/1.1 200 OK\r\nX: \r\n\r\n".len();
        let longest = format!("HTTP/1.1 200 OK\r\nX: {}\r\n\r\n", "x".repeat(fill));
        assert_eq!(longest.len(), MEMO_MAX_BYTES);
        m.parse(longest.as_bytes(), false).unwrap().unwrap();
        assert!(m.recall(longest.as_bytes(), false).is_some());
        assert_eq!(m.bytes.capacity(), cap);
    }
}
