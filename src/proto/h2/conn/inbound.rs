//! What the server sends, frame by frame: `Conn::receive`, its dispatch, and the frames that
//! carry responses (HEADERS, CONTINUATION, DATA, RST_STREAM; the connection's own frames are in
//! `control`), with the checks that make a frame a connection or a stream error (RFC 9113,
//! section 6). Must not allocate for a frame that ends a response.

use super::{Conn, MAX_QUEUED, Partial};
use crate::clock::Tick;
use crate::proto::Failure;
use crate::proto::h2::frame::{self, Head};
use crate::proto::{Cause, Events, Fail, Media, Response};

impl<S: Events> Conn<S> {
    /// Processes the complete frames at the start of `buf`, read at `now`; returns how many
    /// bytes they took. A frame longer than we allow ends the connection at its head.
    pub fn receive(&mut self, buf: &[u8], now: Tick) -> usize {
        let mut at = 0;
        while self.ended.is_none() {
            let Some(h) = buf.get(at..at + frame::HEAD_LEN) else {
                break;
            };
            let head = Head::parse(h.try_into().expect("nine bytes"));
            if !self.started && h.starts_with(b"HTTP/") {
                self.end(
                    Failure::H2,
                    "the server answered in HTTP/1.x: it does not speak HTTP/2 with prior \
                     knowledge (h2c)"
                        .into(),
                );
                break;
            }
            if head.len > self.cfg.max_frame as usize {
                self.error(
                    frame::FRAME_SIZE_ERROR,
                    "a frame larger than SETTINGS_MAX_FRAME_SIZE",
                );
                break;
            }
            let Some(payload) = buf.get(at + frame::HEAD_LEN..at + frame::HEAD_LEN + head.len)
            else {
                break;
            };
            at += frame::HEAD_LEN + head.len;
            self.frame(head, payload, now);
        }
        self.pump();
        if self.out.len() > MAX_QUEUED {
            self.error(
                frame::ENHANCE_YOUR_CALM,
                "the server does not read what it makes spate send",
            );
        }
        at
    }

    /// The room `receive` may need to see the next frame whole: its head, then its length.
    pub fn wanted(&self, buf: &[u8]) -> usize {
        match buf.get(..frame::HEAD_LEN) {
            Some(h) => frame::HEAD_LEN + Head::parse(h.try_into().expect("nine bytes")).len,
            None => frame::HEAD_LEN,
        }
    }

    fn frame(&mut self, h: Head, p: &[u8], now: Tick) {
        if let Some(partial) = &self.partial
            && (h.kind != frame::CONTINUATION || h.stream != partial.stream)
        {
            return self.error(frame::PROTOCOL_ERROR, "a header block was interrupted");
        }
        if !self.started && h.kind != frame::SETTINGS {
            return self.error(
                frame::PROTOCOL_ERROR,
                "the server did not start with SETTINGS",
            );
        }
        match h.kind {
            frame::DATA => self.data(h, p, now),
            frame::HEADERS => self.headers(h, p, now),
            frame::CONTINUATION => self.continuation(h, p, now),
            frame::RST_STREAM => self.rst_stream(h, p),
            frame::SETTINGS => self.settings(h, p),
            frame::PING => self.ping(h, p),
            frame::GOAWAY => self.goaway(h, p),
            frame::WINDOW_UPDATE => self.window_update(h, p),
            frame::PRIORITY if h.stream == 0 => {
                self.error(frame::PROTOCOL_ERROR, "PRIORITY on stream 0")
            }
            frame::PUSH_PROMISE => self.error(
                frame::PROTOCOL_ERROR,
                "PUSH_PROMISE although push is disabled",
            ),
            // PRIORITY is advice, and unknown frame types are ignored (RFC 9113, 4.1).
            _ => {}
        }
    }

    /// Whether `id` names a stream spate never opened (an error to receive frames on).
    pub(super) fn idle(&self, id: u32) -> bool {
        id == 0 || id.is_multiple_of(2) || id >= self.next_id
    }

    /// Strips padding from a DATA or HEADERS payload.
    fn unpad<'a>(&mut self, h: Head, p: &'a [u8]) -> Option<&'a [u8]> {
        if h.flags & frame::PADDED == 0 {
            return Some(p);
        }
        let pad = p.first().map_or(usize::MAX, |&b| usize::from(b));
        if pad >= p.len() {
            self.error(frame::PROTOCOL_ERROR, "padding longer than the frame");
            return None;
        }
        Some(&p[1..p.len() - pad])
    }

    fn data(&mut self, h: Head, p: &[u8], now: Tick) {
        if self.idle(h.stream) {
            return self.error(
                frame::PROTOCOL_ERROR,
                "DATA on a stream that was never opened",
            );
        }
        // Flow control counts the whole payload, padding included.
        let len = p.len() as u32;
        self.recv_window -= i64::from(len);
        if self.recv_window < 0 {
            return self.error(
                frame::FLOW_CONTROL_ERROR,
                "DATA beyond the connection window",
            );
        }
        self.recv_unacked += len;
        if self.recv_unacked >= self.cfg.conn_window / 2 {
            frame::put_window_update(&mut self.out, 0, self.recv_unacked);
            self.recv_window += i64::from(self.recv_unacked);
            self.recv_unacked = 0;
        }
        let Some(body) = self.unpad(h, p) else {
            return;
        };
        let Some(k) = self.slot_of(h.stream) else {
            return; // a stream spate cancelled
        };
        let end = h.flags & frame::END_STREAM != 0;
        let window = self.cfg.stream_window;
        let slot = &mut self.slots[k];
        if !slot.head {
            return self.reset(k, frame::PROTOCOL_ERROR, "DATA before the response head");
        }
        slot.body_bytes += body.len() as u64;
        slot.events.read_at(now);
        slot.events.data(body);
        slot.recv_window -= i64::from(len);
        if slot.recv_window < 0 {
            return self.reset(
                k,
                frame::FLOW_CONTROL_ERROR,
                "DATA beyond the stream window",
            );
        }
        if end {
            return self.complete(k, now);
        }
        if slot.events.enough() {
            return self.cut(k, now);
        }
        if S::WATCHES {
            slot.wake();
        }
        slot.recv_unacked += len;
        if slot.recv_unacked >= window / 2 {
            let (id, n) = (slot.id, slot.recv_unacked);
            slot.recv_window += i64::from(n);
            slot.recv_unacked = 0;
            frame::put_window_update(&mut self.out, id, n);
        }
    }

    /// The receiver has seen enough of slot `k`'s response (`Events::enough`): the rest of the
    /// stream is cancelled and the response stands as it is. Frames still on their way for it
    /// are ignored, as for any stream spate cancelled; the connection carries on.
    fn cut(&mut self, k: usize, now: Tick) {
        frame::put_rst_stream(&mut self.out, self.slots[k].id, frame::CANCEL);
        self.complete(k, now);
    }

    fn complete(&mut self, k: usize, now: Tick) {
        let s = &self.slots[k];
        let response = Response {
            status: s.status,
            keep_alive: true,
            body_bytes: s.body_bytes,
            bytes_in: 0,
            first_byte: s.first_byte,
            done: now,
        };
        self.finish(k, Ok(response));
    }

    fn headers(&mut self, h: Head, p: &[u8], now: Tick) {
        if self.idle(h.stream) {
            return self.error(
                frame::PROTOCOL_ERROR,
                "HEADERS on a stream spate never opened",
            );
        }
        let Some(mut p) = self.unpad(h, p) else {
            return;
        };
        if h.flags & frame::PRIORITY_FLAG != 0 {
            let Some(rest) = p.get(5..) else {
                return self.error(
                    frame::FRAME_SIZE_ERROR,
                    "HEADERS too short for its priority",
                );
            };
            p = rest;
        }
        let end_stream = h.flags & frame::END_STREAM != 0;
        if h.flags & frame::END_HEADERS != 0 {
            return self.block(h.stream, end_stream, p, now);
        }
        self.partial = Some(Partial {
            stream: h.stream,
            end_stream,
            block: p.to_vec(),
        });
        self.check_partial();
    }

    fn continuation(&mut self, h: Head, p: &[u8], now: Tick) {
        let Some(partial) = &mut self.partial else {
            return self.error(frame::PROTOCOL_ERROR, "CONTINUATION without HEADERS");
        };
        partial.block.extend_from_slice(p);
        if h.flags & frame::END_HEADERS != 0 {
            let partial = self.partial.take().expect("checked above");
            return self.block(partial.stream, partial.end_stream, &partial.block, now);
        }
        self.check_partial();
    }

    fn check_partial(&mut self) {
        if self
            .partial
            .as_ref()
            .is_some_and(|p| p.block.len() > self.cfg.max_header_bytes)
        {
            self.partial = None;
            let why = format!(
                "a response header block larger than {} bytes",
                self.cfg.max_header_bytes
            );
            self.error(frame::ENHANCE_YOUR_CALM, &why);
        }
    }

    /// A complete header block on an open or cancelled stream.
    fn block(&mut self, stream: u32, end_stream: bool, block: &[u8], now: Tick) {
        let mut status: Option<u16> = None;
        let mut media = Media::Other;
        let mut list = 0usize;
        // A receiver that reads the head's fields (a script's `response()`) gets them as
        // HTTP/1.1 writes a head, after a status line, within the header list's bound.
        let head = &mut self.head;
        if S::HEADS {
            // Room for the status line, written in front once the status is known.
            head.clear();
            head.extend_from_slice(b"HTTP/2 000\r\n");
        }
        let fields = &mut self.fields;
        if S::FIELDS {
            fields.clear();
        }
        let decoded = self.decoder.decode(block, |name, value| {
            list += name.len() + value.len() + 32;
            if name == b":status" {
                status = parse_status(value);
            } else if name == b"content-type" {
                media = Media::of(value);
            }
            if S::HEADS && !name.starts_with(b":") && list <= self.cfg.max_header_bytes {
                head.extend_from_slice(name);
                head.extend_from_slice(b": ");
                head.extend_from_slice(value);
                head.extend_from_slice(b"\r\n");
            }
            // Lengths fit: the list is bounded far below 64 KiB names and 4 GiB values.
            if S::FIELDS && !name.starts_with(b":") && list <= self.cfg.max_header_bytes {
                fields.extend_from_slice(&(name.len() as u16).to_be_bytes());
                fields.extend_from_slice(&(value.len() as u32).to_be_bytes());
                fields.extend_from_slice(name);
                fields.extend_from_slice(value);
            }
        });
        if let Err(e) = decoded {
            return self.error(frame::COMPRESSION_ERROR, &e.to_string());
        }
        let Some(k) = self.slot_of(stream) else {
            return; // cancelled: the block only kept the decoder in step
        };
        if list > self.cfg.max_header_bytes {
            return self.reset(
                k,
                frame::PROTOCOL_ERROR,
                "the response header list is larger than spate accepts",
            );
        }
        let slot = &mut self.slots[k];
        if slot.head {
            // Trailers end the stream.
            if !end_stream {
                return self.reset(k, frame::PROTOCOL_ERROR, "trailers without END_STREAM");
            }
            if S::FIELDS {
                tell_fields(&mut slot.events, &self.fields);
            }
            return self.complete(k, now);
        }
        match status {
            None => self.reset(
                k,
                frame::PROTOCOL_ERROR,
                "a response without a valid :status",
            ),
            // Informational (1xx) heads come before the response.
            Some(100..=199) if !end_stream => {}
            Some(s) => {
                slot.head = true;
                slot.status = s;
                slot.first_byte = Some(now);
                slot.events.read_at(now);
                if S::HEADS {
                    // A status is three digits (`parse_status`); the buffer is the
                    // connection's, so no head allocates once it has grown.
                    let digits = [s / 100, s / 10 % 10, s % 10].map(|d| b'0' + d as u8);
                    self.head[7..10].copy_from_slice(&digits);
                    self.head.extend_from_slice(b"\r\n");
                    slot.events.head_bytes(&self.head);
                }
                if S::FIELDS {
                    tell_fields(&mut slot.events, &self.fields);
                }
                slot.events.head(s, media);
                if end_stream {
                    self.complete(k, now);
                } else if slot.events.enough() {
                    self.cut(k, now);
                } else if S::WATCHES {
                    slot.wake();
                }
            }
        }
    }

    fn rst_stream(&mut self, h: Head, p: &[u8]) {
        let Ok(code) = <[u8; 4]>::try_from(p) else {
            return self.error(frame::FRAME_SIZE_ERROR, "RST_STREAM of the wrong size");
        };
        if self.idle(h.stream) {
            return self.error(frame::PROTOCOL_ERROR, "RST_STREAM on a stream never opened");
        }
        let code = u32::from_be_bytes(code);
        if let Some(k) = self.slot_of(h.stream) {
            let message = format!("the server reset the stream ({})", frame::error_name(code));
            self.finish(
                k,
                Err(Fail {
                    class: Failure::Reset,
                    cause: Cause::Message(message),
                }),
            );
        }
    }
}

/// Tells `events` each field `fields` holds (as `block` wrote them).
fn tell_fields<S: Events>(events: &mut S, fields: &[u8]) {
    let mut rest = fields;
    while let [a, b, c, d, e, f, tail @ ..] = rest {
        let n = usize::from(u16::from_be_bytes([*a, *b]));
        let v = u32::from_be_bytes([*c, *d, *e, *f]) as usize;
        let (Some(name), Some(value)) = (tail.get(..n), tail.get(n..n + v)) else {
            return;
        };
        events.field(name, value);
        rest = &tail[n + v..];
    }
}

fn parse_status(v: &[u8]) -> Option<u16> {
    match v {
        [a @ b'1'..=b'9', b @ b'0'..=b'9', c @ b'0'..=b'9'] => {
            Some(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => None,
    }
}
