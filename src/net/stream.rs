//! The byte stream of one connection: plain TCP, or TLS over TCP. Boxed TLS keeps the plain case
//! small; both read and write through the same `AsyncRead`/`AsyncWrite` calls.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

/// A write failed because the peer went away. If it left a TLS alert behind (a TLS 1.3 server
/// that refuses the client certificate does so after the client's side of the handshake), the
/// alert is the real cause: read what is in the socket (tokio would wait for the reactor) and
/// give it to rustls, which reports the alert.
fn explain(s: &mut TlsStream<TcpStream>, e: io::Error) -> io::Error {
    use std::io::Read;
    if !matches!(
        e.kind(),
        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
    ) {
        return e;
    }
    let (tcp, conn) = s.get_mut();
    let mut raw = [0u8; 4096];
    let n = match (&*socket2::SockRef::from(&*tcp)).read(&mut raw) {
        Ok(n) if n > 0 => n,
        _ => return e,
    };
    if conn.read_tls(&mut &raw[..n]).is_err() {
        return e;
    }
    match conn.process_new_packets() {
        Err(alert) => io::Error::new(io::ErrorKind::InvalidData, alert),
        Ok(_) => e,
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => match Pin::new(s.as_mut()).poll_write(cx, buf) {
                Poll::Ready(Err(e)) => Poll::Ready(Err(explain(s, e))),
                other => other,
            },
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => match Pin::new(s.as_mut()).poll_write_vectored(cx, bufs) {
                Poll::Ready(Err(e)) => Poll::Ready(Err(explain(s, e))),
                other => other,
            },
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Tcp(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => match Pin::new(s.as_mut()).poll_flush(cx) {
                Poll::Ready(Err(e)) => Poll::Ready(Err(explain(s, e))),
                other => other,
            },
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
