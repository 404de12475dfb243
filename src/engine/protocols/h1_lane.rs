//! HOT: HTTP/1.1 as a `Protocol`: the slot owns its connection, one request at a time, re-opened
//! inside the next attempt when the server (or --rpc) closed it; the last request of a
//! connection under --rpc says `Connection: close`. What the response says as it arrives goes
//! to `E` (`()` on the static path: nothing; `Watch` under --stream; a workload's own receiver
//! for a list or a script). Must not allocate or account.

use std::task::{Context, Poll};

use crate::clock::Tick;
use crate::engine::protocols::protocol::{Again, Outcome, Protocol, Ready, Sent};
use crate::engine::protocols::watch::{Observe, Streamed};
use crate::engine::slots::attempt::{Ended, MAX_RETRIES};
use crate::engine::slots::shared::{Admitted, Connected, OpenConn, Shared};
use crate::engine::slots::slot::Slot;
use crate::proto::{Fail, Response, h1};
use crate::stats::Failure;

pub struct H1Lane<E> {
    exchange: h1::Exchange,
    conn: Option<OpenConn>,
    /// Responses completed on the current connection, for --rpc and the per-connection counts.
    served: u64,
    /// The current attempt uses the `Connection: close` request (--rpc reached).
    last: bool,
    events: E,
}

impl<E: Observe> H1Lane<E> {
    /// A lane on the pre-connected `conn`.
    pub fn new(ctx: &Shared, conn: OpenConn, events: E) -> H1Lane<E> {
        H1Lane {
            exchange: h1::Exchange::new(ctx.setup.head_request),
            conn: Some(conn),
            served: 0,
            last: false,
            events,
        }
    }

    /// The thread's prepared request for this attempt (with `Connection: close` when --rpc
    /// reached its count).
    pub fn prepared<'c>(&self, ctx: &'c Shared) -> &'c [u8] {
        match self.last {
            true => &ctx.setup.request_close,
            false => &ctx.setup.request,
        }
    }

    /// Starts the attempt `adm`, whose request is a HEAD if `head_request` says so: true when
    /// it goes on an open connection. (`Lane::begin` with the thread's prepared request.)
    #[inline]
    pub fn start(&mut self, ctx: &Shared, adm: &Admitted, head_request: bool) -> bool {
        self.events.begin(adm.start, !adm.warmup);
        self.last = ctx.setup.rpc.is_some_and(|n| self.served + 1 >= n);
        self.exchange.restart(head_request);
        self.conn.is_some()
    }

    /// Writes `request` (the same bytes on every poll of the attempt; empty when an earlier
    /// write carried it) and reads its response.
    #[inline]
    pub fn exchange_with(
        &mut self,
        ctx: &Shared,
        cx: &mut Context<'_>,
        request: &[u8],
    ) -> Poll<Result<Response, Fail>> {
        let Some(open) = self.conn.as_mut() else {
            unreachable!("exchanging without a connection");
        };
        self.exchange.poll(
            cx,
            &mut open.conn,
            request,
            &ctx.read_space,
            &mut self.events,
        )
    }

    /// Hands over the connection, if one is open, counting the responses it carried.
    pub fn take_conn(&mut self, ctx: &Shared) -> Option<OpenConn> {
        let conn = self.conn.take();
        if conn.is_some() {
            ctx.rec.closed(self.served, false);
        }
        self.served = 0;
        conn
    }

    /// Drops the connection, if one is open, counting the responses it carried.
    fn close(&mut self, ctx: &Shared) {
        drop(self.take_conn(ctx));
    }
}

impl<E: Observe> Protocol for H1Lane<E> {
    const STREAMS: bool = E::WATCHES;

    type Events = E;

    #[inline(always)]
    fn poll_ready(&mut self, _: &Shared, _: usize, _: &mut Context<'_>) -> Poll<Ready> {
        Poll::Ready(Ready::Go)
    }

    #[inline]
    fn begin(&mut self, ctx: &Shared, adm: &Admitted, req: Sent<'_>) -> bool {
        let head = match req {
            Sent::Own => ctx.setup.head_request,
            Sent::Listed(l) => l.head_request,
            Sent::Written(_, head) => head,
        };
        self.start(ctx, adm, head)
    }

    fn adopt(&mut self, _: &Shared, opened: Connected, _: &Admitted) -> Result<(), Fail> {
        match opened {
            Connected::H1(c) => {
                self.conn = Some(c);
                Ok(())
            }
            other => Err(crate::engine::slots::drive::switched_from(other)),
        }
    }

    fn hop_ended(&mut self, ctx: &Shared, keep_alive: bool) {
        self.ended(ctx, Ended::Completed { keep_alive });
    }

    fn hop_begin(&mut self, ctx: &Shared, adm: &Admitted, req: Sent<'_>) -> bool {
        self.begin(ctx, adm, req)
    }

    #[inline]
    fn poll_send(
        &mut self,
        ctx: &Shared,
        cx: &mut Context<'_>,
        req: Sent<'_>,
    ) -> Poll<Result<Response, Fail>> {
        let request = match (req, self.last) {
            (Sent::Own, true) => &ctx.setup.request_close,
            (Sent::Own, false) => &ctx.setup.request,
            (Sent::Listed(l), true) => &l.request_close,
            (Sent::Listed(l), false) => &l.request,
            (Sent::Written(bytes, _), _) => bytes,
        };
        self.exchange_with(ctx, cx, request)
    }

    #[inline(always)]
    fn waiting(&self, slot: &Slot) {
        if E::WATCHES {
            slot.read_at(self.exchange.last_read());
        }
    }

    #[inline(always)]
    fn streamed(&mut self) -> Option<Streamed> {
        self.events.settle()
    }

    #[inline]
    fn written(&self) -> Option<Tick> {
        self.exchange.written()
    }

    #[inline]
    fn bytes_out(&self, ctx: &Shared, req: Sent<'_>) -> u64 {
        match req {
            Sent::Own => self.prepared(ctx).len() as u64,
            Sent::Written(bytes, _) => bytes.len() as u64,
            Sent::Listed(l) => match self.last {
                true => l.request_close.len() as u64,
                false => l.request.len() as u64,
            },
        }
    }

    #[inline]
    fn bytes_in(&self) -> u64 {
        self.exchange.bytes_in()
    }

    /// A request that failed only because the server had closed the reused connection it went
    /// on (a keep-alive close that crossed the request: nothing of a response came back) goes
    /// again at once on a new connection (RFC 9112 9.3.1), if its method may be repeated.
    #[inline]
    fn again(
        &mut self,
        ctx: &Shared,
        adm: Admitted,
        fresh: bool,
        outcome: &Outcome,
        req: Sent<'_>,
    ) -> Again {
        let retry_safe = match req {
            Sent::Own | Sent::Written(..) => ctx.setup.retry_safe,
            Sent::Listed(l) => l.retry_safe,
        };
        // A head cut short by the close is held, not counted: the server had begun to answer,
        // and such a request must not be sent again.
        let crossed = matches!(outcome, Ok(Err(f)) if f.class == Failure::Closed)
            && !fresh
            && self.exchange.bytes_in() == 0
            && !self.conn.as_ref().is_some_and(|c| c.conn.holds_bytes())
            && retry_safe
            && adm.retries < MAX_RETRIES;
        if !crossed {
            return Again::No;
        }
        self.close(ctx);
        Again::Now
    }

    #[inline]
    fn ended(&mut self, ctx: &Shared, ended: Ended) {
        match ended {
            Ended::Completed { keep_alive } => {
                self.served += 1;
                if !keep_alive || self.last {
                    self.close(ctx);
                }
            }
            Ended::Failed(_) => self.close(ctx),
            Ended::Interrupted => {}
        }
    }

    fn finish(&mut self, ctx: &Shared, index: usize) {
        self.close(ctx);
        // With ALPN and -p, an HTTP/1.1 connection has a group of slots too.
        for slot in ctx.group_slots(index / ctx.setup.streams.max(1)) {
            slot.retire();
        }
    }

    #[inline(always)]
    fn with_events<R>(&mut self, f: impl FnOnce(&mut E) -> R) -> Option<R> {
        Some(f(&mut self.events))
    }

    #[inline(always)]
    fn peek_events<R>(&self, f: impl FnOnce(&E) -> R) -> Option<R> {
        Some(f(&self.events))
    }

    fn take_conn(&mut self, ctx: &Shared) -> Option<OpenConn> {
        H1Lane::take_conn(self, ctx)
    }
}
