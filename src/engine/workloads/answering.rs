//! `spate mcp`'s receiver in a list's workload: reads each answer as it arrives
//! (`mcp::body::Reader`), notes the read that brought the call's response (its latency ends
//! there, not where a stream that goes on ends), counts the notifications before it, and judges
//! the call: only a result without `isError` is a success. A response whose status is not 2xx
//! is left to be counted by its status. Over the legacy HTTP+SSE transport the answer comes on
//! the session's stream instead, and is judged the same way. Off the static path; must not allocate per request
//! beyond what the reader keeps.

use crate::clock::Tick;
use crate::engine::protocols::watch::Observe;
use crate::engine::slots::shared::{H2Handle, Shared};
use crate::engine::workloads::list_lane::Answers;
use crate::mcp::body::{Reader, Verdict};
use crate::mcp::legacy::Heard;
use crate::mcp::rpc::Answer;
use crate::proto::{Cause, Events, Fail, Media, Response, h2};
use crate::stats::Failure;

#[derive(Default)]
pub struct Answering {
    reader: Reader,
    status: u16,
    last_read: Option<Tick>,
    /// When the read that brought the call's response happened.
    answered: Option<Tick>,
    /// When the answer came that failed the current call (a tool's error, a JSON-RPC error, an
    /// answer spate cannot read).
    failed_at: Option<Tick>,
    recorded: bool,
    /// The row the current call counts in.
    row: usize,
    /// A session's handshake on this stream (HTTP/2): what its answers say, instead of a call.
    pub handshake: Option<crate::mcp::session::Heard>,
    /// The legacy transport's session stream on this stream slot (HTTP/2): what arrives goes
    /// to the session's inbox.
    pub tap: Option<crate::mcp::legacy::Tap>,
}

impl Events for Answering {
    /// A handshake reads the session's id from the head.
    const HEADS: bool = true;

    fn read_at(&mut self, at: Tick) {
        if let Some(t) = &mut self.tap {
            return t.read_at(at);
        }
        self.last_read = Some(at);
    }

    fn head_bytes(&mut self, head: &[u8]) {
        if let Some(h) = &mut self.handshake {
            h.head_bytes(head);
        }
    }

    fn head(&mut self, status: u16, media: Media) {
        if let Some(t) = &mut self.tap {
            return t.head(status, media);
        }
        if let Some(h) = &mut self.handshake {
            return h.head(status, media);
        }
        self.status = status;
        self.reader.head(media);
    }

    fn data(&mut self, bytes: &[u8]) {
        if let Some(t) = &mut self.tap {
            return t.data(bytes);
        }
        if let Some(h) = &mut self.handshake {
            return h.data(bytes);
        }
        if self.reader.data(bytes) {
            self.answered = self.last_read;
        }
    }
}

impl Observe for Answering {
    fn begin(&mut self, _start: Tick, recorded: bool) {
        self.recorded = recorded;
    }

    const BEGINS: bool = true;

    fn tap(&mut self, tap: crate::mcp::legacy::Tap) -> bool {
        self.tap = Some(tap);
        true
    }

    fn h2_lane(h: H2Handle) -> Option<h2::Lane<Answering>> {
        match h {
            H2Handle::Answered(lane) => Some(lane),
            _ => None,
        }
    }
}

impl Answers for Answering {
    fn start(&mut self, ctx: &Shared, i: usize, id: u64) {
        self.row = Self::row(ctx, i);
        self.reader.start(id);
        self.status = 0;
        self.last_read = None;
        self.answered = None;
        self.failed_at = None;
    }

    fn judge(&mut self, ctx: &Shared, r: Response) -> Result<Response, Fail> {
        if !(200..300).contains(&r.status) {
            return Ok(r);
        }
        let verdict = self.reader.finish();
        let notes = self.reader.notifications();
        self.verdict(ctx, r, verdict, self.answered, notes)
    }

    fn heard(&mut self, ctx: &Shared, r: Response, heard: Heard) -> Result<Response, Fail> {
        self.verdict(ctx, r, heard.verdict, heard.at, heard.notifications)
    }

    fn row(ctx: &Shared, i: usize) -> usize {
        match ctx.setup.feature.list().and_then(|l| l.mcp.as_ref()) {
            Some(m) => usize::from(m.rows[i]),
            None => i,
        }
    }

    fn failed_answer(&self) -> Option<Tick> {
        self.failed_at
    }

    fn capture(&mut self) {
        self.handshake = Some(crate::mcp::session::Heard::default());
    }

    fn captured(&mut self) -> Option<crate::mcp::session::Heard> {
        self.handshake.take()
    }
}

impl Answering {
    /// The call ended as `verdict` says, its answer brought by the read at `answered`, after
    /// `notes` notifications (and progress notifications).
    fn verdict(
        &mut self,
        ctx: &Shared,
        r: Response,
        verdict: Verdict,
        answered: Option<Tick>,
        (n, progress): (u32, u32),
    ) -> Result<Response, Fail> {
        if self.recorded {
            ctx.rec.notes(self.row, (n, progress));
        }
        if !matches!(verdict, Ok(Answer::Success)) {
            self.failed_at = Some(answered.unwrap_or(r.done));
        }
        let fail = |class, cause| Err(Fail { class, cause });
        match verdict {
            Ok(Answer::Success) => Ok(Response {
                done: answered.unwrap_or(r.done),
                ..r
            }),
            Ok(Answer::ToolError) => fail(
                Failure::ToolError,
                Cause::Other("the tool reported an error (isError: true)"),
            ),
            Ok(Answer::InputRequired) => fail(
                Failure::ToolError,
                Cause::Other(
                    "the server asked for input first (resultType input_required), which a load test cannot give",
                ),
            ),
            Ok(Answer::RpcError { code, message }) => fail(
                Failure::JsonRpc,
                Cause::Message(format!("JSON-RPC error {code}: {message}")),
            ),
            Err(why) => fail(Failure::Protocol, Cause::Other(why)),
        }
    }
}
