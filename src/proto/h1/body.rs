//! Sans-IO body framing of one response: counts payload bytes and finds where the body ends,
//! without copying or keeping any of it.

use super::{Chunked, Framing, ParseError};
use crate::proto::Events;

/// Where the body of the current response stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// Fixed length; bytes still expected.
    Length(u64),
    Chunked(Chunked),
    /// Ends when the server closes the connection.
    Close,
    Done,
}

/// What one call to [`Body::decode`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    /// Bytes of the input that belong to this body (the rest belongs to what follows).
    pub consumed: usize,
    /// Of those, payload bytes (chunk framing excluded).
    pub payload: u64,
    pub done: bool,
}

impl Body {
    pub fn new(framing: Framing) -> Body {
        match framing {
            Framing::Empty | Framing::Length(0) => Body::Done,
            Framing::Length(n) => Body::Length(n),
            Framing::Chunked => Body::Chunked(Chunked::new()),
            Framing::Close => Body::Close,
        }
    }

    pub fn decode(&mut self, buf: &[u8]) -> Result<Decoded, ParseError> {
        self.decode_to(buf, &mut ())
    }

    /// As [`Body::decode`], handing the payload to `events`.
    #[inline]
    pub fn decode_to(
        &mut self,
        buf: &[u8],
        events: &mut impl Events,
    ) -> Result<Decoded, ParseError> {
        let (consumed, payload) = match self {
            Body::Done => (0, 0),
            Body::Length(remaining) => {
                let take = (buf.len() as u64).min(*remaining);
                events.data(&buf[..take as usize]);
                *remaining -= take;
                if *remaining == 0 {
                    *self = Body::Done;
                }
                (take as usize, take)
            }
            Body::Chunked(c) => {
                let (n, p) = c.decode_to(buf, events)?;
                if c.is_done() {
                    *self = Body::Done;
                }
                (n, p)
            }
            Body::Close => {
                events.data(buf);
                (buf.len(), buf.len() as u64)
            }
        };
        Ok(Decoded {
            consumed,
            payload,
            done: *self == Body::Done,
        })
    }

    /// The server closed the connection: this completes a close-delimited body and nothing else.
    pub fn finish_at_eof(&mut self) -> bool {
        match self {
            Body::Close | Body::Done => {
                *self = Body::Done;
                true
            }
            Body::Length(_) | Body::Chunked(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_length_stops_at_its_end() {
        let mut b = Body::new(Framing::Length(5));
        assert_eq!(
            b.decode(b"hel").unwrap(),
            Decoded {
                consumed: 3,
                payload: 3,
                done: false
            }
        );
        assert_eq!(
            b.decode(b"loHTTP").unwrap(),
            Decoded {
                consumed: 2,
                payload: 2,
                done: true
            }
        );
        assert_eq!(b, Body::Done);
    }

    #[test]
    fn empty_and_zero_length_are_done_at_once() {
        assert_eq!(Body::new(Framing::Empty), Body::Done);
        assert_eq!(Body::new(Framing::Length(0)), Body::Done);
        assert_eq!(
            Body::Done.decode(b"xyz").unwrap(),
            Decoded {
                consumed: 0,
                payload: 0,
                done: true
            }
        );
    }

    #[test]
    fn close_delimited_takes_everything_until_eof() {
        let mut b = Body::new(Framing::Close);
        assert_eq!(
            b.decode(b"abc").unwrap(),
            Decoded {
                consumed: 3,
                payload: 3,
                done: false
            }
        );
        assert!(b.finish_at_eof());
        assert_eq!(b, Body::Done);
    }

    #[test]
    fn eof_truncates_framed_bodies() {
        assert!(!Body::new(Framing::Length(3)).finish_at_eof());
        assert!(!Body::new(Framing::Chunked).finish_at_eof());
    }

    #[test]
    fn chunked_payload_excludes_framing() {
        let mut b = Body::new(Framing::Chunked);
        let raw = b"2\r\nab\r\n0\r\n\r\nNEXT";
        assert_eq!(
            b.decode(raw).unwrap(),
            Decoded {
                consumed: 12,
                payload: 2,
                done: true
            }
        );
    }
}
