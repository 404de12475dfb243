//! The frames that manage the connection rather than carry a response: SETTINGS (the server's
//! limits, and our acknowledgement), PING, GOAWAY and WINDOW_UPDATE. Must not allocate.

use super::{Conn, PING_PAYLOAD};
use crate::proto::Failure;
use crate::proto::h2::frame::{self, Head};
use crate::proto::h2::hpack;
use crate::proto::{Cause, Events, Fail};

impl<S: Events> Conn<S> {
    pub(super) fn settings(&mut self, h: Head, p: &[u8]) {
        if h.stream != 0 {
            return self.error(frame::PROTOCOL_ERROR, "SETTINGS on a stream");
        }
        if h.flags & frame::ACK != 0 {
            if !p.is_empty() {
                self.error(
                    frame::FRAME_SIZE_ERROR,
                    "a SETTINGS acknowledgement with a payload",
                );
            }
            return;
        }
        if !p.len().is_multiple_of(6) {
            return self.error(
                frame::FRAME_SIZE_ERROR,
                "SETTINGS of a length not a multiple of 6",
            );
        }
        if !self.started {
            self.started = true;
            // The server's SETTINGS may not name a limit: then there is none.
            self.peer_max_streams = usize::MAX;
        }
        for s in p.chunks_exact(6) {
            let id = u16::from_be_bytes([s[0], s[1]]);
            let value = u32::from_be_bytes([s[2], s[3], s[4], s[5]]);
            match id {
                frame::SETTINGS_MAX_CONCURRENT_STREAMS => {
                    self.peer_max_streams = usize::try_from(value).unwrap_or(usize::MAX);
                }
                frame::SETTINGS_INITIAL_WINDOW_SIZE => {
                    if value > frame::MAX_WINDOW {
                        return self
                            .error(frame::FLOW_CONTROL_ERROR, "an initial window above 2^31-1");
                    }
                    let delta = i64::from(value) - i64::from(self.peer_stream_window);
                    self.peer_stream_window = value;
                    for slot in self.slots.iter_mut().filter(|s| s.id != 0) {
                        slot.send_window += delta;
                    }
                }
                frame::SETTINGS_MAX_FRAME_SIZE => {
                    if !(frame::DEFAULT_MAX_FRAME..=(1 << 24) - 1).contains(&value) {
                        return self.error(frame::PROTOCOL_ERROR, "a max frame size out of range");
                    }
                    self.peer_max_frame = value as usize;
                }
                frame::SETTINGS_HEADER_TABLE_SIZE => {
                    let size = usize::try_from(value).unwrap_or(usize::MAX);
                    if size != self.peer_table && !self.blocks[1].is_empty() {
                        // Entries may be evicted now: empty the table (a size update to 0,
                        // always allowed) and send plain literals from here on.
                        let plain = hpack::encode(&self.request.field_slices());
                        self.blocks = [[&[0x20u8][..], &plain].concat(), plain];
                    }
                    self.peer_table = size;
                }
                // The rest is advice, or for servers.
                _ => {}
            }
        }
        frame::put_head(&mut self.out, 0, frame::SETTINGS, frame::ACK, 0);
        if !self.waiters.is_empty() {
            self.wake_waiters();
        }
    }

    pub(super) fn ping(&mut self, h: Head, p: &[u8]) {
        let Ok(payload) = <&[u8; 8]>::try_from(p) else {
            return self.error(frame::FRAME_SIZE_ERROR, "PING of the wrong size");
        };
        if h.stream != 0 {
            return self.error(frame::PROTOCOL_ERROR, "PING on a stream");
        }
        if h.flags & frame::ACK == 0 {
            frame::put_ping(&mut self.out, frame::ACK, payload);
        } else if *payload == PING_PAYLOAD && !self.settled {
            self.settled = true;
            self.wake_waiters();
        }
    }

    pub(super) fn goaway(&mut self, h: Head, p: &[u8]) {
        if h.stream != 0 {
            return self.error(frame::PROTOCOL_ERROR, "GOAWAY on a stream");
        }
        if p.len() < 8 {
            return self.error(frame::FRAME_SIZE_ERROR, "GOAWAY shorter than 8 bytes");
        }
        let last = u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & frame::MAX_WINDOW;
        let code = u32::from_be_bytes([p[4], p[5], p[6], p[7]]);
        self.goaway = Some(self.goaway.map_or(last, |l| l.min(last)));
        if code != frame::NO_ERROR {
            let message = format!("the server sent GOAWAY ({})", frame::error_name(code));
            return self.end(Failure::H2, message);
        }
        // A graceful GOAWAY refuses the streams above its last stream id.
        for k in 0..self.slots.len() {
            if self.slots[k].id > last {
                self.finish(
                    k,
                    Err(Fail {
                        class: Failure::Closed,
                        cause: Cause::Refused(
                            "the server's graceful GOAWAY came before it processed this stream",
                        ),
                    }),
                );
            }
        }
        self.wake_waiters();
    }

    pub(super) fn window_update(&mut self, h: Head, p: &[u8]) {
        let Ok(b) = <[u8; 4]>::try_from(p) else {
            return self.error(frame::FRAME_SIZE_ERROR, "WINDOW_UPDATE of the wrong size");
        };
        let inc = i64::from(u32::from_be_bytes(b) & frame::MAX_WINDOW);
        let max = i64::from(frame::MAX_WINDOW);
        if h.stream == 0 {
            if inc == 0 {
                return self.error(frame::PROTOCOL_ERROR, "a WINDOW_UPDATE of 0");
            }
            self.send_window += inc;
            if self.send_window > max {
                self.error(
                    frame::FLOW_CONTROL_ERROR,
                    "a connection window above 2^31-1",
                );
            }
            return;
        }
        if self.idle(h.stream) {
            return self.error(
                frame::PROTOCOL_ERROR,
                "WINDOW_UPDATE on a stream never opened",
            );
        }
        let Some(k) = self.slot_of(h.stream) else {
            return;
        };
        if inc == 0 {
            return self.reset(k, frame::PROTOCOL_ERROR, "a WINDOW_UPDATE of 0");
        }
        let slot = &mut self.slots[k];
        slot.send_window += inc;
        if slot.send_window > max {
            self.reset(k, frame::FLOW_CONTROL_ERROR, "a stream window above 2^31-1");
        }
    }
}
