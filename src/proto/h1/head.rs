//! Sans-IO parse of an HTTP/1.x response head into what the client needs: status, body framing
//! and whether the connection stays open. Reads only the headers that decide framing; allocates
//! nothing and keeps no state between calls.

use std::mem::MaybeUninit;

use super::ParseError;
use crate::proto::Media;

/// Headers beyond this count make the response a parse error (httparse `TooManyHeaders`).
pub const MAX_HEADERS: usize = 100;

/// How the body of a response ends (RFC 9112 section 6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body: HEAD, 1xx, 204, 304.
    Empty,
    /// Exactly this many bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked` as the final coding.
    Chunked,
    /// Read until the server closes the connection.
    Close,
}

/// A parsed response head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Bytes of the buffer taken by the status line and headers, including the blank line.
    pub len: usize,
    pub status: u16,
    pub framing: Framing,
    /// Whether the connection may carry another request after this response.
    pub keep_alive: bool,
    /// What its Content-Type says the body is.
    pub media: Media,
}

impl Head {
    /// An interim response (100 Continue, 103 Early Hints): a final response follows on the same
    /// connection. (101 never gets here: it is an error.)
    pub fn is_interim(&self) -> bool {
        (100..200).contains(&self.status)
    }
}

/// A reply in another protocol, told by its first byte alone (so that the verdict is the same
/// however the bytes were split): a TLS record starts with its type, an alert (0x15) or a
/// handshake (0x16); an HTTP/2 frame with the high byte of its length, 0 for any frame spate could
/// provoke. No HTTP/1.x response starts with any of them.
fn other_protocol(buf: &[u8]) -> Option<ParseError> {
    match buf.first()? {
        0x15 | 0x16 => Some(ParseError::TlsReply),
        0x00 => Some(ParseError::H2Reply),
        _ => None,
    }
}

/// Parses a response head from the start of `buf`. `Ok(None)` means the head is not complete yet.
/// `head_request` says the request was HEAD, whose response never has a body.
pub fn parse_head(buf: &[u8], head_request: bool) -> Result<Option<Head>, ParseError> {
    let mut headers = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut res = httparse::Response::new(&mut []);
    // RFC 9112 5.2: a client replaces an obsolete line folding with spaces instead of refusing
    // the response; the values spate reads are trimmed of it (ASCII whitespace).
    let mut config = httparse::ParserConfig::default();
    config.allow_obsolete_multiline_headers_in_responses(true);
    let len = match config.parse_response_with_uninit_headers(&mut res, buf, &mut headers) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(other_protocol(buf).unwrap_or(ParseError::Head(e))),
    };
    // A complete parse always sets both.
    let status = res.code.unwrap_or(0);
    // httparse takes any three digits; below 100 there is no status class to count it in.
    if status < 100 {
        return Err(ParseError::Status);
    }
    // spate never asks to upgrade: a server that switches protocols has left HTTP/1.1.
    if status == 101 {
        return Err(ParseError::Switched);
    }
    let http10 = res.version == Some(0);

    let mut keep_alive = !http10;
    let mut length: Option<u64> = None;
    let mut transfer_encoding = false;
    let mut chunked = false;
    let mut media = Media::Other;
    for h in res.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = parse_content_length(h.value)?;
            if length.is_some_and(|prev| prev != n) {
                return Err(ParseError::ContentLength);
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            transfer_encoding = true;
            // Only the final coding decides framing; a later header line overrides an earlier one.
            chunked = last_token(h.value).eq_ignore_ascii_case(b"chunked");
        } else if name.eq_ignore_ascii_case(b"content-type") {
            media = Media::of(h.value);
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in h.value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") && http10 {
                    keep_alive = true;
                }
            }
        }
    }

    let framing = if head_request || status < 200 || status == 204 || status == 304 {
        Framing::Empty
    } else if transfer_encoding {
        if chunked {
            Framing::Chunked
        } else {
            Framing::Close
        }
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        Framing::Close
    };
    if framing == Framing::Close {
        keep_alive = false;
    }
    Ok(Some(Head {
        len,
        status,
        framing,
        keep_alive,
        media,
    }))
}

/// The first Location value of `head`, trimmed; `None` without one. `head` is a status line and
/// fields as HTTP/1.1 writes them: a parsed HTTP/1.1 head, or the lines HTTP/2 and HTTP/3
/// receivers are given (`Events::HEADS`). Off the static path: only --redirect asks.
pub fn location(head: &[u8]) -> Option<&[u8]> {
    head.split(|&b| b == b'\n').skip(1).find_map(|line| {
        let colon = line.iter().position(|&b| b == b':')?;
        let (name, value) = line.split_at(colon);
        name.eq_ignore_ascii_case(b"location")
            .then(|| value[1..].trim_ascii())
    })
}

/// Content-Length is 1*DIGIT; a list of identical values ("5, 5") is accepted, as RFC 9110 allows.
fn parse_content_length(value: &[u8]) -> Result<u64, ParseError> {
    let mut result: Option<u64> = None;
    for part in value.split(|&b| b == b',') {
        let part = part.trim_ascii();
        if part.is_empty() || part.len() > 19 || !part.iter().all(u8::is_ascii_digit) {
            return Err(ParseError::ContentLength);
        }
        let n = part
            .iter()
            .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0'));
        if result.is_some_and(|prev| prev != n) {
            return Err(ParseError::ContentLength);
        }
        result = Some(n);
    }
    result.ok_or(ParseError::ContentLength)
}

fn last_token(value: &[u8]) -> &[u8] {
    value
        .rsplit(|&b| b == b',')
        .next()
        .unwrap_or(value)
        .trim_ascii()
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_content_type_names_a_stream_kind_in_any_case_and_with_parameters() {
        let media = |ct: &str| {
            let raw = format!("HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\n\r\n");
            parse_head(raw.as_bytes(), false).unwrap().unwrap().media
        };
        assert_eq!(media("text/event-stream"), Media::EventStream);
        assert_eq!(
            media("Text/Event-Stream ; charset=utf-8"),
            Media::EventStream
        );
        assert_eq!(media("application/x-ndjson"), Media::JsonLines);
        assert_eq!(media("application/jsonl"), Media::JsonLines);
        assert_eq!(media("application/json"), Media::Other);
        assert_eq!(media("text/event-streams"), Media::Other);
        let none = parse_head(b"HTTP/1.1 204 No Content\r\n\r\n", false);
        assert_eq!(none.unwrap().unwrap().media, Media::Other);
    }

    use super::*;

    fn head(raw: &str) -> Head {
        parse_head(raw.as_bytes(), false).unwrap().unwrap()
    }

    #[test]
    fn content_length_framing_and_keep_alive() {
        let h = head("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        assert_eq!(h.status, 200);
        assert_eq!(h.framing, Framing::Length(5));
        assert!(h.keep_alive);
        assert_eq!(h.len, 38);
    }

    #[test]
    fn partial_head_needs_more() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
        for cut in 0..raw.len() {
            assert_eq!(
                parse_head(&raw[..cut], false).unwrap(),
                None,
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn chunked_wins_over_length_and_is_case_insensitive() {
        let h = head(
            "HTTP/1.1 200 OK\r\ncontent-length: 5\r\nTransfer-Encoding: gzip, CHUNKED\r\n\r\n",
        );
        assert_eq!(h.framing, Framing::Chunked);
    }

    #[test]
    fn unknown_transfer_coding_is_close_delimited() {
        let h = head("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n");
        assert_eq!(h.framing, Framing::Close);
        assert!(!h.keep_alive);
    }

    #[test]
    fn no_length_means_close_delimited() {
        let h = head("HTTP/1.1 200 OK\r\nServer: x\r\n\r\n");
        assert_eq!(h.framing, Framing::Close);
        assert!(!h.keep_alive);
    }

    #[test]
    fn bodiless_statuses_and_head_requests() {
        for status in [
            "204 No Content",
            "304 Not Modified",
            "100 Continue",
            "103 Early Hints",
        ] {
            let h = head(&format!("HTTP/1.1 {status}\r\nContent-Length: 10\r\n\r\n"));
            assert_eq!(h.framing, Framing::Empty, "{status}");
        }
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
        assert_eq!(
            parse_head(raw, true).unwrap().unwrap().framing,
            Framing::Empty
        );
    }

    #[test]
    fn interim_responses() {
        assert!(head("HTTP/1.1 100 Continue\r\n\r\n").is_interim());
        assert!(head("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n").is_interim());
        assert_eq!(
            parse_head(b"HTTP/1.1 101 Switching Protocols\r\n\r\n", false),
            Err(ParseError::Switched)
        );
        assert!(!head("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").is_interim());
    }

    #[test]
    fn obsolete_line_folding_is_read_as_spaces() {
        let h = head(
            "HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 2\r\nConnection:\r\n close\r\n\r\nok",
        );
        assert_eq!(h.framing, Framing::Length(2));
        assert!(!h.keep_alive, "a folded Connection: close still closes");
    }

    #[test]
    fn connection_header_tokens() {
        assert!(
            !head("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: Close\r\n\r\n").keep_alive
        );
        assert!(
            !head("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: te, close\r\n\r\n")
                .keep_alive
        );
        assert!(!head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").keep_alive);
        assert!(
            head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n")
                .keep_alive
        );
        // keep-alive does not revive an HTTP/1.1 connection the server also asked to close.
        assert!(
            !head("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close, keep-alive\r\n\r\n")
                .keep_alive
        );
    }

    #[test]
    fn content_length_values() {
        assert_eq!(
            head("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n").framing,
            Framing::Length(5)
        );
        assert_eq!(
            head("HTTP/1.1 200 OK\r\nContent-Length: 7\r\nContent-Length: 7\r\n\r\n").framing,
            Framing::Length(7)
        );
        for bad in ["-1", "+5", "5, 6", "", "abc", "99999999999999999999", "1 2"] {
            let raw = format!("HTTP/1.1 200 OK\r\nContent-Length: {bad}\r\n\r\n");
            assert_eq!(
                parse_head(raw.as_bytes(), false),
                Err(ParseError::ContentLength),
                "{bad:?}"
            );
        }
        let conflicting = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n";
        assert_eq!(
            parse_head(conflicting, false),
            Err(ParseError::ContentLength)
        );
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(matches!(
            parse_head(b"hello world\r\n\r\n", false),
            Err(ParseError::Head(_))
        ));
        assert!(matches!(
            parse_head(b"HTTP/1.1 2000 OK\r\n\r\n", false),
            Err(ParseError::Head(_))
        ));
        for low in ["000", "039", "099"] {
            assert_eq!(
                parse_head(format!("HTTP/1.1 {low} X\r\n\r\n").as_bytes(), false),
                Err(ParseError::Status),
                "{low}"
            );
        }
        assert_eq!(
            parse_head(b"HTTP/1.1 999 X\r\n\r\n", false)
                .unwrap()
                .unwrap()
                .status,
            999
        );
    }

    #[test]
    fn a_reply_in_tls_or_http2_is_named_at_any_split() {
        // A TLS alert (what a TLS server sends plain HTTP), and HTTP/2's SETTINGS and GOAWAY.
        let alert: &[u8] = &[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32];
        let settings: &[u8] = &[0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100];
        let goaway: &[u8] = &[0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        for (bytes, want) in [
            (alert, ParseError::TlsReply),
            (settings, ParseError::H2Reply),
            (goaway, ParseError::H2Reply),
        ] {
            for cut in 1..=bytes.len() {
                assert_eq!(parse_head(&bytes[..cut], false), Err(want), "cut at {cut}");
            }
        }
        assert_eq!(parse_head(&[], false), Ok(None));
    }

    #[test]
    fn too_many_headers_is_an_error() {
        let mut raw = String::from("HTTP/1.1 200 OK\r\n");
        for i in 0..=MAX_HEADERS {
            raw.push_str(&format!("X-{i}: y\r\n"));
        }
        raw.push_str("\r\n");
        assert_eq!(
            parse_head(raw.as_bytes(), false),
            Err(ParseError::Head(httparse::Error::TooManyHeaders))
        );
    }

    #[test]
    fn the_first_location_is_found_trimmed_in_any_case_after_any_status_line() {
        for head in [
            &b"HTTP/1.1 308 Permanent\r\nServer: x\r\nLOCATION: \t/a b \r\nLocation: /2\r\n\r\n"[..],
            b"HTTP/2 302\r\ncontent-length: 0\r\nlocation: /a b\r\n\r\n",
            b"HTTP/3 302\r\nLocation:/a b\r\n\r\n",
        ] {
            assert_eq!(location(head), Some(&b"/a b"[..]), "{head:?}");
        }
        for head in [
            &b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n"[..],
            b"HTTP/2 302\r\nx-location: /a\r\n\r\n",
            // A status line is never a field.
            b"location: /a\r\n\r\n",
            b"",
        ] {
            assert_eq!(location(head), None, "{head:?}");
        }
    }
}
