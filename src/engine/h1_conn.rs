//! HOT: the life of one HTTP/1.1 connection as one hand-written future: admit, (re)connect,
//! exchange, account, again. One flat state whose hot fields sit in a few cache lines, instead
//! of nested `async` state machines (776 bytes over 13 lines, each level with its own resume and
//! discriminant load): at c = 1000 and more, a request costs the memory it touches more than the
//! instructions it runs. No allocation, lock, timer or formatting per request; a connect (rare)
//! is boxed.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, ready};

use super::attempt::{BackOff, Ended, MAX_RETRIES, account, start_back_off};
use super::shared::{Admitted, Connected, OpenConn, Shared};
use super::slot::Cancel;
use crate::clock::Tick;
use crate::proto::{Fail, Response, h1};
use crate::stats::Failure;

type Opening = Pin<Box<dyn Future<Output = Result<Connected, Fail>>>>;

/// One HTTP/1.1 connection, request after request until the thread stops admitting attempts; a
/// closed connection is re-opened inside the next attempt, and with --rpc the last request of a
/// connection says `Connection: close`.
pub struct H1Conn {
    ctx: Rc<Shared>,
    st: State,
}

/// Everything but the thread's context, so that a step can borrow both.
struct State {
    /// The connection's slot.
    index: usize,
    step: Step,
    /// The current attempt uses the `Connection: close` request (--rpc reached).
    last: bool,
    /// The current attempt (valid from `Connect` or `Exchange` until it is accounted for).
    adm: Admitted,
    /// When a connection opened for the current attempt came up.
    connected: Option<Tick>,
    exchange: h1::Exchange,
    conn: Option<OpenConn>,
    /// Responses completed on the current connection, for --rpc and the per-connection counts.
    served: u64,
    /// The next wait after a failed connect.
    delay: BackOff,
    opening: Option<Opening>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Take the next attempt.
    Admit,
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

impl H1Conn {
    /// Connection slot `index`, pre-connected as `conn`.
    pub fn new(ctx: Rc<Shared>, index: usize, conn: OpenConn) -> H1Conn {
        let head = ctx.setup.head_request;
        H1Conn {
            ctx,
            st: State {
                index,
                step: Step::Admit,
                last: false,
                adm: Admitted {
                    start: Tick::now(),
                    intended: None,
                    warmup: false,
                    retries: 0,
                },
                connected: None,
                exchange: h1::Exchange::new(head),
                conn: Some(conn),
                served: 0,
                delay: BackOff::default(),
                opening: None,
            },
        }
    }

    /// Where this connection's slot is, for the thread's set to prefetch when it is woken.
    pub fn slot_address(&self) -> usize {
        std::ptr::from_ref(&self.ctx.slots[self.st.index]).addr()
    }
}

impl Future for H1Conn {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let ctx = &this.ctx;
        let st = &mut this.st;
        loop {
            match st.step {
                Step::Admit => match ctx.pacer.get() {
                    // The closed model admits without waiting.
                    None => st.begin(ctx, ctx.admit()),
                    Some(_) => st.step = Step::Pace,
                },
                Step::Pace => {
                    let adm = ready!(ctx.poll_paced(st.index, cx));
                    st.begin(ctx, adm);
                }
                Step::Connect => {
                    if let Err(why) = ctx.slots[st.index].poll_guard(cx) {
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
                    if let Err(why) = ctx.slots[st.index].poll_guard(cx) {
                        st.end(ctx, Err(why));
                        continue;
                    }
                    let request = st.request(ctx);
                    let Some(open) = st.conn.as_mut() else {
                        unreachable!("exchanging without a connection");
                    };
                    let r = st
                        .exchange
                        .poll(cx, &mut open.conn, request, &ctx.read_space, &mut ());
                    st.end(ctx, Ok(ready!(r)));
                }
                Step::BackOff => {
                    st.step = match ready!(ctx.slots[st.index].poll_wait(cx)) {
                        true => Step::Admit,
                        false => Step::Done,
                    };
                }
                Step::Done => {
                    st.close(ctx);
                    // With ALPN and -p, an HTTP/1.1 connection has a group of slots too.
                    for slot in ctx.group_slots(st.index / ctx.setup.streams.max(1)) {
                        slot.retire();
                    }
                    return Poll::Ready(());
                }
            }
        }
    }
}

impl State {
    fn request<'c>(&self, ctx: &'c Shared) -> &'c [u8] {
        match self.last {
            true => &ctx.setup.request_close,
            false => &ctx.setup.request,
        }
    }

    /// Starts the admitted attempt, or ends the connection when there is none.
    fn begin(&mut self, ctx: &Rc<Shared>, adm: Option<Admitted>) {
        let Some(adm) = adm else {
            self.step = Step::Done;
            return;
        };
        self.adm = adm;
        self.last = ctx.setup.rpc.is_some_and(|n| self.served + 1 >= n);
        self.connected = None;
        self.exchange.restart(ctx.setup.head_request);
        let slot = &ctx.slots[self.index];
        slot.begin_request(adm.start);
        if self.conn.is_some() {
            self.step = Step::Exchange;
            return;
        }
        slot.begin_connect(adm.start);
        let own = ctx.clone();
        let index = self.index;
        self.opening = Some(Box::pin(
            async move { own.open(true, &own.slots[index]).await },
        ));
        self.step = Step::Connect;
    }

    /// The connect of the current attempt finished.
    fn opened(&mut self, ctx: &Rc<Shared>, opened: Result<Connected, Fail>) {
        self.opening = None;
        match opened {
            Ok(Connected::H1(c)) => {
                ctx.slots[self.index].end_connect();
                self.connected = Some(Tick::now());
                self.conn = Some(c);
                self.step = Step::Exchange;
            }
            Ok(Connected::H2(_)) => {
                self.connected = Some(Tick::now());
                self.end(ctx, Ok(Err(super::drive::switched())));
            }
            Err(fail) => self.end(ctx, Ok(Err(fail))),
        }
    }

    /// Drops the connection, if one is open, counting the responses it carried.
    fn close(&mut self, ctx: &Shared) {
        if self.conn.take().is_some() {
            ctx.stats.borrow_mut().per_connection.record(self.served);
        }
        self.served = 0;
    }

    /// Whether the current attempt failed only because the server had closed the reused
    /// connection it went on (a keep-alive close that crossed the request: nothing of a
    /// response came back), so that it may go again on a new connection (RFC 9112 9.3.1).
    fn crossed_a_close(
        &self,
        ctx: &Shared,
        outcome: &Result<Result<Response, Fail>, Cancel>,
    ) -> bool {
        matches!(outcome, Ok(Err(f)) if f.class == Failure::Closed)
            && self.connected.is_none()
            && self.exchange.bytes_in() == 0
            && ctx.setup.retry_safe
            && self.adm.retries < MAX_RETRIES
    }

    /// Accounts for the current attempt and decides what comes next.
    fn end(&mut self, ctx: &Rc<Shared>, outcome: Result<Result<Response, Fail>, Cancel>) {
        // A cancelled connect stops here.
        self.opening = None;
        if self.crossed_a_close(ctx, &outcome) {
            // The same attempt, with its start: its latency covers the new connection.
            if !self.adm.warmup {
                let mut s = ctx.stats.borrow_mut();
                s.retried += 1;
                if self.exchange.written().is_some() {
                    s.bytes_out += self.request(ctx).len() as u64;
                }
            }
            self.close(ctx);
            let adm = Admitted {
                retries: self.adm.retries + 1,
                ..self.adm
            };
            self.begin(ctx, Some(adm));
            return;
        }
        let written = self.exchange.written();
        let slot = &ctx.slots[self.index];
        slot.end_request();
        let ended = account(ctx, slot, self.adm, self.connected, written, outcome);
        if self.connected.is_some() {
            self.served = 0;
        }
        if !self.adm.warmup {
            let mut s = ctx.stats.borrow_mut();
            if written.is_some() {
                s.bytes_out += self.request(ctx).len() as u64;
            }
            // A completed response counted its bytes when it was recorded; one that did not
            // complete (a timeout, a close, a parse error) received bytes all the same.
            if !matches!(ended, Ended::Completed { .. }) {
                s.bytes_in += self.exchange.bytes_in();
            }
        }
        self.step = match ended {
            Ended::Completed { keep_alive } => {
                self.served += 1;
                if !keep_alive || self.last {
                    self.close(ctx);
                }
                self.delay = BackOff::default();
                Step::Admit
            }
            Ended::Failed(class) => {
                self.close(ctx);
                // A new connection that the server closed before answering is a failed
                // connect: wait before the next, as for a refused one.
                let class = match class {
                    Failure::Closed if self.connected.is_some() => Failure::Connect,
                    c => c,
                };
                match start_back_off(ctx, self.index, class, &mut self.delay) {
                    true => Step::BackOff,
                    false => Step::Admit,
                }
            }
            Ended::Interrupted => Step::Done,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_and_its_waker_fit_in_four_cache_lines() {
        // The point of writing it by hand: the nested `async` version took 776 bytes. Every line
        // more is touched on the way to each request; the thread's set adds the waker and its
        // flag (32 bytes, `tasks::tests`), so 224 is what four lines leave.
        assert!(
            size_of::<H1Conn>() <= 4 * 64 - 32,
            "{}",
            size_of::<H1Conn>()
        );
        assert_eq!(size_of::<super::super::drive::Drive>(), size_of::<H1Conn>());
    }
}
