//! The byte stream of one connection: plain TCP, TLS over TCP, or a Unix socket. Boxed TLS keeps
//! the plain cases small. All read and write through `AsyncRead`/`AsyncWrite`; the HTTP/1.1
//! lane's `poll_recv` and `poll_send` take plain sockets straight to the kernel. Nothing here
//! parses or buffers.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

#[cfg(any(target_os = "linux", target_os = "android"))]
use rustix::{
    io::Errno,
    net::{RecvFlags, SendFlags},
};
#[cfg(any(target_os = "linux", target_os = "android"))]
use tokio::io::Interest;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::unix::UnixStream;
use tokio_rustls::client::TlsStream;

#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    /// Everything else, boxed together: two variants leave the TCP stream's niche to tell them
    /// apart, so a TCP connection carries no discriminant word (a third variant cost every
    /// connection 8 bytes, past the four cache lines of an HTTP/1.1 `Link`).
    Boxed(Box<Boxed>),
}

/// Boxed whole already: a Unix stream in a box the size of a TLS stream costs a kilobyte per
/// connection and nothing per request.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Boxed {
    Tls(TlsStream<TcpStream>),
    /// `--unix-socket`: HTTP/1.1 or h2c, never TLS.
    Unix(UnixStream),
}

impl Stream {
    pub fn tls(s: TlsStream<TcpStream>) -> Stream {
        Stream::Boxed(Box::new(Boxed::Tls(s)))
    }

    pub fn unix(s: UnixStream) -> Stream {
        Stream::Boxed(Box::new(Boxed::Unix(s)))
    }
}

impl Stream {
    /// Reads what the socket holds into `buf`: `Ready(Ok(0))` at the end of the stream.
    ///
    /// Plain TCP skips tokio's `AsyncRead` layer: the socket is read first and the reactor is
    /// asked only when it has nothing, and the read is one raw system call (rustix) rather than
    /// libc's `recv`, whose thread-cancellation bookkeeping costs as much as the call's own
    /// user-space work. A short read means the socket is drained (edge-triggered epoll), so the
    /// next call waits for the reactor instead of making a system call that would find nothing,
    /// as tokio's own `poll_read` does. Unlike tokio's, it spends no task budget: the HTTP/1.1
    /// lane yields by itself when a response arrives without waiting.
    ///
    /// `Caller` is a type of the caller's choosing: each gets a copy of this and of the generic
    /// calls under it (down to tokio's `try_io`), since the closure inside differs. The HTTP/1.1
    /// exchange is compiled once per response receiver (`()`, and --stream's); with one copy
    /// shared, its two callers made the compiler call it out of line on the static path too,
    /// about 90 instructions a request more.
    #[inline]
    pub fn poll_recv<Caller>(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        match self {
            #[cfg(any(target_os = "linux", target_os = "android"))]
            Stream::Tcp(s) => raw_call(s, cx, Interest::READABLE, || recv(&*s, &mut *buf)),
            #[cfg(any(target_os = "linux", target_os = "android"))]
            Stream::Boxed(b) if let Boxed::Unix(s) = &**b => {
                raw_call(s, cx, Interest::READABLE, || recv(s, &mut *buf))
            }
            _ => {
                let mut rb = ReadBuf::new(buf);
                ready!(Pin::new(self).poll_read(cx, &mut rb))?;
                Poll::Ready(Ok(rb.filled().len()))
            }
        }
    }

    /// Writes as much of `buf` as the socket takes; the counterpart of [`Stream::poll_recv`],
    /// with a copy per `Caller` as it has.
    #[inline]
    pub fn poll_send<Caller>(
        &mut self,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self {
            #[cfg(any(target_os = "linux", target_os = "android"))]
            Stream::Tcp(s) => raw_call(s, cx, Interest::WRITABLE, || send(&*s, buf)),
            #[cfg(any(target_os = "linux", target_os = "android"))]
            Stream::Boxed(b) if let Boxed::Unix(s) = &**b => {
                raw_call(s, cx, Interest::WRITABLE, || send(s, buf))
            }
            _ => Pin::new(self).poll_write(cx, buf),
        }
    }

    /// Ready when every byte that [`Stream::poll_send`] took is on its way to the kernel. Plain
    /// TCP is always; over TLS, rustls reports plaintext as written once it is sealed into
    /// records, even when the socket refused the records (full, or tokio's cooperative budget
    /// spent), and nothing but a flush sends them later: a read would wait for a response to a
    /// request the server never got.
    #[inline]
    pub fn poll_sent(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            Stream::Boxed(b) if matches!(**b, Boxed::Tls(_)) => Pin::new(self).poll_flush(cx),
            _ => Poll::Ready(Ok(())),
        }
    }
}

/// One `recv`, and whether it drained the socket (a short read, or nothing there).
#[cfg(any(target_os = "linux", target_os = "android"))]
#[inline]
fn recv(fd: impl std::os::fd::AsFd, buf: &mut [u8]) -> (rustix::io::Result<usize>, bool) {
    let r = rustix::net::recv(fd, &mut *buf, RecvFlags::empty()).map(|(n, _)| n);
    let drained = match r {
        Ok(n) => n > 0 && n < buf.len(),
        Err(e) => e == Errno::AGAIN,
    };
    (r, drained)
}

/// One `send`, and whether the socket is full.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[inline]
fn send(fd: impl std::os::fd::AsFd, buf: &[u8]) -> (rustix::io::Result<usize>, bool) {
    let r = rustix::net::send(fd, buf, SendFlags::NOSIGNAL);
    let full = r == Err(Errno::AGAIN);
    (r, full)
}

/// A plain socket that tokio's reactor watches: TCP or Unix.
#[cfg(any(target_os = "linux", target_os = "android"))]
trait Watched {
    fn try_io<R>(&self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R>;
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
    fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
}

#[cfg(any(target_os = "linux", target_os = "android"))]
macro_rules! watched {
    ($t:ty) => {
        impl Watched for $t {
            #[inline]
            fn try_io<R>(
                &self,
                interest: Interest,
                f: impl FnOnce() -> io::Result<R>,
            ) -> io::Result<R> {
                <$t>::try_io(self, interest, f)
            }
            #[inline]
            fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                <$t>::poll_read_ready(self, cx)
            }
            #[inline]
            fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                <$t>::poll_write_ready(self, cx)
            }
        }
    };
}

#[cfg(any(target_os = "linux", target_os = "android"))]
watched!(TcpStream);
#[cfg(any(target_os = "linux", target_os = "android"))]
watched!(UnixStream);

/// One system call on a plain socket under tokio's readiness for `interest`, waiting for the
/// reactor while the socket has nothing (or no room). `call` makes the call and says whether the
/// socket is now spent (drained, or full), so that tokio forgets the readiness until the next
/// event. tokio skips `call` when it already knows the socket is not ready. Generic, so each
/// socket type gets its own copy: no dispatch on the way to the kernel.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[inline]
fn raw_call(
    s: &impl Watched,
    cx: &mut Context<'_>,
    interest: Interest,
    mut call: impl FnMut() -> (rustix::io::Result<usize>, bool),
) -> Poll<io::Result<usize>> {
    loop {
        // Kept apart from `try_io`'s own result, whose error kind would cost a call to inspect.
        let mut got = None;
        let _ = s.try_io(interest, || {
            let (r, spent) = call();
            got = Some(r);
            match spent {
                true => Err(io::ErrorKind::WouldBlock.into()),
                false => Ok(()),
            }
        });
        match got {
            Some(Ok(n)) => return Poll::Ready(Ok(n)),
            Some(Err(e)) if e != Errno::AGAIN => return Poll::Ready(Err(e.into())),
            _ if interest.is_readable() => ready!(s.poll_read_ready(cx))?,
            _ => ready!(s.poll_write_ready(cx))?,
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Boxed(b) => match b.as_mut() {
                Boxed::Tls(s) => Pin::new(s).poll_read(cx, buf),
                Boxed::Unix(s) => Pin::new(s).poll_read(cx, buf),
            },
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
            Stream::Boxed(b) => match b.as_mut() {
                Boxed::Tls(s) => match Pin::new(&mut *s).poll_write(cx, buf) {
                    Poll::Ready(Err(e)) => Poll::Ready(Err(explain(s, e))),
                    other => other,
                },
                Boxed::Unix(s) => Pin::new(s).poll_write(cx, buf),
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
            Stream::Boxed(b) => match b.as_mut() {
                Boxed::Tls(s) => match Pin::new(&mut *s).poll_write_vectored(cx, bufs) {
                    Poll::Ready(Err(e)) => Poll::Ready(Err(explain(s, e))),
                    other => other,
                },
                Boxed::Unix(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            },
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Tcp(s) => s.is_write_vectored(),
            Stream::Boxed(b) => match &**b {
                Boxed::Tls(s) => s.is_write_vectored(),
                Boxed::Unix(s) => s.is_write_vectored(),
            },
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_flush(cx),
            Stream::Boxed(b) => match b.as_mut() {
                Boxed::Tls(s) => match Pin::new(&mut *s).poll_flush(cx) {
                    Poll::Ready(Err(e)) => Poll::Ready(Err(explain(s, e))),
                    other => other,
                },
                Boxed::Unix(s) => Pin::new(s).poll_flush(cx),
            },
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Boxed(b) => match b.as_mut() {
                Boxed::Tls(s) => Pin::new(s).poll_shutdown(cx),
                Boxed::Unix(s) => Pin::new(s).poll_shutdown(cx),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    async fn pair() -> (Stream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (client, server) =
            futures_util::future::join(TcpStream::connect(addr), listener.accept()).await;
        (Stream::Tcp(client.unwrap()), server.unwrap().0)
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn reads_give_every_byte_then_the_end() {
        run(async {
            let (mut stream, mut peer) = pair().await;
            let sent: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
            let writer = async {
                // In pieces, so that reads see both short and full buffers.
                for piece in sent.chunks(7_000) {
                    peer.write_all(piece).await.unwrap();
                    tokio::task::yield_now().await;
                }
                drop(peer);
            };
            let reader = async {
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    match poll_fn(|cx| stream.poll_recv::<()>(cx, &mut buf))
                        .await
                        .unwrap()
                    {
                        0 => break got,
                        n => got.extend_from_slice(&buf[..n]),
                    }
                }
            };
            let ((), got) = futures_util::future::join(writer, reader).await;
            assert_eq!(got, sent);
        });
    }

    #[test]
    fn writes_wait_for_a_full_socket_and_deliver_everything() {
        run(async {
            let (mut stream, mut peer) = pair().await;
            // Far more than the socket buffers hold: the sender must wait for the reader.
            let sent: Vec<u8> = (0..8_000_000u32).map(|i| (i % 253) as u8).collect();
            let writer = async {
                let mut rest = &sent[..];
                while !rest.is_empty() {
                    let n = poll_fn(|cx| stream.poll_send::<()>(cx, rest))
                        .await
                        .unwrap();
                    rest = &rest[n..];
                }
                drop(stream);
            };
            let reader = async {
                let mut got = Vec::new();
                peer.read_to_end(&mut got).await.unwrap();
                got
            };
            let ((), got) = futures_util::future::join(writer, reader).await;
            assert!(got == sent, "{} of {} bytes", got.len(), sent.len());
        });
    }

    #[test]
    fn a_reset_is_an_error_of_its_kind() {
        run(async {
            let (mut stream, peer) = pair().await;
            socket2::SockRef::from(&peer)
                .set_linger(Some(std::time::Duration::ZERO))
                .unwrap();
            drop(peer);
            let mut buf = [0u8; 64];
            let read = poll_fn(|cx| stream.poll_recv::<()>(cx, &mut buf)).await;
            assert_eq!(read.unwrap_err().kind(), io::ErrorKind::ConnectionReset);
            let write = poll_fn(|cx| stream.poll_send::<()>(cx, b"GET / HTTP/1.1\r\n\r\n")).await;
            assert!(write.is_err(), "{write:?}");
        });
    }
}
