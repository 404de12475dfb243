//! Byte counting under an HTTP/2 connection: its frames carry all streams at once, so bytes are
//! counted per connection, at the I/O, into the thread's totals (single-threaded cells). Counts
//! only: errors pass through untouched.

use std::cell::Cell;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A thread's byte totals, shared by its HTTP/2 connections.
#[derive(Debug, Default)]
pub struct Counters {
    pub read: Cell<u64>,
    pub written: Cell<u64>,
}

/// `S` with every byte read and written added to `Counters`.
#[derive(Debug)]
pub struct Counted<S> {
    inner: S,
    counters: Rc<Counters>,
}

impl<S> Counted<S> {
    pub fn new(inner: S, counters: Rc<Counters>) -> Self {
        Counted { inner, counters }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut this.inner).poll_read(cx, buf);
        let read = &this.counters.read;
        read.set(read.get() + (buf.filled().len() - before) as u64);
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &r {
            let w = &this.counters.written;
            w.set(w.get() + *n as u64);
        }
        r
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
