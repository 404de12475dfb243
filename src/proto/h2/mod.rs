//! HOT: the HTTP/2 client lane, spate's own: one task per connection does the I/O (`Driver`),
//! the sans-IO `conn::Conn` keeps the protocol state, and each stream slot exchanges the request
//! encoded once before the run (`Prepared`) for a response: `Lane::poll_open`, then
//! `Lane::poll_response`, polled by the engine's stream slots. Must not allocate or encode per
//! request; one clock read per socket read stamps every frame in it.

mod conn;
mod counted;
mod frame;
mod hpack;
mod huffman;
pub mod props;

use std::cell::{RefCell, RefMut};
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pub use conn::Ready;
pub use counted::{Counted, Counters};

use crate::clock::Tick;
use crate::net::Stream;
use crate::proto::Failure;
use crate::proto::{Events, Fail, Response};

/// The I/O under an HTTP/2 connection: the stream, with its bytes counted.
pub type Io = Counted<Stream>;

/// What we advertise in SETTINGS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub stream_window: u32,
    pub conn_window: u32,
    pub max_frame: u32,
}

/// The request as HTTP/2 sends it, built once: its fields (pseudo-headers first, names in lower
/// case), from which each connection encodes its two header blocks once (`conn`), and the body,
/// shared by every stream. The default is a placeholder for runs that cannot speak HTTP/2.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    pub fields: Arc<[(Bytes, Bytes)]>,
    pub body: Bytes,
}

impl Prepared {
    pub fn new(fields: &[(&[u8], &[u8])], body: Bytes) -> Prepared {
        Prepared {
            fields: fields
                .iter()
                .map(|&(n, v)| (Bytes::copy_from_slice(n), Bytes::copy_from_slice(v)))
                .collect(),
            body,
        }
    }

    pub(crate) fn field_slices(&self) -> Vec<(&[u8], &[u8])> {
        self.fields.iter().map(|(n, v)| (&n[..], &v[..])).collect()
    }

    /// The fields, as text (for properties and tests).
    pub fn field_pairs(&self) -> Vec<(String, String)> {
        self.fields
            .iter()
            .map(|(n, v)| {
                (
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                )
            })
            .collect()
    }

    /// The header block decoded again, for tests.
    #[cfg(test)]
    pub fn fields(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        hpack::Decoder::default()
            .decode(&hpack::encode(&self.field_slices()), |n, v| {
                out.push((
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                ));
            })
            .expect("our own block decodes");
        out
    }
}

/// A request other than the connection's own, for one stream at a time (a request list's
/// entry): its header block, encoded once before the run without touching the server's dynamic
/// table (so it is valid on any connection), and its body.
#[derive(Debug, Clone, Default)]
pub struct Other {
    block: Bytes,
    body: Bytes,
}

impl Other {
    /// Whether it holds no request (`Other::default()`: a list built for a run that does not
    /// speak HTTP/2).
    pub fn is_empty(&self) -> bool {
        self.block.is_empty()
    }

    pub fn new(request: &Prepared) -> Other {
        Other {
            block: hpack::encode(&request.field_slices()).into(),
            body: request.body.clone(),
        }
    }
}

/// The handle to one HTTP/2 connection, held by the connection's stream loops. Dropping it
/// closes the connection once its open streams are done.
#[derive(Debug)]
pub struct Lane<S: Events = ()> {
    conn: Rc<RefCell<conn::Conn<S>>>,
}

impl<S: Events> Drop for Lane<S> {
    fn drop(&mut self) {
        let mut c = self.conn.borrow_mut();
        c.closing = true;
        c.notify();
    }
}

/// Starts HTTP/2 on `io` (prior knowledge, or after ALPN h2) with `slots` stream slots: the
/// preface and SETTINGS are queued, and the returned `Driver` must run (as its own task) for
/// anything to happen. `Lane::settled` then waits for the server's SETTINGS. Each slot's
/// responses are told, as they arrive, to its own `S`, made by `make` (`Lane::events`).
pub fn connect<S: Events>(
    io: Io,
    s: Settings,
    slots: usize,
    request: Prepared,
    make: impl FnMut() -> S,
) -> (Lane<S>, Driver<S>) {
    let cfg = conn::Config {
        stream_window: s.stream_window,
        conn_window: s.conn_window,
        max_frame: s.max_frame,
        max_header_bytes: crate::proto::h1::MAX_HEAD_BYTES,
        slots,
    };
    let conn = Rc::new(RefCell::new(conn::Conn::with_events(cfg, request, make)));
    let driver = Driver {
        conn: conn.clone(),
        io,
        carry: Vec::new(),
        written: 0,
        unflushed: false,
    };
    (Lane { conn }, driver)
}

impl<S: Events> Lane<S> {
    /// Waits for one PING round trip. Servers send their SETTINGS before anything else, so
    /// afterwards `max_streams` holds the server's limit.
    pub async fn settled(&self) -> Result<usize, Fail> {
        poll_fn(|cx| self.conn.borrow_mut().poll_settled(cx)).await?;
        Ok(self.conn.borrow().max_streams())
    }

    /// Whether a stream may be opened now, waiting while the server's limit is reached.
    pub fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<Ready> {
        self.conn.borrow_mut().poll_ready(cx)
    }

    /// The server allows no stream at all (MAX_CONCURRENT_STREAMS 0) and none is open, so no
    /// stream's end will free a place: only new SETTINGS from the server can.
    pub fn starved(&self) -> bool {
        let c = self.conn.borrow();
        c.ready() == Ready::Wait && c.active() == 0
    }

    /// Opens a stream on slot `k` (each slot has one stream at a time), once there is a place
    /// for it under the server's limit, and queues the connection's request, or `other`.
    pub fn poll_open(
        &self,
        k: usize,
        cx: &mut Context<'_>,
        other: Option<&Other>,
    ) -> Poll<Result<(), Fail>> {
        self.conn.borrow_mut().poll_open(k, cx, other)
    }

    /// The response of slot `k`'s stream, read in full.
    pub fn poll_response(&self, k: usize, cx: &mut Context<'_>) -> Poll<Result<Response, Fail>> {
        self.conn.borrow_mut().poll_response(k, cx)
    }

    /// Abandons slot `k`'s stream before its response (a timeout, the end of the run): the
    /// server is told to cancel it.
    pub fn cancel(&self, k: usize) {
        self.conn.borrow_mut().cancel(k);
    }

    /// What slot `k`'s receiver was told of its responses: the caller takes or resets it
    /// between requests. Not to be held across an await.
    pub fn events(&self, k: usize) -> RefMut<'_, S> {
        RefMut::map(self.conn.borrow_mut(), |c| c.events(k))
    }
}

impl<S: Events> Lane<S> {
    /// Stream slot `k` held apart from the lane's own (a stream that lasts as long as what
    /// holds it, such as a session's event stream): it does not keep the connection for new
    /// streams, and dropping it cancels its stream.
    pub fn side(&self, k: usize) -> Side<S> {
        Side {
            conn: self.conn.clone(),
            k,
        }
    }
}

/// One stream slot of a connection, held apart from its `Lane` (`Lane::side`).
#[derive(Debug)]
pub struct Side<S: Events = ()> {
    conn: Rc<RefCell<conn::Conn<S>>>,
    k: usize,
}

impl<S: Events> Side<S> {
    /// Opens the slot's stream with `other`, once the server's limit allows.
    pub fn poll_open(&self, cx: &mut Context<'_>, other: &Other) -> Poll<Result<(), Fail>> {
        self.conn.borrow_mut().poll_open(self.k, cx, Some(other))
    }

    /// The stream's response, once it ended.
    pub fn poll_response(&self, cx: &mut Context<'_>) -> Poll<Result<Response, Fail>> {
        self.conn.borrow_mut().poll_response(self.k, cx)
    }

    /// The slot's receiver. Not to be held across an await.
    pub fn events(&self) -> RefMut<'_, S> {
        RefMut::map(self.conn.borrow_mut(), |c| c.events(self.k))
    }
}

impl<S: Events> Drop for Side<S> {
    fn drop(&mut self) {
        self.conn.borrow_mut().cancel(self.k);
    }
}

/// The thread's read buffer, shared by its HTTP/2 connections (each reads, parses and is done
/// before the next): room for several frames at the default size. A connection keeps only the
/// start of a frame that a read cut (`Driver::carry`), so 10,000 connections do not hold 10,000
/// buffers.
const READ_BUFFER: usize = 64 * 1024;

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = RefCell::new(vec![0; READ_BUFFER]);
}

/// The I/O task of one connection: writes what the state machine queued, reads frames into it,
/// until the connection ends or its `Lane` is dropped and no stream is open.
pub struct Driver<S: Events = ()> {
    conn: Rc<RefCell<conn::Conn<S>>>,
    io: Io,
    /// The incomplete frame at the end of the last read, kept for the next.
    carry: Vec<u8>,
    /// Bytes of `Conn::out` already written.
    written: usize,
    /// Written bytes may wait in the stream for a flush.
    unflushed: bool,
}

impl<S: Events> Future for Driver<S> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let conn = this.conn.clone();
        let mut c = conn.borrow_mut();
        if !c.driver.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            c.driver = Some(cx.waker().clone());
        }
        c.notified = false;
        loop {
            while this.written < c.out.len() {
                match Pin::new(&mut this.io).poll_write(cx, &c.out[this.written..]) {
                    Poll::Ready(Ok(n)) if n > 0 => this.written += n,
                    Poll::Ready(Ok(_)) => {
                        c.end_io(Fail::io(
                            Failure::Write,
                            std::io::ErrorKind::WriteZero.into(),
                        ));
                        return Poll::Ready(());
                    }
                    Poll::Ready(Err(e)) => {
                        c.end_io(Fail::io(Failure::Write, e));
                        return Poll::Ready(());
                    }
                    Poll::Pending => break,
                }
            }
            if this.written > 0 && this.written == c.out.len() {
                c.out.clear();
                this.written = 0;
                this.unflushed = true;
                if c.refill() {
                    continue;
                }
            }
            // Over TLS, written bytes may still be records in rustls (see `Stream::poll_sent`);
            // a `Pending` flush is retried on every poll until they are out, since nothing else
            // would send them.
            if this.unflushed {
                match Pin::new(&mut this.io).poll_flush(cx) {
                    Poll::Ready(Ok(())) => this.unflushed = false,
                    Poll::Ready(Err(e)) => {
                        c.end_io(Fail::io(Failure::Write, e));
                        return Poll::Ready(());
                    }
                    Poll::Pending => {}
                }
            }
            if c.is_ended() {
                return Poll::Ready(());
            }
            if c.closing && c.active() == 0 {
                c.close();
                continue;
            }
            let read = SCRATCH.with_borrow_mut(|buf| {
                let have = this.carry.len();
                let want = c.wanted(&this.carry).max(have + 1);
                if want > buf.len() {
                    buf.resize(want, 0);
                }
                buf[..have].copy_from_slice(&this.carry);
                let mut rb = ReadBuf::new(&mut buf[have..]);
                let r = Pin::new(&mut this.io).poll_read(cx, &mut rb);
                let n = rb.filled().len();
                if let Poll::Ready(Ok(())) = r
                    && n > 0
                {
                    let used = c.receive(&buf[..have + n], Tick::now());
                    this.carry.clear();
                    this.carry.extend_from_slice(&buf[used..have + n]);
                }
                r.map_ok(|()| n)
            });
            match read {
                Poll::Ready(Ok(0)) => {
                    c.end_io(Fail::eof());
                    continue;
                }
                Poll::Ready(Ok(_)) => {}
                Poll::Ready(Err(e)) => c.end_io(Fail::io(Failure::Read, e)),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}
