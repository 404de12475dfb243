//! The client side of one HTTP/2 connection as a state machine, sans-IO: the server's bytes go
//! in (`receive`, with the time they were read), the frames to send accumulate in `out`, and
//! each stream slot of the connection ends with a `Response` or a `Fail`. A stream sends the
//! connection's request, encoded once (`Prepared`), or another one encoded once before the run
//! (`Other`: a list's entry). Must not read the clock or touch a socket, and must
//! not allocate per request: frames are parsed in place and a response's head is decoded without
//! copying unless the server uses Huffman literals or the dynamic table grows.

mod control;
mod inbound;

use std::task::{Context, Poll, Waker};

use bytes::Bytes;

use super::frame;
use super::hpack::{self, Decoder};
use super::{Other, Prepared};
use crate::clock::Tick;
use crate::proto::Failure;
use crate::proto::{Cause, Events, Fail, Response};

/// Stream ids are 31 bits; client streams are odd.
const MAX_STREAM_ID: u32 = (1 << 31) - 1;
/// Control frames (SETTINGS and PING acknowledgements) a server may make spate queue while it
/// does not read: beyond this the connection ends with ENHANCE_YOUR_CALM.
const MAX_QUEUED: usize = 1 << 20;
/// Request body bytes `pump` queues ahead of the socket. More is queued as the driver writes
/// (`refill`), so uploads on many streams hold this much, not their bodies, and what grows past
/// `MAX_QUEUED` is what the server makes spate send.
const DATA_AHEAD: usize = 256 * 1024;
/// The opaque payload of spate's PING, whose acknowledgement ends the handshake.
const PING_PAYLOAD: [u8; 8] = *b"spate-h2";

/// What spate advertises and enforces.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    pub stream_window: u32,
    pub conn_window: u32,
    pub max_frame: u32,
    /// Largest response header block (encoded) and header list (decoded) accepted.
    pub max_header_bytes: usize,
    /// Stream slots: the most streams this connection will have open at once.
    pub slots: usize,
}

/// Whether a slot may open a stream now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ready {
    Yes,
    /// The server's MAX_CONCURRENT_STREAMS is reached; a stream's end frees a place.
    Wait,
    /// The connection takes no more streams: after a GOAWAY (`goaway`), an error or a close.
    Gone {
        goaway: bool,
    },
}

#[derive(Debug)]
struct Slot<S> {
    /// What is told of the stream's response as it arrives (nothing, for `()`).
    events: S,
    /// The open stream's id, or 0.
    id: u32,
    head: bool,
    status: u16,
    first_byte: Option<Tick>,
    body_bytes: u64,
    /// The body of the stream's request when it is not the connection's (`Other`).
    body: Option<Bytes>,
    /// Request body bytes sent so far, and what the server's window still allows.
    sent: usize,
    send_window: i64,
    /// Body bytes the server may still send, and those consumed but not yet given back.
    recv_window: i64,
    recv_unacked: u32,
    outcome: Option<Result<Response, Fail>>,
    waker: Option<Waker>,
}

impl<S> Slot<S> {
    fn new(events: S) -> Slot<S> {
        Slot {
            events,
            id: 0,
            head: false,
            status: 0,
            first_byte: None,
            body_bytes: 0,
            body: None,
            sent: 0,
            send_window: 0,
            recv_window: 0,
            recv_unacked: 0,
            outcome: None,
            waker: None,
        }
    }

    /// Wakes the slot's task.
    fn wake(&self) {
        if let Some(w) = &self.waker {
            w.wake_by_ref();
        }
    }

    /// Starts stream `id` on the slot, keeping its receiver and its task's waker.
    fn open(&mut self, id: u32, send_window: i64, recv_window: i64) {
        self.id = id;
        self.head = false;
        self.status = 0;
        self.first_byte = None;
        self.body_bytes = 0;
        self.sent = 0;
        self.send_window = send_window;
        self.recv_window = recv_window;
        self.recv_unacked = 0;
        self.outcome = None;
    }
}

/// A header block that continues in CONTINUATION frames.
#[derive(Debug)]
struct Partial {
    stream: u32,
    end_stream: bool,
    block: Vec<u8>,
}

/// Why the connection ended, kept to fail each stream with.
#[derive(Debug, Clone)]
struct Ended {
    class: Failure,
    message: String,
}

/// `S` receives each stream's response head and payload as they arrive (one per slot); the
/// static path's `()` receives nothing and costs nothing.
#[derive(Debug)]
pub struct Conn<S = ()> {
    cfg: Config,
    request: Prepared,
    /// Frames to send, in order.
    pub out: Vec<u8>,
    decoder: Decoder,
    slots: Vec<Slot<S>>,
    next_id: u32,
    active: usize,
    /// Slots with request body left to send.
    sending: usize,
    peer_max_streams: usize,
    peer_stream_window: u32,
    peer_max_frame: usize,
    send_window: i64,
    recv_window: i64,
    recv_unacked: u32,
    partial: Option<Partial>,
    /// The fields of the response head being decoded, for a receiver that reads them
    /// (`Events::HEADS`); empty otherwise.
    head: Vec<u8>,
    /// The fields of the header block being decoded, each as a 2-byte name length, a 4-byte
    /// value length, the name and the value, for a receiver that takes them one by one
    /// (`Events::FIELDS`); empty otherwise.
    fields: Vec<u8>,
    /// The server's SETTINGS_HEADER_TABLE_SIZE, and the request's header blocks on this
    /// connection: `blocks[0]` is sent once (the next stream's), `blocks[1]` by every stream
    /// after it. Both empty until the first stream.
    peer_table: usize,
    blocks: [Vec<u8>; 2],
    /// The server's first SETTINGS arrived; the acknowledgement of our PING arrived.
    started: bool,
    settled: bool,
    /// The last stream id of the server's GOAWAY.
    goaway: Option<u32>,
    ended: Option<Ended>,
    /// The connection's owner is gone: close once no stream is open.
    pub closing: bool,
    /// Wakes the task doing the I/O; `notified` while it is already due to run.
    pub driver: Option<Waker>,
    pub notified: bool,
    /// Tasks waiting for the handshake or for a place to open a stream.
    waiters: Vec<Waker>,
}

#[cfg(test)]
impl Conn {
    /// A connection whose preface, SETTINGS, connection window and PING are queued in `out`.
    pub fn new(cfg: Config, request: Prepared) -> Conn {
        Conn::with_events(cfg, request, || ())
    }
}

impl<S: Events> Conn<S> {
    /// As [`Conn::new`], telling each slot's receiver, made by `make`, of its streams'
    /// responses.
    pub fn with_events(cfg: Config, request: Prepared, make: impl FnMut() -> S) -> Conn<S> {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(frame::PREFACE);
        frame::put_settings(
            &mut out,
            &[
                (frame::SETTINGS_ENABLE_PUSH, 0),
                (frame::SETTINGS_INITIAL_WINDOW_SIZE, cfg.stream_window),
                (frame::SETTINGS_MAX_FRAME_SIZE, cfg.max_frame),
                (
                    frame::SETTINGS_MAX_HEADER_LIST_SIZE,
                    u32::try_from(cfg.max_header_bytes).unwrap_or(u32::MAX),
                ),
            ],
        );
        if cfg.conn_window > frame::DEFAULT_WINDOW {
            frame::put_window_update(&mut out, 0, cfg.conn_window - frame::DEFAULT_WINDOW);
        }
        frame::put_ping(&mut out, 0, &PING_PAYLOAD);
        Conn {
            slots: std::iter::repeat_with(make)
                .take(cfg.slots.max(1))
                .map(Slot::new)
                .collect(),
            cfg,
            request,
            out,
            decoder: Decoder::default(),
            next_id: 1,
            active: 0,
            sending: 0,
            // One stream until the server's SETTINGS say how many it allows: a server with a
            // limit of 1 must never see two.
            peer_max_streams: 1,
            peer_stream_window: frame::DEFAULT_WINDOW,
            peer_max_frame: frame::DEFAULT_MAX_FRAME as usize,
            send_window: i64::from(frame::DEFAULT_WINDOW),
            recv_window: i64::from(cfg.conn_window.max(frame::DEFAULT_WINDOW)),
            recv_unacked: 0,
            partial: None,
            head: Vec::new(),
            fields: Vec::new(),
            peer_table: hpack::TABLE_SIZE,
            blocks: [Vec::new(), Vec::new()],
            started: false,
            settled: false,
            goaway: None,
            ended: None,
            closing: false,
            driver: None,
            notified: false,
            waiters: Vec::new(),
        }
    }

    /// The server's MAX_CONCURRENT_STREAMS (`usize::MAX` when it set none), once settled.
    pub fn max_streams(&self) -> usize {
        self.peer_max_streams
    }

    pub fn active(&self) -> usize {
        self.active
    }

    pub fn is_ended(&self) -> bool {
        self.ended.is_some()
    }

    /// Ready once the server acknowledged our PING (its SETTINGS come before that).
    pub fn poll_settled(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Fail>> {
        if let Some(e) = &self.ended {
            return Poll::Ready(Err(fail(e)));
        }
        if self.settled {
            return Poll::Ready(Ok(()));
        }
        self.wait(cx);
        Poll::Pending
    }

    pub fn ready(&self) -> Ready {
        if self.ended.is_some() || self.closing || self.goaway.is_some() {
            return Ready::Gone {
                goaway: self.goaway.is_some(),
            };
        }
        if self.next_id > MAX_STREAM_ID {
            return Ready::Gone { goaway: false };
        }
        if self.active >= self.peer_max_streams {
            return Ready::Wait;
        }
        Ready::Yes
    }

    /// Waits until `ready` is not `Wait`.
    pub fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Ready> {
        match self.ready() {
            Ready::Wait => {
                self.wait(cx);
                Poll::Pending
            }
            r => Poll::Ready(r),
        }
    }

    fn wait(&mut self, cx: &mut Context<'_>) {
        if !self.waiters.iter().any(|w| w.will_wake(cx.waker())) {
            self.waiters.push(cx.waker().clone());
        }
    }

    fn wake_waiters(&mut self) {
        for w in self.waiters.drain(..) {
            w.wake();
        }
    }

    /// Opens a stream on slot `k` and queues the request (the connection's, or `other`), once
    /// there is a place for it.
    pub fn poll_open(
        &mut self,
        k: usize,
        cx: &mut Context<'_>,
        other: Option<&Other>,
    ) -> Poll<Result<(), Fail>> {
        match self.ready() {
            Ready::Yes => {}
            Ready::Wait => {
                self.wait(cx);
                return Poll::Pending;
            }
            Ready::Gone { .. } => return Poll::Ready(Err(self.refusal())),
        }
        let id = self.next_id;
        self.next_id += 2;
        self.active += 1;
        let body = match other {
            Some(o) => !o.body.is_empty(),
            None => !self.request.body.is_empty(),
        };
        let slot = &mut self.slots[k];
        debug_assert_eq!(slot.id, 0, "slot {k} already has a stream");
        slot.open(
            id,
            i64::from(self.peer_stream_window),
            i64::from(self.cfg.stream_window),
        );
        if other.is_some() || slot.body.is_some() {
            slot.body = other.map(|o| o.body.clone());
        }
        match other {
            None => self.put_own(id, body),
            Some(o) => self.put_other(id, o),
        }
        if body {
            self.sending += 1;
            self.pump();
        }
        self.notify();
        Poll::Ready(Ok(()))
    }

    /// Queues the HEADERS of the connection's request on stream `id`.
    #[inline]
    fn put_own(&mut self, id: u32, body: bool) {
        if self.blocks[1].is_empty() {
            // The server's SETTINGS are known now: the first block indexes the fields in its
            // table, within the size it allows.
            let fields = self.request.field_slices();
            let capacity = self.peer_table.min(hpack::TABLE_SIZE);
            let update = (self.peer_table < hpack::TABLE_SIZE).then_some(self.peer_table);
            let (first, rest) = hpack::encode_indexed(&fields, capacity, update);
            self.blocks = [first, rest];
        }
        let once = !self.blocks[0].is_empty();
        let block = &self.blocks[usize::from(!once)];
        frame::put_headers(&mut self.out, id, block, !body, self.peer_max_frame);
        if once {
            self.blocks[0].clear();
        }
    }

    /// Queues the HEADERS of `other` on stream `id`. Its block leaves the server's table alone,
    /// so it is valid on any connection, except that a server that allows a smaller table than
    /// the default must hear so at the start of the first block after its SETTINGS: unless the
    /// connection's own first block (which says it) has gone, this one says it too.
    fn put_other(&mut self, id: u32, other: &Other) {
        let end = other.body.is_empty();
        let said = !self.blocks[1].is_empty() && self.blocks[0].is_empty();
        if self.peer_table >= hpack::TABLE_SIZE || said {
            frame::put_headers(&mut self.out, id, &other.block, end, self.peer_max_frame);
            return;
        }
        let mut block = hpack::size_update(self.peer_table);
        block.extend_from_slice(&other.block);
        frame::put_headers(&mut self.out, id, &block, end, self.peer_max_frame);
    }

    /// Why no stream can be opened now.
    fn refusal(&self) -> Fail {
        match (&self.ended, self.goaway) {
            (Some(e), _) => fail(e),
            (None, Some(_)) => Fail {
                class: Failure::Closed,
                cause: Cause::Refused("the server's GOAWAY came before this request was sent"),
            },
            (None, None) => Fail {
                class: Failure::Closed,
                cause: Cause::Other("the connection was closing"),
            },
        }
    }

    /// The response of slot `k`'s stream, once it is complete.
    pub fn poll_response(
        &mut self,
        k: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Response, Fail>> {
        let slot = &mut self.slots[k];
        match slot.outcome.take() {
            Some(r) => Poll::Ready(r),
            None => {
                if !slot.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    slot.waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }

    /// What slot `k`'s events receiver was told of its stream's response so far.
    pub fn events(&mut self, k: usize) -> &mut S {
        &mut self.slots[k].events
    }

    /// Abandons slot `k`'s stream (a timeout, the end of the run): RST_STREAM(CANCEL) if it is
    /// still open; its late frames are then ignored.
    pub fn cancel(&mut self, k: usize) {
        let slot = &mut self.slots[k];
        slot.outcome = None;
        let id = slot.id;
        if id != 0 {
            if self.ended.is_none() {
                frame::put_rst_stream(&mut self.out, id, frame::CANCEL);
                self.notify();
            }
            self.close_slot(k);
        }
    }

    /// Wakes the I/O task unless it is already due to run.
    pub fn notify(&mut self) {
        if !self.notified
            && let Some(w) = &self.driver
        {
            self.notified = true;
            w.wake_by_ref();
        }
    }

    fn slot_of(&self, id: u32) -> Option<usize> {
        self.slots.iter().position(|s| s.id == id)
    }

    fn close_slot(&mut self, k: usize) {
        let slot = &mut self.slots[k];
        if self.sending > 0 && slot.sent < slot.body.as_ref().unwrap_or(&self.request.body).len() {
            self.sending -= 1;
        }
        slot.id = 0;
        self.active -= 1;
        if !self.waiters.is_empty() {
            self.wake_waiters();
        }
    }

    /// Ends slot `k`'s stream with `outcome` and wakes its task.
    fn finish(&mut self, k: usize, outcome: Result<Response, Fail>) {
        self.close_slot(k);
        let slot = &mut self.slots[k];
        slot.outcome = Some(outcome);
        slot.wake();
    }

    /// A stream error: RST_STREAM with `code` and the stream fails as `H2`.
    fn reset(&mut self, k: usize, code: u32, why: &'static str) {
        frame::put_rst_stream(&mut self.out, self.slots[k].id, code);
        self.finish(
            k,
            Err(Fail {
                class: Failure::H2,
                cause: Cause::Other(why),
            }),
        );
    }

    /// A connection error found by spate: GOAWAY with `code`, every open stream fails.
    fn error(&mut self, code: u32, why: &str) {
        if self.ended.is_some() {
            return;
        }
        frame::put_goaway(&mut self.out, code);
        self.end(
            Failure::H2,
            format!(
                "HTTP/2 connection error ({}): {why}",
                frame::error_name(code)
            ),
        );
    }

    /// The connection is over (an error, a socket failure, the server's close): every open
    /// stream fails with `class`, and nothing new starts.
    pub fn end(&mut self, class: Failure, message: String) {
        if self.ended.is_some() {
            return;
        }
        let e = Ended { class, message };
        for k in 0..self.slots.len() {
            if self.slots[k].id != 0 {
                self.finish(k, Err(fail(&e)));
            }
        }
        self.ended = Some(e);
        self.wake_waiters();
    }

    /// Closes the connection politely: GOAWAY(NO_ERROR), and nothing new starts.
    pub fn close(&mut self) {
        if self.ended.is_none() {
            frame::put_goaway(&mut self.out, frame::NO_ERROR);
            self.end(Failure::Closed, "the connection was closed by spate".into());
        }
    }

    /// The socket failed or the server closed it.
    pub fn end_io(&mut self, failure: Fail) {
        let message = failure.to_string();
        self.end(failure.class, message);
    }

    /// After the driver has written all of `out`: queues more of the request bodies. True if
    /// there is something to write.
    pub fn refill(&mut self) -> bool {
        self.pump();
        !self.out.is_empty()
    }

    /// Queues DATA for request bodies, as far as the windows allow and up to `DATA_AHEAD`
    /// bytes in `out`.
    fn pump(&mut self) {
        if self.sending == 0 {
            return;
        }
        // Apart, so that a slot's body is read while `out` grows.
        let Conn {
            slots,
            out,
            request,
            send_window,
            sending,
            peer_max_frame,
            ..
        } = self;
        for slot in slots.iter_mut() {
            let body = slot.body.as_ref().unwrap_or(&request.body);
            if slot.id == 0 || slot.sent >= body.len() {
                continue;
            }
            while slot.sent < body.len() && out.len() < DATA_AHEAD {
                let room = slot.send_window.min(*send_window);
                if room <= 0 {
                    break;
                }
                let n = (body.len() - slot.sent)
                    .min(usize::try_from(room).unwrap_or(usize::MAX))
                    .min(*peer_max_frame)
                    .min(DATA_AHEAD);
                let end = slot.sent + n == body.len();
                frame::put_data(out, slot.id, &body[slot.sent..slot.sent + n], end);
                slot.sent += n;
                slot.send_window -= n as i64;
                *send_window -= n as i64;
                if end {
                    *sending -= 1;
                }
            }
        }
    }
}

fn fail(e: &Ended) -> Fail {
    Fail {
        class: e.class,
        cause: Cause::Message(e.message.clone()),
    }
}

#[cfg(test)]
mod tests;
