//! The built-in server's responses, built once at start: each variant (keep-alive, close,
//! HTTP/1.0 keep-alive; with or without body for HEAD) is a ready byte string.

use std::sync::Arc;

use super::ServeConfig;

/// How the connection continues after a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persist {
    /// HTTP/1.1 default: no Connection header.
    KeepAlive,
    /// HTTP/1.0 client that asked for keep-alive.
    KeepAlive10,
    Close,
}

#[derive(Debug, Clone)]
pub struct Responses {
    /// Indexed by [`Responses::index`].
    variants: Arc<[Vec<u8>; 6]>,
}

const PATTERN: &[u8] = b"hello world\n";

impl Responses {
    pub fn new(cfg: &ServeConfig) -> Responses {
        let build = |persist, head_only| build(cfg, persist, head_only);
        let variants = [
            build(Persist::KeepAlive, false),
            build(Persist::KeepAlive10, false),
            build(Persist::Close, false),
            build(Persist::KeepAlive, true),
            build(Persist::KeepAlive10, true),
            build(Persist::Close, true),
        ];
        Responses {
            variants: Arc::new(variants),
        }
    }

    pub fn get(&self, persist: Persist, head_only: bool) -> &[u8] {
        let p = match persist {
            Persist::KeepAlive => 0,
            Persist::KeepAlive10 => 1,
            Persist::Close => 2,
        };
        &self.variants[p + if head_only { 3 } else { 0 }]
    }
}

/// With --http3: the Alt-Svc value that points to it (the same port, over UDP).
pub fn alt_svc(port: u16) -> String {
    format!("h3=\":{port}\"; ma=86400")
}

/// The response body: `size` bytes of a repeated greeting.
pub fn body(size: usize) -> bytes::Bytes {
    PATTERN
        .iter()
        .copied()
        .cycle()
        .take(size)
        .collect::<Vec<u8>>()
        .into()
}

fn build(cfg: &ServeConfig, persist: Persist, head_only: bool) -> Vec<u8> {
    let reason = http::StatusCode::from_u16(cfg.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Status");
    let mut out = format!("HTTP/1.1 {} {reason}\r\nServer: spate\r\n", cfg.status).into_bytes();
    if cfg.http3 {
        out.extend_from_slice(format!("Alt-Svc: {}\r\n", alt_svc(cfg.addr.port())).as_bytes());
    }
    match persist {
        Persist::KeepAlive => {}
        Persist::KeepAlive10 => out.extend_from_slice(b"Connection: keep-alive\r\n"),
        Persist::Close => out.extend_from_slice(b"Connection: close\r\n"),
    }
    let bodiless = cfg.status == 204 || cfg.status == 304;
    if bodiless {
        out.extend_from_slice(b"\r\n");
        return out;
    }
    let body: Vec<u8> = PATTERN
        .iter()
        .copied()
        .cycle()
        .take(cfg.body_size)
        .collect();
    out.extend_from_slice(b"Content-Type: text/plain\r\n");
    if cfg.chunked {
        out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
        if !head_only {
            for chunk in body.chunks(4096) {
                out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                out.extend_from_slice(chunk);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"0\r\n\r\n");
        }
    } else {
        out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        if !head_only {
            out.extend_from_slice(&body);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::h1::{HeadMemo, ResponseParser};

    fn parse(raw: &[u8], head: bool) -> (u16, u64, bool) {
        let mut p = ResponseParser::new(head);
        let progress = p.feed(raw, &mut HeadMemo::default()).unwrap();
        assert_eq!(progress.consumed(), raw.len(), "exactly one response");
        (p.status(), p.body_bytes(), p.keep_alive())
    }

    #[test]
    fn every_variant_is_a_valid_response() {
        for chunked in [false, true] {
            let cfg = ServeConfig {
                body_size: 10_000,
                chunked,
                ..ServeConfig::default()
            };
            let r = Responses::new(&cfg);
            assert_eq!(
                parse(r.get(Persist::KeepAlive, false), false),
                (200, 10_000, true)
            );
            assert_eq!(
                parse(r.get(Persist::KeepAlive10, false), false),
                (200, 10_000, true)
            );
            assert_eq!(
                parse(r.get(Persist::Close, false), false),
                (200, 10_000, false)
            );
            assert_eq!(parse(r.get(Persist::KeepAlive, true), true), (200, 0, true));
            assert_eq!(parse(r.get(Persist::Close, true), true), (200, 0, false));
        }
    }

    #[test]
    fn bodiless_status_and_reason() {
        let cfg = ServeConfig {
            status: 204,
            ..ServeConfig::default()
        };
        let r = Responses::new(&cfg);
        assert!(
            r.get(Persist::KeepAlive, false)
                .starts_with(b"HTTP/1.1 204 No Content\r\n")
        );
        assert_eq!(
            parse(r.get(Persist::KeepAlive, false), false),
            (204, 0, true)
        );
        let cfg = ServeConfig {
            status: 599,
            body_size: 3,
            ..ServeConfig::default()
        };
        assert_eq!(
            parse(Responses::new(&cfg).get(Persist::KeepAlive, false), false),
            (599, 3, true)
        );
    }
}
