//! One connection of the built-in server: parse pipelined requests (skipping their bodies with
//! the client's own body framing), queue the prebuilt responses, write them in one go.

use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::Pacing;
use super::responses::{Persist, Responses};
use crate::proto::h1::{Body, Framing};
use crate::timer::Timer;

const READ_CHUNK: usize = 4096;
const MAX_REQUEST_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 64;

const BAD_REQUEST: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
const HEAD_TOO_LARGE: &[u8] =
    b"HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// A request whose head is parsed and whose body is being skipped.
struct Pending {
    body: Body,
    persist: Persist,
    head_only: bool,
}

enum Parsed {
    Request {
        len: usize,
        pending: Pending,
        expect_continue: bool,
    },
    Partial,
    Invalid,
}

fn parse_request(buf: &[u8]) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(_) => return Parsed::Invalid,
    };
    let http10 = req.version == Some(0);
    let mut keep = !http10;
    let mut framing = Framing::Empty;
    let mut expect_continue = false;
    for h in req.headers.iter() {
        let name = h.name.as_bytes();
        let value = h.value.trim_ascii();
        if name.eq_ignore_ascii_case(b"content-length") {
            let Some(n) = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
            else {
                return Parsed::Invalid;
            };
            if framing != Framing::Chunked {
                framing = Framing::Length(n);
            }
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            if !value.eq_ignore_ascii_case(b"chunked") {
                return Parsed::Invalid;
            }
            framing = Framing::Chunked;
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    keep = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") && http10 {
                    keep = true;
                }
            }
        } else if name.eq_ignore_ascii_case(b"expect") {
            expect_continue = value.eq_ignore_ascii_case(b"100-continue");
        }
    }
    let persist = match (keep, http10) {
        (false, _) => Persist::Close,
        (true, true) => Persist::KeepAlive10,
        (true, false) => Persist::KeepAlive,
    };
    let head_only = req.method == Some("HEAD");
    let body = Body::new(framing);
    let expect_continue = expect_continue && body != Body::Done;
    Parsed::Request {
        len,
        pending: Pending {
            body,
            persist,
            head_only,
        },
        expect_continue,
    }
}

pub(crate) async fn serve<T>(
    mut stream: T,
    responses: &Responses,
    counter: &AtomicU64,
    pacing: Pacing,
) where
    T: AsyncRead + AsyncWrite + Unpin,
{
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut out: Vec<u8> = Vec::new();
    let mut pending: Option<Pending> = None;
    let mut timer: Option<Timer> = None;
    loop {
        if buf.capacity() - buf.len() < READ_CHUNK / 4 {
            buf.reserve(READ_CHUNK);
        }
        match stream.read_buf(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let mut pos = 0;
        let mut queued = 0u32;
        let mut close = false;
        loop {
            if let Some(p) = pending.as_mut() {
                let Ok(d) = p.body.decode(&buf[pos..]) else {
                    out.extend_from_slice(BAD_REQUEST);
                    close = true;
                    break;
                };
                pos += d.consumed;
                if !d.done {
                    break;
                }
                out.extend_from_slice(responses.get(p.persist, p.head_only));
                queued += 1;
                counter.fetch_add(1, Ordering::Relaxed);
                let persist = p.persist;
                pending = None;
                if persist == Persist::Close {
                    close = true;
                    break;
                }
                continue;
            }
            match parse_request(&buf[pos..]) {
                Parsed::Request {
                    len,
                    pending: p,
                    expect_continue,
                } => {
                    pos += len;
                    if expect_continue {
                        out.extend_from_slice(CONTINUE);
                    }
                    pending = Some(p);
                }
                Parsed::Partial => {
                    if buf.len() - pos > MAX_REQUEST_HEAD {
                        out.extend_from_slice(HEAD_TOO_LARGE);
                        close = true;
                    }
                    break;
                }
                Parsed::Invalid => {
                    out.extend_from_slice(BAD_REQUEST);
                    close = true;
                    break;
                }
            }
        }
        buf.drain(..pos);
        if !out.is_empty() {
            if queued > 0 && pacing.is_active() {
                pacing
                    .hold(timer.get_or_insert_with(Timer::new), queued)
                    .await;
            }
            // Over TLS the last records may still be in rustls when the socket was full; only
            // a flush sends them (free on plain TCP).
            if stream.write_all(&out).await.is_err() || stream.flush().await.is_err() {
                return;
            }
            out.clear();
        }
        if close {
            let _ = stream.shutdown().await;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A stream with tokio-rustls's contract: a write is taken but delivered only by a flush.
    /// It reads `input`, then the end.
    struct Sealing {
        input: &'static [u8],
        taken: Vec<u8>,
        delivered: Vec<u8>,
    }

    impl AsyncRead for Sealing {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let n = self.input.len().min(buf.remaining());
            buf.put_slice(&self.input[..n]);
            self.input = &self.input[n..];
            Poll::Ready(Ok(()))
        }
    }

    impl AsyncWrite for Sealing {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            self.taken.extend_from_slice(buf);
            Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            let this = &mut *self;
            this.delivered.append(&mut this.taken);
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[test]
    fn responses_are_flushed_not_only_written() {
        let responses = Responses::new(&super::super::ServeConfig::default());
        let pacing = Pacing {
            delay: std::time::Duration::ZERO,
            stall: None,
            started: std::time::Instant::now(),
        };
        let mut stream = Sealing {
            input: b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
            taken: Vec::new(),
            delivered: Vec::new(),
        };
        let counter = AtomicU64::new(0);
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(serve(&mut stream, &responses, &counter, pacing));
        assert_eq!(counter.load(Ordering::Relaxed), 2);
        let text = String::from_utf8_lossy(&stream.delivered);
        assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 2, "{text:?}");
        assert!(stream.taken.is_empty());
    }

    #[test]
    fn request_framing_and_persistence() {
        let Parsed::Request {
            len,
            pending,
            expect_continue,
        } = parse_request(
            b"POST / HTTP/1.1\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\nabc",
        )
        else {
            panic!("complete request expected")
        };
        assert_eq!(len, 60);
        assert_eq!(pending.body, Body::Length(3));
        assert_eq!(pending.persist, Persist::KeepAlive);
        assert!(expect_continue);

        let Parsed::Request { pending, .. } =
            parse_request(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        else {
            panic!()
        };
        assert_eq!(pending.persist, Persist::KeepAlive10);
        let Parsed::Request { pending, .. } = parse_request(b"HEAD / HTTP/1.0\r\n\r\n") else {
            panic!()
        };
        assert_eq!((pending.persist, pending.head_only), (Persist::Close, true));
        let Parsed::Request { pending, .. } =
            parse_request(b"PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
        else {
            panic!()
        };
        assert_eq!(
            pending.body,
            Body::Chunked(crate::proto::h1::Chunked::new())
        );
        assert!(matches!(
            parse_request(b"GET / HTTP/1.1\r\nHost: x\r\n"),
            Parsed::Partial
        ));
        assert!(matches!(
            parse_request(b"\x01\x02 nonsense\r\n\r\n"),
            Parsed::Invalid
        ));
        assert!(matches!(
            parse_request(b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n"),
            Parsed::Invalid
        ));
    }
}
