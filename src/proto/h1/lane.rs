//! The HTTP/1.1 lane: write the prepared request bytes, then read one response through the
//! thread's shared read space, feeding the sans-IO parser inside `poll`. A connection keeps no
//! read buffer of its own unless a head straddles reads or the server sent bytes early.

use std::cell::RefCell;
use std::io;
use std::task::{Context, Poll, ready};

use crate::clock::Tick;

use super::response::feed_with_carry;
use super::{HeadMemo, ResponseParser};
use crate::net::Stream;
use crate::proto::Failure;
use crate::proto::{Events, Fail, Response};

/// One HTTP/1.1 connection.
#[derive(Debug)]
pub struct Conn {
    pub(super) stream: Stream,
    /// Bytes read but not yet consumed: an incomplete head, or the start of a later response.
    pub(super) carry: Vec<u8>,
}

/// What all connections of a thread read through, one at a time: the read buffer, and the memory
/// of the last response head (the next one is usually identical).
#[derive(Debug)]
pub struct ReadSpace {
    pub buf: Box<[u8]>,
    pub heads: HeadMemo,
}

impl ReadSpace {
    pub fn new(bytes: usize) -> ReadSpace {
        ReadSpace {
            buf: vec![0; bytes].into_boxed_slice(),
            heads: HeadMemo::default(),
        }
    }
}

impl Conn {
    pub fn new(stream: Stream) -> Conn {
        Conn {
            stream,
            carry: Vec::new(),
        }
    }

    /// Whether bytes of a response are held unconsumed (a head cut short by a close, or the
    /// start of a later response).
    pub fn holds_bytes(&self) -> bool {
        !self.carry.is_empty()
    }
}

/// One request and its response on an open connection: write the prepared bytes, then read
/// until the parser says the response is complete. One hand-written state and one `poll` rather
/// than an `async fn` per step, because each layer of `async` costs its own resume and a copy of
/// its result on every request. It holds no borrow: each poll is handed the connection, the
/// request and the read space, so that the engine keeps it inline beside the connection it runs
/// on, and one value serves every request of that connection (`restart`).
#[derive(Debug)]
pub struct Exchange {
    /// Request bytes handed over so far.
    sent: usize,
    parser: ResponseParser,
    bytes_in: u64,
    /// When the request had been handed over in full.
    written: Option<Tick>,
    first_byte: Option<Tick>,
    /// When the bytes that completed the response were read: one clock read per read serves as
    /// both first byte and end when a response arrives whole, as it almost always does.
    last_read: Option<Tick>,
    phase: Phase,
    /// The receiver had enough before the response was complete (`Events::enough`): it ends
    /// as it stands, and the connection is not reused.
    cut: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Write,
    /// Reading; `waited` once the socket had nothing and the reactor was asked.
    Read {
        waited: bool,
    },
    /// Complete without having waited (answered ahead, or from `carry`): passes once the task
    /// budget allows, so that a server answering ahead cannot starve the thread's other
    /// connections. The socket calls spend no budget; this is where the lane spends it.
    Yield,
    Done,
}

/// How reading went this poll.
enum Read {
    Complete,
    Pending,
    Failed(Fail),
}

/// What one poll works on: the exchange and what it was handed.
struct On<'a, E> {
    ex: &'a mut Exchange,
    conn: &'a mut Conn,
    space: &'a RefCell<ReadSpace>,
    events: &'a mut E,
}

impl Exchange {
    pub fn new(head_request: bool) -> Exchange {
        Exchange {
            sent: 0,
            parser: ResponseParser::new(head_request),
            bytes_in: 0,
            written: None,
            first_byte: None,
            last_read: None,
            phase: Phase::Write,
            cut: false,
        }
    }

    /// Ready for the next request, as `new` would be.
    #[inline]
    pub fn restart(&mut self, head_request: bool) {
        *self = Exchange::new(head_request);
    }

    /// When the request had been handed over in full, if it was.
    pub fn written(&self) -> Option<Tick> {
        self.written
    }

    /// When bytes of the response were last read.
    #[inline]
    pub fn last_read(&self) -> Option<Tick> {
        self.last_read
    }

    /// Bytes of the response received so far: what an exchange that did not complete still
    /// received (a completed one reports them in its `Response`).
    pub fn bytes_in(&self) -> u64 {
        self.bytes_in
    }

    /// Writes what is left of `request` on `conn`, then reads its response, reporting its head
    /// and payload to `events` as they arrive. `request` must be the same bytes on every poll
    /// until the exchange completes; it must not be polled after.
    pub fn poll<E: Events>(
        &mut self,
        cx: &mut Context<'_>,
        conn: &mut Conn,
        request: &[u8],
        space: &RefCell<ReadSpace>,
        events: &mut E,
    ) -> Poll<Result<Response, Fail>> {
        let mut on = On {
            ex: self,
            conn,
            space,
            events,
        };
        loop {
            match on.ex.phase {
                Phase::Write => {
                    if let Err(failed) = ready!(on.poll_write(cx, request)) {
                        on.ex.phase = Phase::Done;
                        return Poll::Ready(on.early_answer(cx, failed));
                    }
                    let written = Tick::now();
                    on.ex.written = Some(written);
                    // Bytes already held arrived before the request was out.
                    on.ex.phase = match on.feed_carry(written) {
                        Ok(true) => Phase::Yield,
                        Ok(false) => Phase::Read { waited: false },
                        Err(fail) => {
                            on.ex.phase = Phase::Done;
                            return Poll::Ready(Err(fail));
                        }
                    };
                }
                Phase::Read { waited } => match on.poll_read(cx) {
                    Read::Pending => {
                        on.ex.phase = Phase::Read { waited: true };
                        return Poll::Pending;
                    }
                    Read::Complete if !waited => on.ex.phase = Phase::Yield,
                    Read::Complete => {
                        on.ex.phase = Phase::Done;
                        return Poll::Ready(Ok(on.ex.response()));
                    }
                    Read::Failed(fail) => {
                        on.ex.phase = Phase::Done;
                        return Poll::Ready(Err(fail));
                    }
                },
                Phase::Yield => {
                    ready!(tokio::task::coop::poll_proceed(cx)).made_progress();
                    on.ex.phase = Phase::Done;
                    return Poll::Ready(Ok(on.ex.response()));
                }
                Phase::Done => panic!("h1::Exchange polled after it completed"),
            }
        }
    }

    fn response(&self) -> Response {
        Response {
            status: self.parser.status(),
            keep_alive: self.parser.keep_alive() && !self.cut,
            body_bytes: self.parser.body_bytes(),
            bytes_in: self.bytes_in,
            first_byte: self.first_byte,
            // Completed from `carry` alone: the bytes were there before this request.
            done: self.last_read.unwrap_or_else(Tick::now),
        }
    }
}

impl<E: Events> On<'_, E> {
    /// Writes what is left of the request, and sees it leave the stream's buffers (TLS).
    fn poll_write(&mut self, cx: &mut Context<'_>, request: &[u8]) -> Poll<Result<(), Fail>> {
        while self.ex.sent < request.len() {
            match ready!(
                self.conn
                    .stream
                    .poll_send::<E>(cx, &request[self.ex.sent..])
            ) {
                Ok(0) => {
                    return Poll::Ready(Err(Fail::io(
                        Failure::Write,
                        io::ErrorKind::WriteZero.into(),
                    )));
                }
                Ok(n) => self.ex.sent += n,
                Err(e) => return Poll::Ready(Err(Fail::io(Failure::Write, e))),
            }
        }
        ready!(self.conn.stream.poll_sent(cx)).map_err(|e| Fail::io(Failure::Write, e))?;
        Poll::Ready(Ok(()))
    }

    /// The bytes the connection already holds (the server may have answered before we asked,
    /// or sent two responses to one request), taken as arrived at `at`. True if they complete
    /// the response.
    fn feed_carry(&mut self, at: Tick) -> Result<bool, Fail> {
        if self.conn.carry.is_empty() {
            return Ok(false);
        }
        self.events.read_at(at);
        let before = self.conn.carry.len();
        let heads = &mut self.space.borrow_mut().heads;
        let carry = &mut self.conn.carry;
        let done = feed_with_carry(&mut self.ex.parser, carry, &[], heads, self.events)
            .map_err(Fail::parse)?;
        self.ex.bytes_in += (before - self.conn.carry.len()) as u64;
        if !done && self.events.enough() {
            self.ex.cut = true;
            return Ok(true);
        }
        Ok(done)
    }

    /// Reads and parses until the response is complete or the socket has nothing more. The read
    /// space is borrowed only inside this call, never across a `Pending`.
    fn poll_read(&mut self, cx: &mut Context<'_>) -> Read {
        let mut space = self.space.borrow_mut();
        let ReadSpace { buf, heads } = &mut *space;
        let ex = &mut *self.ex;
        loop {
            let n = match self.conn.stream.poll_recv::<E>(cx, buf) {
                Poll::Ready(Ok(n)) => n,
                Poll::Ready(Err(e)) => return Read::Failed(Fail::io(Failure::Read, e)),
                Poll::Pending => return Read::Pending,
            };
            if n == 0 {
                // A body delimited by the close ends now, not at its last bytes.
                ex.last_read = None;
                return match ex.parser.finish_at_eof() {
                    true => Read::Complete,
                    false => Read::Failed(Fail::eof()),
                };
            }
            let data = &buf[..n];
            let now = Tick::now();
            ex.first_byte.get_or_insert(now);
            ex.last_read = Some(now);
            self.events.read_at(now);
            let carry = &mut self.conn.carry;
            let before = carry.len();
            let complete = match feed_with_carry(&mut ex.parser, carry, data, heads, self.events) {
                Ok(complete) => complete,
                Err(e) => {
                    // The connection goes with the error: what it held was this response's.
                    ex.bytes_in += (before + n) as u64;
                    return Read::Failed(Fail::parse(e));
                }
            };
            // Bytes that stay in `carry` for a later response are not this one's.
            ex.bytes_in += (before + n).saturating_sub(carry.len()) as u64;
            if complete {
                return Read::Complete;
            }
            if self.events.enough() {
                ex.cut = true;
                return Read::Complete;
            }
        }
    }

    /// After a write that failed because the server closed or reset the connection: a server may
    /// answer before it has read the whole request (a 413 to a large upload) and close. What it
    /// sent is already in the socket's buffer and stays readable after the reset (Linux), so one
    /// read finds it; a complete response is the answer, and the connection is not reused.
    /// Otherwise the write's failure stands.
    fn early_answer(&mut self, cx: &mut Context<'_>, failed: Fail) -> Result<Response, Fail> {
        if failed.class != Failure::Closed {
            return Err(failed);
        }
        let complete = match self.feed_carry(Tick::now()) {
            Ok(true) => true,
            Ok(false) => matches!(self.poll_read(cx), Read::Complete),
            Err(_) => false,
        };
        match complete {
            true => Ok(Response {
                keep_alive: false,
                ..self.ex.response()
            }),
            false => Err(failed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::future::poll_fn;
    use std::rc::Rc;

    #[test]
    fn responses_that_need_no_wait_still_let_other_tasks_run() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt, async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let client = tokio::net::TcpStream::connect(listener.local_addr().unwrap());
            let (client, _server) = futures_util::future::join(client, listener.accept()).await;
            let mut conn = Conn::new(Stream::Tcp(client.unwrap()));
            // A server that answered 1,000 requests ahead: each exchange completes from what is
            // already read, without reading the socket.
            conn.carry = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n".repeat(1000);
            let space = RefCell::new(ReadSpace::new(1024));
            let other_ran = Rc::new(Cell::new(false));
            let flag = other_ran.clone();
            tokio::task::spawn_local(async move { flag.set(true) });
            let mut before_other = 0;
            let mut exchange = Exchange::new(false);
            for _ in 0..1000 {
                let request = b"GET / HTTP/1.1\r\nhost: a\r\n\r\n";
                exchange.restart(false);
                let r = poll_fn(|cx| exchange.poll(cx, &mut conn, request, &space, &mut ()))
                    .await
                    .unwrap();
                assert_eq!(r.status, 200);
                if !other_ran.get() {
                    before_other += 1;
                }
            }
            assert!(conn.carry.is_empty());
            assert!(other_ran.get() && before_other < 1000, "{before_other}");
        });
    }
}
