//! Byte counting under an HTTP/2 connection: its frames carry all streams at once, so bytes are
//! counted per connection, at the I/O, into the thread's totals (single-threaded cells). It also
//! keeps the first TLS error the connection met: h2 passes on only the kind of an I/O error, so
//! the alert that explains a failure would otherwise be lost.

use std::cell::{Cell, RefCell};
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

/// The first TLS error of one connection, as a message.
pub type TlsFailure = Rc<RefCell<Option<String>>>;

/// `S` with every byte read and written added to `Counters`.
#[derive(Debug)]
pub struct Counted<S> {
    inner: S,
    counters: Rc<Counters>,
    tls_failure: TlsFailure,
}

impl<S> Counted<S> {
    pub fn new(inner: S, counters: Rc<Counters>, tls_failure: TlsFailure) -> Self {
        Counted {
            inner,
            counters,
            tls_failure,
        }
    }

    fn note<T>(&self, r: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if let Poll::Ready(Err(e)) = &r
            && let Some(tls) = crate::net::tls_cause(e)
        {
            self.tls_failure
                .borrow_mut()
                .get_or_insert_with(|| format!("TLS: {tls}"));
        }
        r
    }

    fn wrote(&self, r: &Poll<io::Result<usize>>) {
        if let Poll::Ready(Ok(n)) = r {
            let w = &self.counters.written;
            w.set(w.get() + *n as u64);
        }
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
        this.note(r)
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
        this.wrote(&r);
        this.note(r)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.wrote(&r);
        this.note(r)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_flush(cx);
        this.note(r)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
