//! A request list (several URLs, `--urls-from-file`, `spate mcp`'s calls): HTTP/1.1 as
//! `H1Lane`, each attempt sending the request the thread's picker chooses (the same one again
//! when a keep-alive close crossed it), from bytes built once. What the responses are told to
//! (`Answers`) may judge them: an MCP answer can fail a call on a response that came whole. The
//! loop records each attempt by its row (`Lane::ENTRIES`). Off the static path (boxed); must not
//! build or allocate per request.

use std::rc::Rc;
use std::task::{Context, Poll, ready};

use super::attempt::Ended;
use super::h1_lane::H1Lane;
use super::lane::{Again, Lane, Outcome, Ready};
use super::shared::{Admitted, Connected, Conversation, Listed, OpenConn, Shared};
use super::slot::Slot;
use super::watch::Observe;
use crate::clock::Tick;
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
    fn h2_lane(_: super::shared::H2Handle) -> Option<h2::Lane<Listing>> {
        None
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
}

pub struct ListLane<E> {
    inner: H1Lane<E>,
    /// The place in the list of the current attempt's request.
    place: usize,
    /// The row it is counted in.
    row: usize,
    /// The current attempt's response came whole and was judged a failure: whether its
    /// connection may carry the next.
    judged: Option<bool>,
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
}

impl<E: Answers> ListLane<E> {
    pub fn new(ctx: &Shared, conn: OpenConn, events: E) -> ListLane<E> {
        ListLane {
            inner: H1Lane::new(ctx, conn, events),
            place: 0,
            row: 0,
            judged: None,
            index: 0,
            session: None,
            awaiting: false,
            acked: None,
            streamed: 0,
        }
    }

    /// The JSON-RPC id of the current attempt's request in its session.
    fn id(&self) -> u64 {
        match &self.session {
            Some(s) => s.id(self.place),
            None => crate::mcp::id_of(self.place),
        }
    }

    /// The session the slot's connection opened, if it has one.
    fn fetch_session(&mut self, ctx: &Shared) {
        self.session = ctx.sessions.borrow().get(self.index).cloned().flatten();
    }

    /// `--session per-request`: the call's session ends with it. Its connection goes to a task
    /// that asks the server to end the session (DELETE) and then closes it; the next call opens
    /// a connection and a session of its own. (The legacy transport's session ends when its
    /// stream closes.)
    fn end_session(&mut self, ctx: &Shared) {
        let conn = self.inner.take_conn(ctx);
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

    fn listed<'c>(&self, ctx: &'c Shared) -> &'c Listed {
        let Some(list) = &ctx.setup.list else {
            unreachable!("a list lane in a run without a list");
        };
        &list.requests[self.place]
    }

    fn bytes<'c>(&self, ctx: &'c Shared) -> &'c [u8] {
        let l = self.listed(ctx);
        match self.inner.closing() {
            true => &l.request_close,
            false => &l.request,
        }
    }
}

/// Whether each call has a session of its own (`--session per-request`).
fn per_request(ctx: &Shared) -> bool {
    ctx.setup
        .list
        .as_ref()
        .and_then(|l| l.mcp.as_ref())
        .is_some_and(|m| m.session == crate::mcp::SessionMode::PerRequest)
}

impl<E: Answers> Lane for ListLane<E> {
    const ENTRIES: bool = true;

    fn poll_ready(&mut self, _: &Shared, index: usize, _: &mut Context<'_>) -> Poll<Ready> {
        self.index = index;
        Poll::Ready(Ready::Go)
    }

    fn begin(&mut self, ctx: &Shared, adm: &Admitted) -> bool {
        // A request sent again after a crossed close is the same request.
        if adm.retries == 0
            && let Some(p) = &ctx.picker
        {
            self.place = p.borrow_mut().pick();
        }
        self.judged = None;
        self.awaiting = false;
        self.acked = None;
        self.streamed = 0;
        self.row = E::row(ctx, self.place);
        let head = self.listed(ctx).head_request;
        let open = self.inner.start(ctx, adm, head);
        if open {
            self.fetch_session(ctx);
        }
        let id = self.id();
        self.inner.events_mut().start(ctx, self.place, id);
        open
    }

    fn adopt(&mut self, ctx: &Shared, opened: Connected, adm: &Admitted) -> Result<(), Fail> {
        self.inner.adopt(ctx, opened, adm)?;
        self.fetch_session(ctx);
        // The new session may number its calls otherwise.
        let id = self.id();
        self.inner.events_mut().start(ctx, self.place, id);
        Ok(())
    }

    fn poll_exchange(
        &mut self,
        ctx: &Shared,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Response, Fail>> {
        let session = self.session.clone();
        let bytes = match &session {
            Some(s) => match self.inner.closing() {
                true => &s.requests_close[self.place][..],
                false => &s.requests[self.place][..],
            },
            None => self.bytes(ctx),
        };
        let listening = session.as_ref().and_then(|s| s.listening.as_ref());
        if let Some(l) = listening
            && !self.awaiting
        {
            l.inbox.borrow_mut().expect(self.id(), false);
            self.awaiting = true;
        }
        let res = match self.acked {
            Some(r) => r,
            None => match ready!(self.inner.exchange_with(ctx, cx, bytes)) {
                Ok(r) => r,
                Err(f) => return Poll::Ready(Err(f)),
            },
        };
        // The server no longer knows the session: the connection is closed, and the next
        // opens another session.
        if res.status == 404 && session.is_some() {
            self.forget_session(ctx);
            return Poll::Ready(Err(Fail {
                class: Failure::SessionExpired,
                cause: Cause::Other("the server answered 404: it no longer knows the session"),
            }));
        }
        if let Some(l) = listening
            && (200..300).contains(&res.status)
        {
            self.acked = Some(res);
            let heard = ready!(l.inbox.borrow_mut().poll_answer(cx));
            // An answer that came before the stream ended still counts; the next call finds
            // the stream over.
            let over = heard.verdict.is_err() && l.inbox.borrow().is_over();
            self.acked = None;
            self.awaiting = false;
            if over {
                // The stream ended: so did the session, and the connection goes with it.
                self.forget_session(ctx);
            }
            if over {
                return Poll::Ready(Err(Fail {
                    class: Failure::SessionExpired,
                    cause: Cause::Other("the session's event stream ended before the answer"),
                }));
            }
            let keep = res.keep_alive;
            return Poll::Ready(
                self.inner
                    .events_mut()
                    .heard(ctx, res, heard)
                    .inspect_err(|_| self.judged = Some(keep)),
            );
        }
        Poll::Ready(
            self.inner
                .events_mut()
                .judge(ctx, res)
                .inspect_err(|_| self.judged = Some(res.keep_alive)),
        )
    }

    fn waiting(&self, slot: &Slot) {
        self.inner.waiting(slot);
    }

    fn entry(&self) -> usize {
        self.row
    }

    fn answered(&self) -> Option<Tick> {
        self.inner.events().failed_answer()
    }

    fn written(&self) -> Option<Tick> {
        self.inner.written()
    }

    fn bytes_out(&self, ctx: &Shared) -> u64 {
        match &self.session {
            Some(s) => match self.inner.closing() {
                true => s.requests_close[self.place].len() as u64,
                false => s.requests[self.place].len() as u64,
            },
            None => self.bytes(ctx).len() as u64,
        }
    }

    fn bytes_in(&self) -> u64 {
        self.inner.bytes_in() + self.streamed
    }

    /// Only a request whose method may be repeated goes again (the run's own check is for
    /// the run's method, not the list's).
    fn again(&mut self, ctx: &Shared, adm: Admitted, fresh: bool, outcome: &Outcome) -> Again {
        match self.listed(ctx).retry_safe {
            true => self.inner.again(ctx, adm, fresh, outcome),
            false => Again::No,
        }
    }

    fn ended(&mut self, ctx: &Shared, ended: Ended) {
        match (ended, self.judged.take()) {
            // The response was whole: its connection goes on as after any other.
            (Ended::Failed(_), Some(keep_alive)) => {
                self.inner.ended(ctx, Ended::Completed { keep_alive });
            }
            _ => self.inner.ended(ctx, ended),
        }
        if ended != Ended::Interrupted && per_request(ctx) {
            self.end_session(ctx);
        }
    }

    fn finish(&mut self, ctx: &Shared, index: usize) {
        self.inner.finish(ctx, index);
    }
}
