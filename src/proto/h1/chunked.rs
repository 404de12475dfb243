//! Sans-IO decoder of `Transfer-Encoding: chunked` bodies (RFC 9112 section 7.1) that counts and
//! skips payload without copying it. Extensions and trailers are accepted and ignored, within
//! bounded lengths, so that a hostile server cannot make a line grow without end.

use super::ParseError;
use crate::proto::Events;

/// Longest chunk-size line extension or trailer section accepted, in bytes.
const MAX_LINE: u32 = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Hex digits of the chunk size.
    Size,
    /// Whitespace after the size, before an extension or the CRLF.
    SizeSpace,
    /// A chunk extension (`;name=value`), skipped.
    Extension,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    /// Start of a trailer line, or of the final CRLF.
    TrailerStart,
    Trailer,
    TrailerLf,
    EndLf,
    Done,
}

/// State of one chunked body. Starts before the first chunk-size line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunked {
    state: State,
    /// Chunk size being parsed, then payload bytes left in the current chunk.
    size: u64,
    digits: u8,
    /// Bytes of extension or trailer text seen on the current line or section.
    line: u32,
}

impl Default for Chunked {
    fn default() -> Self {
        Self::new()
    }
}

impl Chunked {
    pub const fn new() -> Self {
        Chunked {
            state: State::Size,
            size: 0,
            digits: 0,
            line: 0,
        }
    }

    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Consumes bytes from `buf` up to the end of the body at most.
    /// Returns `(consumed, payload)`: bytes of `buf` used and how many of them were payload.
    pub fn decode(&mut self, buf: &[u8]) -> Result<(usize, u64), ParseError> {
        self.decode_to(buf, &mut ())
    }

    /// As [`Chunked::decode`], handing each run of payload to `events`.
    #[inline]
    pub fn decode_to(
        &mut self,
        buf: &[u8],
        events: &mut impl Events,
    ) -> Result<(usize, u64), ParseError> {
        let mut i = 0;
        let mut payload = 0u64;
        while i < buf.len() && self.state != State::Done {
            if self.state == State::Data {
                let take = (buf.len() - i).min(usize::try_from(self.size).unwrap_or(usize::MAX));
                events.data(&buf[i..i + take]);
                i += take;
                payload += take as u64;
                self.size -= take as u64;
                if self.size == 0 {
                    self.state = State::DataCr;
                }
                continue;
            }
            self.step(buf[i])?;
            i += 1;
        }
        Ok((i, payload))
    }

    fn step(&mut self, b: u8) -> Result<(), ParseError> {
        self.state = match self.state {
            State::Size => match b {
                b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                    if self.digits == 16 {
                        return Err(ParseError::ChunkSizeOverflow);
                    }
                    let d = (b as char).to_digit(16).unwrap_or(0);
                    self.size = (self.size << 4) | u64::from(d);
                    self.digits += 1;
                    // Sixteen hex digits always fit in 64 bits; more are refused even when
                    // they are leading zeros, which no real server pads that far.
                    State::Size
                }
                _ if self.digits == 0 => return Err(ParseError::ChunkSize),
                b';' => State::Extension,
                b' ' | b'\t' => State::SizeSpace,
                b'\r' => State::SizeLf,
                _ => return Err(ParseError::ChunkSize),
            },
            State::SizeSpace => match b {
                b' ' | b'\t' => State::SizeSpace,
                b';' => State::Extension,
                b'\r' => State::SizeLf,
                _ => return Err(ParseError::ChunkSize),
            },
            State::Extension => match b {
                b'\r' => State::SizeLf,
                b'\n' => return Err(ParseError::ChunkFraming),
                _ => {
                    self.line += 1;
                    if self.line > MAX_LINE {
                        return Err(ParseError::ChunkLineTooLong);
                    }
                    State::Extension
                }
            },
            State::SizeLf => match b {
                b'\n' => {
                    self.line = 0;
                    self.digits = 0;
                    if self.size == 0 {
                        State::TrailerStart
                    } else {
                        State::Data
                    }
                }
                _ => return Err(ParseError::ChunkFraming),
            },
            State::DataCr => match b {
                b'\r' => State::DataLf,
                _ => return Err(ParseError::ChunkFraming),
            },
            State::DataLf => match b {
                b'\n' => State::Size,
                _ => return Err(ParseError::ChunkFraming),
            },
            State::TrailerStart => match b {
                b'\r' => State::EndLf,
                b'\n' => return Err(ParseError::ChunkFraming),
                _ => self.trailer_byte()?,
            },
            State::Trailer => match b {
                b'\r' => State::TrailerLf,
                b'\n' => return Err(ParseError::ChunkFraming),
                _ => self.trailer_byte()?,
            },
            State::TrailerLf => match b {
                b'\n' => State::TrailerStart,
                _ => return Err(ParseError::ChunkFraming),
            },
            State::EndLf => match b {
                b'\n' => State::Done,
                _ => return Err(ParseError::ChunkFraming),
            },
            State::Data | State::Done => unreachable!("handled by decode"),
        };
        Ok(())
    }

    fn trailer_byte(&mut self) -> Result<State, ParseError> {
        self.line += 1;
        if self.line > MAX_LINE {
            return Err(ParseError::ChunkLineTooLong);
        }
        Ok(State::Trailer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `raw` split at `cut`, returning (consumed, payload, done).
    fn decode_split(raw: &[u8], cut: usize) -> Result<(usize, u64, bool), ParseError> {
        let mut c = Chunked::new();
        let (a, pa) = c.decode(&raw[..cut])?;
        assert!(
            a == cut || c.is_done(),
            "a prefix is consumed whole unless the body ended"
        );
        let (b, pb) = if c.is_done() {
            (0, 0)
        } else {
            c.decode(&raw[cut..])?
        };
        Ok((a + b, pa + pb, c.is_done()))
    }

    fn every_split(raw: &[u8], consumed: usize, payload: u64) {
        for cut in 0..=raw.len() {
            assert_eq!(
                decode_split(raw, cut),
                Ok((consumed, payload, true)),
                "cut at {cut}"
            );
        }
        // And one byte at a time.
        let mut c = Chunked::new();
        let (mut n, mut p) = (0, 0);
        for b in raw.chunks(1) {
            if c.is_done() {
                break;
            }
            let (bn, bp) = c.decode(b).unwrap();
            n += bn;
            p += bp;
        }
        assert_eq!((n, p, c.is_done()), (consumed, payload, true));
    }

    #[test]
    fn simple_body_at_every_split() {
        let raw = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
        every_split(raw, raw.len(), 11);
    }

    #[test]
    fn extensions_trailers_and_whitespace_at_every_split() {
        let raw = b"5;name=value;x\r\nhello\r\nA \t;ext\r\n0123456789\r\n0\r\nExpires: never\r\nX: y\r\n\r\n";
        every_split(raw, raw.len(), 15);
    }

    #[test]
    fn stops_at_the_end_of_the_body() {
        let raw = b"3\r\nabc\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n";
        let mut c = Chunked::new();
        assert_eq!(c.decode(raw), Ok((13, 3)));
        assert!(c.is_done());
    }

    #[test]
    fn uppercase_and_leading_zero_sizes() {
        let raw = b"000F\r\n0123456789abcde\r\n0\r\n\r\n";
        every_split(raw, raw.len(), 15);
    }

    #[test]
    fn framing_errors() {
        let cases: &[(&[u8], ParseError)] = &[
            (b"\r\n", ParseError::ChunkSize),
            (b"g\r\n", ParseError::ChunkSize),
            (b";ext\r\n", ParseError::ChunkSize),
            (b"5\nhello", ParseError::ChunkSize),
            (b"5\r\nhelloX\r\n", ParseError::ChunkFraming),
            (b"5\r\nhello\rX", ParseError::ChunkFraming),
            (b"5\rX", ParseError::ChunkFraming),
            (b"5;a\nb", ParseError::ChunkFraming),
            (b"0\r\n\n", ParseError::ChunkFraming),
            (b"0\r\nX: y\n", ParseError::ChunkFraming),
            (b"0\r\n\rX", ParseError::ChunkFraming),
            (b"5 x\r\n", ParseError::ChunkSize),
            (b"1ffffffffffffffff\r\n", ParseError::ChunkSizeOverflow),
        ];
        for (raw, want) in cases {
            for cut in 0..=raw.len() {
                assert_eq!(
                    decode_split(raw, cut).err(),
                    Some(*want),
                    "{:?} cut {cut}",
                    String::from_utf8_lossy(raw)
                );
            }
        }
    }

    #[test]
    fn largest_size_is_accepted() {
        let mut c = Chunked::new();
        assert_eq!(c.decode(b"ffffffffffffffff\r\nab"), Ok((20, 2)));
        assert!(!c.is_done());
    }

    #[test]
    fn endless_extension_or_trailer_is_bounded() {
        let mut long = b"1;".to_vec();
        long.extend(std::iter::repeat_n(b'x', MAX_LINE as usize + 1));
        assert_eq!(
            Chunked::new().decode(&long),
            Err(ParseError::ChunkLineTooLong)
        );
        let mut trailers = b"0\r\n".to_vec();
        for _ in 0..2000 {
            trailers.extend_from_slice(b"X-Trailer: yyyyyy\r\n");
        }
        assert_eq!(
            Chunked::new().decode(&trailers),
            Err(ParseError::ChunkLineTooLong)
        );
    }
}
