//! `-s` with `delay()`, `request()` or `response()`: a workload over any `Protocol` whose
//! thread's script is called around each attempt, as wrk calls it: `delay()` before the
//! attempt is admitted (the wait is not the request's latency), `request()` once it is,
//! `response()` when it completes. Over HTTP/1.1 a `request()` that returns several requests is
//! a pipelined batch: written at once, its other requests are admitted with it and each reads
//! one response, timed from the batch's start. Over HTTP/2 and HTTP/3 each call's request is
//! read back from the bytes the script wrote (`request::written`) into the frames' form. Off the
//! static path (boxed); must not account for anything but the batch requests that never got
//! their turn.

use std::collections::VecDeque;
use std::rc::Rc;
use std::task::{Context, Poll, ready};

use crate::clock::Tick;
use crate::engine::protocols::protocol::{Again, Form, Outcome, Protocol, Ready, Sent};
use crate::engine::protocols::watch::Observe;
use crate::engine::slots::shared::{Admitted, H2Handle, Listed, Shared};
use crate::engine::slots::slot::Cancel;
use crate::engine::workloads::workload::Workload;
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

impl Heard {
    /// A receiver that keeps what `response()` reads if `keep`.
    pub fn new(keep: bool) -> Heard {
        Heard {
            keep,
            ..Heard::default()
        }
    }
}

impl Observe for Heard {
    fn h2_lane(h: H2Handle) -> Option<h2::Lane<Heard>> {
        match h {
            H2Handle::Scripted(lane) => Some(lane),
            _ => None,
        }
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

/// A script's attempts, over any protocol whose receiver is `Heard`.
pub struct ScriptWork {
    worker: Rc<Worker>,
    /// What `request()` made for the current attempt.
    asked: Asked,
    /// The current attempt goes again at once on this slot (a keep-alive close crossed it):
    /// the same request.
    again_now: bool,
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

impl ScriptWork {
    /// The thread's script `worker` around each attempt.
    pub fn new(worker: Rc<Worker>) -> ScriptWork {
        ScriptWork {
            worker,
            asked: Asked::default(),
            again_now: false,
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
    fn make(&mut self, ctx: &Shared, adm: &Admitted, form: Form) {
        self.asked.at = 0;
        self.asked.sent = 1;
        self.asked.form = None;
        if !self.worker.makes_requests() {
            return;
        }
        if !self.worker.request(&mut self.asked.made) {
            self.check(ctx);
            match self.worker.interrupted() {
                // The run is over: the attempt ends as interrupted, nothing sent.
                true => ctx.slots[self.index].fire(Cancel::Interrupted),
                false => self.doom(Failure::Write, "the script failed"),
            }
            return;
        }
        let n = self.asked.made.batch.len();
        if n > 1 && form != Form::H1 {
            self.worker.fail(format!(
                "--script: request() returned {n} requests in one string; pipelining is \
                 HTTP/1.1's: over HTTP/2 and HTTP/3 return one request a call"
            ));
            self.check(ctx);
            self.doom(Failure::Write, "the script failed");
            return;
        }
        if n > 1 && ctx.gate.pacer.get().is_some() {
            self.worker.fail(format!(
                "--script: request() returned {n} requests in one string; pipelining needs the \
                 closed model (without -q/--rate)"
            ));
            self.check(ctx);
            self.doom(Failure::Write, "the script failed");
            return;
        }
        if form != Form::H1 {
            match framed(ctx, self.asked.made.batch.first(1), form) {
                Ok(form) => self.asked.form = Some(form),
                Err(e) => {
                    self.worker.fail(format!(
                        "--script: request() made a request that HTTP/2 and HTTP/3 cannot \
                         carry: {e}"
                    ));
                    self.check(ctx);
                    self.doom(Failure::Write, "the script failed");
                    return;
                }
            }
        }
        while self.asked.sent < n {
            let Some(more) = ctx.admit(self.index) else {
                break;
            };
            self.followers.push_back(Admitted {
                start: adm.start,
                ..more
            });
            self.asked.sent += 1;
        }
    }
}

/// The request `raw` (one, as HTTP/1.1 writes it) in the form `form` sends, for the run's
/// origin.
fn framed(ctx: &Shared, raw: &[u8], form: Form) -> Result<Listed, String> {
    let Some(s) = &ctx.setup.script else {
        unreachable!("a scripted lane in a run without a script");
    };
    let target = &s.plan.target;
    let w = crate::request::written::read(raw, target.scheme(), &target.authority())?;
    let head_request = w.method == http::Method::HEAD;
    let retry_safe = w.method.is_idempotent();
    Ok(Listed {
        request: bytes::Bytes::new(),
        request_close: bytes::Bytes::new(),
        head_request,
        retry_safe,
        h2: match form {
            Form::H2 => crate::proto::h2::Other::new(&w.h2()),
            _ => crate::proto::h2::Other::default(),
        },
        h3: (form == Form::H3).then(|| std::sync::Arc::new(w.h3())),
    })
}

/// What `request()` made for the current attempt.
struct Asked {
    /// The request, or the batch; unused when the script makes none.
    made: Made,
    /// Over HTTP/2 and HTTP/3: that request in the protocol's form.
    form: Option<Listed>,
    /// Requests of the current batch written with it (fewer than it has when the run admitted
    /// fewer), and the one whose response the attempt reads.
    sent: usize,
    at: usize,
}

impl Default for Asked {
    fn default() -> Asked {
        Asked {
            made: Made::default(),
            form: None,
            sent: 1,
            at: 0,
        }
    }
}

impl Asked {
    /// The request sent in the form `form` sends: the one `request()` made (over HTTP/1.1 the
    /// batch's bytes for its first request, none for a later one; else the request read back),
    /// or the run's own when `worker`'s script makes none.
    fn sent(&self, worker: &Worker, form: Form) -> Sent<'_> {
        match (worker.makes_requests(), form, &self.form) {
            (false, ..) => Sent::Own,
            (true, Form::H1, _) => {
                let head = (self.made.batch.requests.get(self.at)).is_some_and(|&(_, h)| h);
                // A doomed attempt (`request()` failed) has no batch, and sends nothing.
                let bytes = match self.at {
                    0 => (self.made.batch).first(self.sent.min(self.made.batch.len())),
                    _ => &[],
                };
                Sent::Written(bytes, head)
            }
            (true, _, Some(framed)) => Sent::Listed(framed),
            // `request()` made nothing this protocol can send: the attempt is doomed and sends
            // nothing (the protocol only begins and ends it).
            (true, _, None) => Sent::Own,
        }
    }
}

impl<P: Protocol<Events = Heard>> Workload<P> for ScriptWork {
    fn poll_ready(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        index: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Ready> {
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
        p.poll_ready(ctx, index, cx)
    }

    /// A batch's next request, or one the server refused unprocessed (HTTP/2, HTTP/3).
    fn retry(&mut self, p: &mut P) -> Option<Admitted> {
        match self.followers.pop_front() {
            Some(adm) => {
                self.next = Turn::Follower;
                Some(adm)
            }
            None => p.retry(),
        }
    }

    fn begin(&mut self, p: &mut P, ctx: &Shared, adm: &Admitted) -> bool {
        let turn = std::mem::replace(&mut self.next, Turn::New);
        match turn {
            // The same attempt again after a keep-alive close crossed it: the same bytes. One
            // a server refused unprocessed may reach any slot of its connection: the script
            // makes its request again there.
            Turn::New if std::mem::take(&mut self.again_now) => {}
            Turn::New => self.make(ctx, adm, P::FORM),
            Turn::Follower => self.asked.at += 1,
        }
        let head = match self.worker.makes_requests() {
            true => self
                .asked
                .made
                .batch
                .requests
                .get(self.asked.at)
                .is_some_and(|&(_, head)| head),
            false => ctx.setup.head_request,
        };
        let req = match P::FORM {
            Form::H1 => Sent::Written(&[], head),
            _ => self.asked.sent(&self.worker, P::FORM),
        };
        let open = p.begin(ctx, adm, req);
        if turn == Turn::Follower && !open {
            self.doom(
                Failure::Closed,
                "the connection that carried this pipelined request closed before its response",
            );
        }
        open || self.doomed.is_some()
    }

    fn poll_exchange(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Response, Fail>> {
        if let Some(fail) = self.doomed.take() {
            return Poll::Ready(Err(fail));
        }
        let r = ready!(p.poll_send(ctx, cx, self.asked.sent(&self.worker, P::FORM)));
        if let Ok(res) = &r
            && self.worker.hears()
        {
            let worker = &self.worker;
            p.peek_events(|heard| worker.response(res.status, &heard.head, &heard.body));
        }
        self.check(ctx);
        Poll::Ready(r)
    }

    fn bytes_out(&self, p: &P, ctx: &Shared) -> u64 {
        p.bytes_out(ctx, self.asked.sent(&self.worker, P::FORM))
    }

    /// A batch does not go again: its other requests were on the connection too.
    fn again(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        adm: Admitted,
        fresh: bool,
        outcome: &Outcome,
    ) -> Again {
        let again = match self.asked.sent {
            1 => p.again(
                ctx,
                adm,
                fresh,
                outcome,
                self.asked.sent(&self.worker, P::FORM),
            ),
            _ => Again::No,
        };
        self.again_now = again == Again::Now;
        again
    }

    /// Requests admitted with a batch that never got their turn (the thread stopped) end as
    /// interrupted.
    fn finish(&mut self, p: &mut P, ctx: &Shared, index: usize) {
        let left = self.followers.drain(..).filter(|a| !a.warmup).count();
        ctx.rec.interrupted(left as u64);
        p.finish(ctx, index);
    }
}
