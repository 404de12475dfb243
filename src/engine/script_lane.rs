//! `-s` with `delay()`, `request()` or `response()`: an HTTP/1.1 slot whose thread's script is
//! called around each attempt, as wrk calls it: `delay()` before the attempt is admitted (the
//! wait is not the request's latency), `request()` once it is, `response()` when it completes.
//! A `request()` that returns several requests is a pipelined batch: written at once, its
//! other requests are admitted with it and each reads one response, timed from the batch's
//! start. The exchange itself is `H1Lane`'s. Off the static path (boxed); must not account
//! for anything but the batch requests that never got their turn.

use std::collections::VecDeque;
use std::rc::Rc;
use std::task::{Context, Poll, ready};

use super::attempt::Ended;
use super::h1_lane::H1Lane;
use super::lane::{Again, Lane, Outcome, Ready};
use super::protocol::Protocol;
use super::shared::{Admitted, Connected, OpenConn, Shared};
use super::slot::{Cancel, Slot};
use super::watch::Observe;
use crate::clock::Tick;
use crate::proto::{Cause, Events, Fail, Media, Response, h2};
use crate::script::{MAX_HEARD_BODY, Made, Worker};
use crate::stats::Failure;

/// What a response tells `response()`: its status, head and body, kept only when the script
/// defines it.
#[derive(Default)]
pub struct Heard {
    keep: bool,
    status: u16,
    head: Vec<u8>,
    body: Vec<u8>,
}

impl Events for Heard {
    const HEADS: bool = true;

    fn head_bytes(&mut self, head: &[u8]) {
        if self.keep {
            self.head.clear();
            self.head.extend_from_slice(head);
        }
    }

    fn head(&mut self, status: u16, _media: Media) {
        self.status = status;
    }

    fn data(&mut self, bytes: &[u8]) {
        if self.keep {
            let room = MAX_HEARD_BODY.saturating_sub(self.body.len());
            self.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
    }
}

impl Observe for Heard {
    fn h2_lane(_: super::shared::H2Handle) -> Option<h2::Lane<Heard>> {
        None
    }

    fn begin(&mut self, _start: Tick, _recorded: bool) {
        self.status = 0;
        self.head.clear();
        self.body.clear();
    }
}

/// Which kind of attempt `begin` starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// A new attempt: the script makes its request.
    New,
    /// A later request of the current batch: it reads its response.
    Follower,
}

pub struct ScriptLane {
    inner: H1Lane<Heard>,
    worker: Rc<Worker>,
    /// The request `request()` made; unused when the script has none.
    made: Made,
    /// Requests of the current batch written with it (fewer than it has when the run admitted
    /// fewer), and the one whose response the attempt reads.
    sent: usize,
    at: usize,
    /// Later requests of the current batch, admitted with it.
    followers: VecDeque<Admitted>,
    next: Turn,
    /// `delay()` asked for a wait that is under way.
    waiting: bool,
    /// Why the current attempt ends without an exchange.
    doomed: Option<Fail>,
    /// The slot this lane serves (known from the first `poll_ready`).
    index: usize,
}

impl ScriptLane {
    pub fn new(ctx: &Shared, conn: OpenConn, worker: Rc<Worker>) -> ScriptLane {
        let heard = Heard {
            keep: worker.hears(),
            ..Heard::default()
        };
        ScriptLane {
            inner: H1Lane::new(ctx, conn, heard),
            worker,
            made: Made::default(),
            sent: 1,
            at: 0,
            followers: VecDeque::new(),
            next: Turn::New,
            waiting: false,
            doomed: None,
            index: 0,
        }
    }

    /// The script stopped its thread, failed, or was interrupted at the end of the run: the
    /// thread stops (and, on a failure or an interruption, the run).
    fn check(&mut self, ctx: &Shared) {
        if self.worker.stopped() {
            ctx.halt(self.worker.failed() || self.worker.interrupted());
        }
    }

    fn doom(&mut self, class: Failure, why: &'static str) {
        self.doomed = Some(Fail {
            class,
            cause: Cause::Other(why),
        });
    }

    /// A new attempt: the script's request, and the rest of its batch admitted with it.
    fn make(&mut self, ctx: &Shared, adm: &Admitted) {
        self.at = 0;
        self.sent = 1;
        if !self.worker.makes_requests() {
            return;
        }
        if !self.worker.request(&mut self.made) {
            self.check(ctx);
            match self.worker.interrupted() {
                // The run is over: the attempt ends as interrupted, nothing sent.
                true => ctx.slots[self.index].fire(Cancel::Interrupted),
                false => self.doom(Failure::Write, "the script failed"),
            }
            return;
        }
        let n = self.made.batch.len();
        if n > 1 && ctx.gate.pacer.get().is_some() {
            self.worker.fail(format!(
                "--script: request() returned {n} requests in one string; pipelining needs the \
                 closed model (without -q/--rate)"
            ));
            self.check(ctx);
            self.doom(Failure::Write, "the script failed");
            return;
        }
        while self.sent < n {
            let Some(more) = ctx.admit() else { break };
            self.followers.push_back(Admitted {
                start: adm.start,
                ..more
            });
            self.sent += 1;
        }
    }
}

/// The bytes an attempt writes: the batch's first `sent` requests for its first (`at` 0),
/// nothing for a later one, or the thread's `prepared` request when the script makes none.
fn bytes<'a>(
    worker: &Worker,
    made: &'a Made,
    sent: usize,
    at: usize,
    prepared: &'a [u8],
) -> &'a [u8] {
    match (worker.makes_requests(), at) {
        (true, 0) => made.batch.first(sent),
        (true, _) => &[],
        (false, _) => prepared,
    }
}

impl Lane for ScriptLane {
    fn poll_ready(&mut self, ctx: &Shared, index: usize, cx: &mut Context<'_>) -> Poll<Ready> {
        self.index = index;
        if !self.followers.is_empty() {
            return Poll::Ready(Ready::Go);
        }
        if self.worker.stopped() {
            return Poll::Ready(Ready::Over);
        }
        if self.worker.delays() && !self.waiting {
            match self.worker.delay() {
                None => {
                    self.check(ctx);
                    return Poll::Ready(Ready::Over);
                }
                Some(d) if d.is_zero() => {}
                Some(d) => {
                    ctx.dial.backoffs.push(Tick::now().after(d), index);
                    self.waiting = true;
                }
            }
        }
        if self.waiting {
            let over = ready!(ctx.slots[index].poll_wait(cx));
            self.waiting = false;
            if !over {
                return Poll::Ready(Ready::Over);
            }
        }
        Poll::Ready(Ready::Go)
    }

    fn retry(&mut self) -> Option<Admitted> {
        let adm = self.followers.pop_front()?;
        self.next = Turn::Follower;
        Some(adm)
    }

    fn begin(&mut self, ctx: &Shared, adm: &Admitted) -> bool {
        let turn = std::mem::replace(&mut self.next, Turn::New);
        match turn {
            // The same attempt again after a keep-alive close crossed it: the same bytes.
            Turn::New if adm.retries > 0 => {}
            Turn::New => self.make(ctx, adm),
            Turn::Follower => self.at += 1,
        }
        let head = match self.worker.makes_requests() {
            true => self
                .made
                .batch
                .requests
                .get(self.at)
                .is_some_and(|&(_, head)| head),
            false => ctx.setup.head_request,
        };
        let open = self.inner.start(ctx, adm, head);
        if turn == Turn::Follower && !open {
            self.doom(
                Failure::Closed,
                "the connection that carried this pipelined request closed before its response",
            );
        }
        open || self.doomed.is_some()
    }

    fn adopt(&mut self, ctx: &Shared, opened: Connected, adm: &Admitted) -> Result<(), Fail> {
        Protocol::adopt(&mut self.inner, ctx, opened, adm)
    }

    fn poll_exchange(
        &mut self,
        ctx: &Shared,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Response, Fail>> {
        if let Some(fail) = self.doomed.take() {
            return Poll::Ready(Err(fail));
        }
        let prepared = self.inner.prepared(ctx);
        let request = bytes(&self.worker, &self.made, self.sent, self.at, prepared);
        let r = ready!(self.inner.exchange_with(ctx, cx, request));
        if let Ok(res) = &r
            && self.worker.hears()
        {
            let worker = &self.worker;
            self.inner
                .peek_events(|heard| worker.response(res.status, &heard.head, &heard.body));
        }
        self.check(ctx);
        Poll::Ready(r)
    }

    fn waiting(&self, slot: &Slot) {
        Protocol::waiting(&self.inner, slot);
    }

    fn written(&self) -> Option<Tick> {
        Protocol::written(&self.inner)
    }

    fn bytes_out(&self, ctx: &Shared) -> u64 {
        let prepared = self.inner.prepared(ctx);
        bytes(&self.worker, &self.made, self.sent, self.at, prepared).len() as u64
    }

    fn bytes_in(&self) -> u64 {
        Protocol::bytes_in(&self.inner)
    }

    /// A batch does not go again: its other requests were on the connection too.
    fn again(&mut self, ctx: &Shared, adm: Admitted, fresh: bool, outcome: &Outcome) -> Again {
        match self.sent {
            1 => Protocol::again(&mut self.inner, ctx, adm, fresh, outcome, None),
            _ => Again::No,
        }
    }

    fn ended(&mut self, ctx: &Shared, ended: Ended) {
        Protocol::ended(&mut self.inner, ctx, ended);
    }

    /// Requests admitted with a batch that never got their turn (the thread stopped) end as
    /// interrupted.
    fn finish(&mut self, ctx: &Shared, index: usize) {
        let left = self.followers.drain(..).filter(|a| !a.warmup).count();
        ctx.rec.stats.borrow_mut().interrupted += left as u64;
        Protocol::finish(&mut self.inner, ctx, index);
    }
}
