//! HOT: the life of one slot as one hand-written future, the same for every protocol and
//! workload: admit, (re)connect inside the attempt, exchange, account, back off, again.
//! Admission (closed and open model), reconnecting, back-off and accounting live here once; the
//! protocol (`protocol::Protocol`) says how to exchange, the workload (`workload::Workload`)
//! what. One flat state whose hot fields sit in a few cache lines instead
//! of nested `async` state machines: at c = 1000 and more, a request costs the memory it touches
//! more than the instructions it runs. No allocation, lock, timer or formatting per request; a
//! connect (rare) is boxed.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, ready};

use crate::clock::Tick;
use crate::engine::protocols::protocol::{Again, Outcome, Protocol, Ready};
use crate::engine::slots::attempt::{BackOff, Ended, account, start_back_off};
use crate::engine::slots::shared::{Admitted, Connected, Shared};
use crate::engine::workloads::workload::Workload;
use crate::proto::{Cause, Fail};
use crate::stats::Failure;

type Opening = Pin<Box<dyn Future<Output = Result<Connected, Fail>>>>;

/// One slot, attempt after attempt, until the thread stops admitting them: the protocol `P`
/// sends what the workload `W` chooses.
pub struct Link<P, W> {
    ctx: Rc<Shared>,
    st: State<P, W>,
}

/// Everything but the thread's context, so that a step can borrow both.
struct State<P, W> {
    /// The slot (32 bits: a thread has far fewer, and the link keeps within its cache lines).
    index: u32,
    step: Step,
    /// The current attempt (valid from `Connect` or `Exchange` until it is accounted for).
    adm: Admitted,
    /// When a connection opened for the current attempt came up.
    connected: Option<Tick>,
    /// The next wait after a failed connect.
    delay: BackOff,
    opening: Option<Opening>,
    proto: P,
    work: W,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Wait until the slot may take an attempt, then take it.
    Ready,
    /// Open model: wait for the next attempt to fall due.
    Pace,
    /// Open a connection for the current attempt.
    Connect,
    /// Write the request and read the response.
    Exchange,
    /// Wait after a failed connect.
    BackOff,
    Done,
}

impl<P: Protocol, W: Workload<P>> Link<P, W> {
    /// Slot `index`, sending what `work` chooses through `proto`.
    pub fn new(ctx: Rc<Shared>, index: usize, proto: P, work: W) -> Link<P, W> {
        Link {
            ctx,
            st: State {
                index: u32::try_from(index).expect("fewer than 2^32 slots a thread"),
                step: Step::Ready,
                adm: Admitted {
                    start: Tick::now(),
                    intended: None,
                    warmup: false,
                    retries: 0,
                    entry: 0,
                },
                connected: None,
                delay: BackOff::default(),
                opening: None,
                proto,
                work,
            },
        }
    }

    /// Where this link's slot is, for the thread's set to prefetch when it is woken.
    pub fn slot_address(&self) -> usize {
        std::ptr::from_ref(&self.ctx.slots[self.st.index as usize]).addr()
    }
}

impl<P: Protocol + Unpin, W: Workload<P> + Unpin> Future for Link<P, W> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let ctx = &this.ctx;
        let st = &mut this.st;
        loop {
            match st.step {
                Step::Ready => {
                    match ready!(
                        st.work
                            .poll_ready(&mut st.proto, ctx, st.index as usize, cx)
                    ) {
                        Ready::Go => match st.work.retry(&mut st.proto) {
                            Some(adm) => st.begin(ctx, Some(adm)),
                            // The closed model admits without waiting.
                            None if ctx.gate.pacer.get().is_none() => {
                                st.begin(ctx, ctx.admit(st.index as usize))
                            }
                            None => st.step = Step::Pace,
                        },
                        Ready::Over => st.step = Step::Done,
                        Ready::BackOff => {
                            st.step = match start_back_off(
                                ctx,
                                st.index as usize,
                                Failure::Connect,
                                &mut st.delay,
                            ) {
                                true => Step::BackOff,
                                false => Step::Ready,
                            }
                        }
                    }
                }
                Step::Pace => {
                    let adm = ready!(ctx.poll_paced(st.index as usize, cx));
                    st.begin(ctx, adm);
                }
                Step::Connect => {
                    if let Err(why) = ctx.slots[st.index as usize].poll_guard(cx) {
                        st.end(ctx, Err(why));
                        continue;
                    }
                    let Some(opening) = st.opening.as_mut() else {
                        unreachable!("connecting without a connect under way");
                    };
                    let opened = ready!(opening.as_mut().poll(cx));
                    st.opened(ctx, opened);
                }
                Step::Exchange => {
                    if let Err(why) = ctx.slots[st.index as usize].poll_guard(cx) {
                        st.end(ctx, Err(why));
                        continue;
                    }
                    let Poll::Ready(r) = st.work.poll_exchange(&mut st.proto, ctx, cx) else {
                        st.proto.waiting(&ctx.slots[st.index as usize]);
                        return Poll::Pending;
                    };
                    st.end(ctx, Ok(r));
                }
                Step::BackOff => {
                    st.step = match ready!(ctx.slots[st.index as usize].poll_wait(cx)) {
                        true => Step::Ready,
                        false => Step::Done,
                    };
                }
                Step::Done => {
                    st.work.finish(&mut st.proto, ctx, st.index as usize);
                    ctx.link_ended(st.index as usize);
                    return Poll::Ready(());
                }
            }
        }
    }
}

impl<P: Protocol, W: Workload<P>> State<P, W> {
    /// Starts the admitted attempt, or ends the slot's loop when there is none.
    fn begin(&mut self, ctx: &Rc<Shared>, adm: Option<Admitted>) {
        let Some(adm) = adm else {
            self.step = Step::Done;
            return;
        };
        self.adm = adm;
        self.connected = None;
        let slot = &ctx.slots[self.index as usize];
        slot.begin_request(adm.start);
        if self.work.begin(&mut self.proto, ctx, &adm) {
            self.step = Step::Exchange;
            return;
        }
        slot.begin_connect(adm.start);
        let own = ctx.clone();
        let index = self.index as usize;
        self.opening = Some(Box::pin(
            async move { own.open(true, &own.slots[index]).await },
        ));
        self.step = Step::Connect;
    }

    /// The connect of the current attempt finished.
    fn opened(&mut self, ctx: &Rc<Shared>, opened: Result<Connected, Fail>) {
        self.opening = None;
        let taken = match opened {
            Ok(c) => {
                ctx.slots[self.index as usize].end_connect();
                self.connected = Some(Tick::now());
                self.work.adopt(&mut self.proto, ctx, c, &self.adm)
            }
            Err(fail) => Err(fail),
        };
        match taken {
            Ok(()) => self.step = Step::Exchange,
            Err(fail) => self.end(ctx, Ok(Err(fail))),
        }
    }

    /// Accounts for the current attempt and decides what comes next.
    fn end(&mut self, ctx: &Rc<Shared>, outcome: Outcome) {
        // A cancelled connect stops here.
        self.opening = None;
        let fresh = self.connected.is_some();
        let mut outcome = outcome;
        let mut streamed = None;
        let mut res = None;
        if P::STREAMS {
            streamed = self.proto.streamed();
            if let Ok(Ok(r)) = &outcome {
                res = Some(*r);
                if streamed.as_ref().is_some_and(|s| s.truncated) {
                    outcome = Ok(Err(Fail {
                        class: Failure::StreamTruncated,
                        cause: Cause::Other("the stream ended without its --done sentinel"),
                    }));
                }
            }
        }
        // A request list: what the attempt's request did, recorded once it is accounted.
        let listed = match (W::ENTRIES, &outcome) {
            (true, Ok(Ok(r))) => Some(*r),
            _ => None,
        };
        let again = (self.work).again(&mut self.proto, ctx, self.adm, fresh, &outcome);
        if again != Again::No {
            // The same attempt, with its start: its latency covers the new connection.
            if !self.adm.warmup {
                let written = match self.proto.written() {
                    Some(_) => self.work.bytes_out(&self.proto, ctx),
                    None => 0,
                };
                ctx.rec.retried(written);
            }
            let adm = Admitted {
                retries: self.adm.retries + 1,
                ..self.adm
            };
            match again {
                Again::Now => self.begin(ctx, Some(adm)),
                _ => {
                    ctx.slots[self.index as usize].end_request();
                    self.step = Step::Ready;
                }
            }
            return;
        }
        let written = self.proto.written();
        let slot = &ctx.slots[self.index as usize];
        slot.end_request();
        let sent_at = self.work.sent_at(&self.proto);
        let ended = account(ctx, slot, self.adm, self.connected, sent_at, outcome);
        if P::STREAMS
            && ctx.setup.feature.stream().is_some()
            && let (Ended::Completed { .. }, Some(res), false) = (ended, res, self.adm.warmup)
        {
            ctx.rec.stream(self.adm, &res, streamed.as_ref());
        }
        if W::ENTRIES {
            ctx.rec.entry(
                self.adm,
                ended,
                listed.as_ref(),
                self.work.entry(),
                self.work.answered(&self.proto),
            );
        }
        if !self.adm.warmup {
            let out = match written {
                Some(_) => self.work.bytes_out(&self.proto, ctx),
                None => 0,
            };
            // A completed response counted its bytes when it was recorded; one that did not
            // complete (a timeout, a close, a parse error) received bytes all the same.
            let read = match ended {
                Ended::Completed { .. } => 0,
                _ => self.work.bytes_in(&self.proto),
            };
            ctx.rec.bytes(out, read);
        }
        self.work.ended(&mut self.proto, ctx, ended);
        self.step = match ended {
            Ended::Completed { .. } => {
                self.delay = BackOff::default();
                Step::Ready
            }
            Ended::Failed(class) => {
                // A new connection that the server closed before answering is a failed
                // connect: wait before the next, as for a refused one.
                let class = match class {
                    Failure::Closed if fresh => Failure::Connect,
                    c => c,
                };
                match start_back_off(ctx, self.index as usize, class, &mut self.delay) {
                    true => Step::BackOff,
                    false => Step::Ready,
                }
            }
            Ended::Interrupted => Step::Done,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::protocols::h1_lane::H1Lane;
    use crate::engine::slots::drive::Drive;
    use crate::engine::workloads::workload::Fixed;

    #[test]
    fn a_link_and_its_waker_fit_in_four_cache_lines() {
        // The point of writing it by hand: the nested `async` version took 776 bytes. Every line
        // more is touched on the way to each request; the thread's set adds the waker and its
        // flag (32 bytes, `tasks::tests`), so 224 is what four lines leave.
        let h1 = size_of::<Link<H1Lane<()>, Fixed>>();
        assert!(h1 <= 4 * 64 - 32, "{h1}");
        assert_eq!(size_of::<Drive>(), h1);
    }
}
