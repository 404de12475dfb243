//! A request list (several URLs, `--urls-from-file`, `spate mcp`'s calls) as a workload over
//! any `Protocol`: each attempt sends the request the thread's picker chooses (the same one
//! again when a keep-alive close crossed it, or a server refused it unprocessed), built once
//! in each protocol's form. What the responses are told to (`Answers`) may judge them: an MCP
//! answer can fail a call on a response that came whole. The loop records each attempt by its
//! row (`Workload::ENTRIES`). Off the static path (boxed); must not build or allocate per
//! request.

use std::rc::Rc;
use std::task::{Context, Poll, ready};

use crate::clock::Tick;
use crate::engine::protocols::protocol::{Again, Form, Outcome, Protocol, Ready, Sent};
use crate::engine::protocols::watch::Observe;
use crate::engine::slots::attempt::Ended;
use crate::engine::slots::shared::{Admitted, Connected, Conversation, Listed, Shared};
use crate::engine::workloads::own_session::OwnSession;
use crate::engine::workloads::workload::Workload;
use crate::proto::{Cause, Events, Fail, Response, h2};
use crate::stats::Failure;

/// What a list's responses are told to: nothing, as on the static path, but a type of its own,
/// so that the exchange is compiled once more for this lane. Sharing the static path's `()`
/// gave its I/O a second caller, and the compiler then stopped inlining it there (32 more
/// instructions a request, `bench.sh thread-instructions`).
#[derive(Default)]
pub struct Listing;

impl Events for Listing {}

impl Observe for Listing {
    fn h2_lane(h: crate::engine::slots::shared::H2Handle) -> Option<h2::Lane<Listing>> {
        match h {
            crate::engine::slots::shared::H2Handle::Listed(lane) => Some(lane),
            _ => None,
        }
    }
}

impl Answers for Listing {}

/// What a list's responses are told to, and what becomes of them.
pub trait Answers: Observe + Sized {
    /// An attempt of the list's request `i`, with JSON-RPC id `id`, begins.
    #[inline(always)]
    fn start(&mut self, _ctx: &Shared, _i: usize, _id: u64) {}
    /// The response came whole: what it says of its request. `Err` fails the request though
    /// its connection is sound.
    #[inline(always)]
    fn judge(&mut self, _ctx: &Shared, r: Response) -> Result<Response, Fail> {
        Ok(r)
    }
    /// The legacy HTTP+SSE transport: the POST was taken (`r`), and the session's stream brought
    /// what `heard` says.
    #[inline(always)]
    fn heard(
        &mut self,
        _ctx: &Shared,
        r: Response,
        _heard: crate::mcp::legacy::Heard,
    ) -> Result<Response, Fail> {
        Ok(r)
    }
    /// The row the list's request `i` is counted in.
    #[inline(always)]
    fn row(_ctx: &Shared, i: usize) -> usize {
        i
    }
    /// When the answer that `judge` or `heard` failed came, if one did.
    #[inline(always)]
    fn failed_answer(&self) -> Option<Tick> {
        None
    }
    /// The next response is a session's handshake's: kept for `captured`, not judged.
    #[inline(always)]
    fn capture(&mut self) {}
    /// What the handshake's response said, if it was captured.
    #[inline(always)]
    fn captured(&mut self) -> Option<crate::mcp::session::Heard> {
        None
    }
}

/// A request list's attempts, over any protocol whose receiver `Answers`.
#[derive(Default)]
pub struct ListWork {
    /// The place in the list of the current attempt's request.
    place: usize,
    /// The row it is counted in.
    row: usize,
    /// The current attempt's response came whole and was judged a failure: whether its
    /// connection may carry the next.
    judged: Option<bool>,
    /// The current attempt goes again at once on this slot (a keep-alive close crossed it):
    /// the same request.
    again_now: bool,
    /// The slot's place among the thread's slots.
    index: usize,
    /// `spate mcp` with sessions: the session of the connection and its requests.
    session: Option<Rc<Conversation>>,
    /// The legacy HTTP+SSE transport: the session's stream awaits the call's answer, and the
    /// POST's acknowledgement once it came.
    awaiting: bool,
    acked: Option<Response>,
    /// Bytes the session's stream brought for the call.
    streamed: u64,
    /// The current attempt.
    adm: Option<Admitted>,
    /// `--session per-request` over HTTP/2 and HTTP/3: the call's own session.
    own: Option<OwnSession>,
}

impl ListWork {
    /// The JSON-RPC id of the current attempt's request in its session.
    fn id(&self) -> u64 {
        match &self.session {
            Some(s) => s.id(self.place),
            None => crate::mcp::id_of(self.place),
        }
    }

    /// The slot's place among the slots that share its connection (and its session).
    fn in_session(&self, ctx: &Shared) -> usize {
        self.index % ctx.setup.streams.max(1)
    }

    /// The session the slot's connection opened, if it has one.
    fn fetch_session(&mut self, ctx: &Shared) {
        self.session = ctx.sessions.borrow().get(self.index).cloned().flatten();
    }

    /// `--session per-request`: the call's session ends with it. Its connection goes to a task
    /// that asks the server to end the session (DELETE) and then closes it; the next call opens
    /// a connection and a session of its own. (The legacy transport's session ends when its
    /// stream closes.)
    fn end_session<P: Protocol>(&mut self, p: &mut P, ctx: &Shared) {
        let conn = p.take_conn(ctx);
        let delete = self.session.as_ref().and_then(|s| s.delete.clone());
        self.forget_session(ctx);
        let (Some(mut open), Some(delete)) = (conn, delete) else {
            return;
        };
        let ended = ctx.sessions_ended.clone();
        // Without a timer of its own: a server that never answers keeps the task until the
        // thread's end drops it.
        ctx.tasks.spawn(async move {
            if let Ok(true) = crate::mcp::session::end(&mut open.conn, &delete).await {
                ended.set(ended.get() + 1);
            }
        });
    }

    /// The server or the stream ended the session: the next connection opens another.
    fn forget_session(&mut self, ctx: &Shared) {
        self.session = None;
        if let Some(s) = ctx.sessions.borrow_mut().get_mut(self.index) {
            *s = None;
        }
    }

    /// The current attempt's request as the list has it.
    fn listed<'c>(&self, ctx: &'c Shared) -> &'c Listed {
        let Some(list) = ctx.setup.feature.list() else {
            unreachable!("a list's workload in a run without a list");
        };
        &list.requests[self.place]
    }
}

/// The current attempt's request as it is sent: the session's form of it, when the
/// connection has a session.
fn sent<'a>(ctx: &'a Shared, session: Option<&'a Conversation>, place: usize) -> &'a Listed {
    match session {
        Some(s) => &s.requests[place],
        None => match ctx.setup.feature.list() {
            Some(list) => &list.requests[place],
            None => unreachable!("a list's workload in a run without a list"),
        },
    }
}

/// Whether each call has a session of its own (`--session per-request`).
fn per_request(ctx: &Shared) -> bool {
    ctx.setup
        .feature
        .list()
        .and_then(|l| l.mcp.as_ref())
        .is_some_and(|m| m.session == crate::mcp::SessionMode::PerRequest)
}

impl<P: Protocol<Events: Answers>> Workload<P> for ListWork {
    const ENTRIES: bool = true;

    fn poll_ready(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        index: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Ready> {
        self.index = index;
        p.poll_ready(ctx, index, cx)
    }

    fn begin(&mut self, p: &mut P, ctx: &Shared, adm: &Admitted) -> bool {
        // A request sent again is the same request: after a crossed close on this slot, or
        // refused unprocessed on any slot of the connection (it says which).
        match (std::mem::take(&mut self.again_now), adm.retries) {
            (true, _) => {}
            (false, 0) => {
                if let Some(p) = &ctx.picker {
                    self.place = p.borrow_mut().pick();
                }
            }
            (false, _) => self.place = adm.entry as usize,
        }
        self.judged = None;
        self.awaiting = false;
        self.acked = None;
        self.streamed = 0;
        self.row = P::Events::row(ctx, self.place);
        self.adm = Some(*adm);
        if P::FORM != Form::H1 && per_request(ctx) && ctx.handshake().is_some() {
            self.own.get_or_insert_with(OwnSession::default).begin();
        }
        let open = p.begin(ctx, adm, Sent::Listed(self.listed(ctx)));
        if open {
            self.fetch_session(ctx);
        }
        let (id, place) = (self.id(), self.place);
        p.with_events(|e| e.start(ctx, place, id));
        open
    }

    fn adopt(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        opened: Connected,
        adm: &Admitted,
    ) -> Result<(), Fail> {
        p.adopt(ctx, opened, adm)?;
        self.fetch_session(ctx);
        // The new session may number its calls otherwise.
        let (id, place) = (self.id(), self.place);
        p.with_events(|e| e.start(ctx, place, id));
        Ok(())
    }

    fn poll_exchange(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Response, Fail>> {
        if let (Some(own), Some(adm)) = (&mut self.own, &self.adm) {
            let call = (self.place, crate::mcp::id_of(self.place));
            return own.poll(p, ctx, adm, call, cx);
        }
        let session = self.session.clone();
        let req = sent(ctx, session.as_deref(), self.place);
        let listening = session.as_ref().and_then(|s| s.listening.as_ref());
        if let Some(l) = listening
            && !self.awaiting
        {
            l.inbox
                .borrow_mut()
                .expect(self.in_session(ctx), self.id(), false);
            self.awaiting = true;
        }
        let res = match self.acked {
            Some(r) => r,
            None => match ready!(p.poll_send(ctx, cx, Sent::Listed(req))) {
                Ok(r) => r,
                Err(f) => return Poll::Ready(Err(f)),
            },
        };
        // The server no longer knows the session: the connection is closed, and the next
        // opens another session.
        if res.status == 404 && session.is_some() {
            self.forget_session(ctx);
            p.retire();
            return Poll::Ready(Err(Fail {
                class: Failure::SessionExpired,
                cause: Cause::Other("the server answered 404: it no longer knows the session"),
            }));
        }
        if let Some(l) = listening
            && (200..300).contains(&res.status)
        {
            self.acked = Some(res);
            let heard = ready!(l.inbox.borrow_mut().poll_answer(self.in_session(ctx), cx));
            // An answer that came before the stream ended still counts; the next call finds
            // the stream over.
            let over = heard.verdict.is_err() && l.inbox.borrow().is_over();
            // Over HTTP/1.1 the stream is a connection of its own, which only the calls count;
            // HTTP/2 and HTTP/3 count it with the connection it is a stream of.
            let mut res = res;
            if P::FORM == Form::H1 {
                self.streamed = heard.bytes;
                res.bytes_in += heard.bytes;
            }
            self.acked = None;
            self.awaiting = false;
            if over {
                // The stream ended: so did the session, and the connection goes with it.
                self.forget_session(ctx);
                p.retire();
            }
            if over {
                return Poll::Ready(Err(Fail {
                    class: Failure::SessionExpired,
                    cause: Cause::Other("the session's event stream ended before the answer"),
                }));
            }
            let keep = res.keep_alive;
            let judged = p.with_events(|e| e.heard(ctx, res, heard));
            return Poll::Ready(
                judged
                    .unwrap_or(Ok(res))
                    .inspect_err(|_| self.judged = Some(keep)),
            );
        }
        let judged = p.with_events(|e| e.judge(ctx, res));
        Poll::Ready(
            judged
                .unwrap_or(Ok(res))
                .inspect_err(|_| self.judged = Some(res.keep_alive)),
        )
    }

    fn entry(&self) -> usize {
        self.row
    }

    fn answered(&self, p: &P) -> Option<Tick> {
        p.peek_events(Answers::failed_answer).flatten()
    }

    fn sent_at(&self, p: &P) -> Option<Tick> {
        self.own
            .as_ref()
            .and_then(OwnSession::sent_at)
            .or_else(|| p.written())
    }

    fn bytes_out(&self, p: &P, ctx: &Shared) -> u64 {
        let req = sent(ctx, self.session.as_deref(), self.place);
        p.bytes_out(ctx, Sent::Listed(req))
    }

    fn bytes_in(&self, p: &P) -> u64 {
        p.bytes_in() + self.streamed
    }

    /// The protocol decides, by the list's request (its method, not the run's): one refused
    /// unprocessed waits for any slot of the connection, saying which request it is.
    fn again(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        adm: Admitted,
        fresh: bool,
        outcome: &Outcome,
    ) -> Again {
        let adm = Admitted {
            entry: self.place as u32,
            ..adm
        };
        let again = p.again(ctx, adm, fresh, outcome, Sent::Listed(self.listed(ctx)));
        self.again_now = again == Again::Now;
        again
    }

    fn ended(&mut self, p: &mut P, ctx: &Shared, ended: Ended) {
        match (ended, self.judged.take()) {
            // The response was whole: its connection goes on as after any other.
            (Ended::Failed(_), Some(keep_alive)) => {
                p.ended(ctx, Ended::Completed { keep_alive });
            }
            _ => p.ended(ctx, ended),
        }
        if ended != Ended::Interrupted && per_request(ctx) {
            self.end_session(p, ctx);
        }
    }
}
