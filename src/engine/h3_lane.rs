//! An HTTP/3 stream slot as a `Lane`. The slots of one connection group (`-p` of them) share
//! its QUIC connection through a `Group`: each exchange is a request stream of its own; when the
//! connection takes no more requests (GOAWAY, its end, --rpc), the exchanges in flight finish,
//! the first slot to find it idle closes it, and one slot (the opener) opens the next inside its
//! next attempt while the others wait. Attempts the server turned away unprocessed wait in the
//! group and go first on the next connection. Off the static path: each exchange is a boxed
//! future over h3. Must not account for attempts.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use super::attempt::{Ended, MAX_RETRIES};
use super::lane::{Again, Lane, Outcome, Ready};
use super::shared::{Admitted, Connected, OpenH3, Shared};
use crate::clock::Tick;
use crate::net::quic::H3_NO_ERROR;
use crate::proto::{Cause, Fail, Response, h3};

/// What the slots of one HTTP/3 connection group share.
pub struct Group {
    /// The group's first slot.
    base: usize,
    /// The connection, while there is one.
    conn: RefCell<Option<OpenH3>>,
    /// The current connection takes no more requests, and whether a GOAWAY said so.
    gone: Cell<bool>,
    goaway: Cell<bool>,
    /// Requests admitted on the current connection (--rpc), and the responses it carried.
    used: Cell<u64>,
    done: Cell<u64>,
    /// The current connection opened before the run (it counts as one that served).
    preconnected: Cell<bool>,
    /// Slots that took an attempt on the current connection and have not accounted for it.
    busy: Cell<usize>,
    /// The slot opening the next connection, while there is none.
    opener: Cell<Option<usize>>,
    /// Slots whose loop has not ended.
    live: Cell<usize>,
    /// Attempts turned away unprocessed, to go first on the next connection.
    retries: RefCell<Vec<Admitted>>,
}

impl Group {
    /// The group of connection `group`, pre-connected as `open`.
    pub fn new(ctx: &Shared, group: usize, open: OpenH3) -> Rc<Group> {
        let streams = ctx.setup.streams.max(1);
        Rc::new(Group {
            base: group * streams,
            conn: RefCell::new(Some(open)),
            gone: Cell::new(false),
            goaway: Cell::new(false),
            used: Cell::new(0),
            done: Cell::new(0),
            preconnected: Cell::new(true),
            busy: Cell::new(0),
            opener: Cell::new(None),
            live: Cell::new(streams),
            retries: RefCell::new(Vec::with_capacity(streams)),
        })
    }

    pub fn base(&self) -> usize {
        self.base
    }

    /// Takes the new connection `open`.
    fn install(&self, ctx: &Shared, open: OpenH3) {
        *self.conn.borrow_mut() = Some(open);
        self.opener.set(None);
        self.nudge(ctx);
    }

    /// Wakes every slot of the group, for those waiting on it to look again.
    fn nudge(&self, ctx: &Shared) {
        let n = ctx.setup.streams.max(1);
        for slot in &ctx.slots[self.base..self.base + n] {
            slot.nudge();
        }
    }

    fn mark_gone(&self, goaway: bool) {
        self.gone.set(true);
        self.goaway.set(self.goaway.get() || goaway);
    }

    /// Closes the current connection, counting what it carried; true if it served (a
    /// connection that served nothing is a failed connect).
    fn close(&self, ctx: &Shared) -> bool {
        let Some(open) = self.conn.borrow_mut().take() else {
            return true;
        };
        open.quic.close(quinn::VarInt::from_u32(H3_NO_ERROR), b"");
        ctx.rec.quic_closed(&open.quic);
        let mut s = ctx.rec.stats.borrow_mut();
        s.conns.goaways += u64::from(self.goaway.get());
        s.per_connection.record(self.done.get());
        let served = self.preconnected.get() || self.done.get() > 0;
        self.gone.set(false);
        self.goaway.set(false);
        self.used.set(0);
        self.done.set(0);
        self.preconnected.set(false);
        served
    }

    /// A slot that waits for the group: it ends if the run admits nothing more and no
    /// turned-away attempt waits to go again.
    fn wait(&self, ctx: &Shared) -> Poll<Ready> {
        match self.retries.borrow().is_empty() && ctx.is_over() {
            true => Poll::Ready(Ready::Over),
            false => Poll::Pending,
        }
    }
}

type Exchange = Pin<Box<dyn Future<Output = Result<Response, Fail>>>>;

/// Stream slot `k` of a group.
pub struct H3Lane {
    group: Rc<Group>,
    k: usize,
    /// The current attempt is on the group's connection (counted in its `busy`).
    on: bool,
    /// The current attempt's exchange, once it started.
    exchange: Option<Exchange>,
    written: Rc<Cell<Option<Tick>>>,
}

impl H3Lane {
    pub fn new(group: Rc<Group>, k: usize) -> H3Lane {
        H3Lane {
            group,
            k,
            on: false,
            exchange: None,
            written: Rc::new(Cell::new(None)),
        }
    }

    /// The attempt no longer holds the connection; the last one off a gone connection lets it
    /// be closed.
    fn release(&mut self, ctx: &Shared) {
        if !std::mem::take(&mut self.on) {
            return;
        }
        let g = &*self.group;
        g.busy.set(g.busy.get() - 1);
        if g.busy.get() == 0 && g.gone.get() {
            g.nudge(ctx);
        }
    }
}

impl Lane for H3Lane {
    fn poll_ready(&mut self, ctx: &Shared, index: usize, cx: &mut Context<'_>) -> Poll<Ready> {
        if ctx.slots[index].poll_guard(cx).is_err() {
            return Poll::Ready(Ready::Over);
        }
        let g = &*self.group;
        loop {
            let conn = g.conn.borrow();
            match &*conn {
                Some(open) if !g.gone.get() => {
                    if ctx.setup.rpc.is_some_and(|n| g.used.get() >= n)
                        || open.quic.close_reason().is_some()
                    {
                        g.mark_gone(false);
                        continue;
                    }
                    self.on = true;
                    g.busy.set(g.busy.get() + 1);
                    return Poll::Ready(Ready::Go);
                }
                Some(_) => {
                    if g.busy.get() > 0 {
                        return g.wait(ctx);
                    }
                    drop(conn);
                    let served = g.close(ctx);
                    g.opener.set(Some(self.k));
                    if !served && !g.wait(ctx).is_ready() {
                        return Poll::Ready(Ready::BackOff);
                    }
                }
                None => match g.opener.get() {
                    Some(k) if k != self.k => return g.wait(ctx),
                    _ => {
                        g.opener.set(Some(self.k));
                        return Poll::Ready(Ready::Go);
                    }
                },
            }
        }
    }

    fn retry(&mut self) -> Option<Admitted> {
        self.group.retries.borrow_mut().pop()
    }

    fn begin(&mut self, _: &Shared, _: &Admitted) -> bool {
        self.exchange = None;
        self.written.set(None);
        if self.on {
            let g = &*self.group;
            g.used.set(g.used.get() + 1);
        }
        self.on
    }

    fn adopt(&mut self, ctx: &Shared, opened: Connected, _: &Admitted) -> Result<(), Fail> {
        let Connected::H3(open) = opened else {
            return Err(super::drive::switched());
        };
        let g = &*self.group;
        g.install(ctx, open);
        g.used.set(1);
        g.busy.set(g.busy.get() + 1);
        self.on = true;
        Ok(())
    }

    fn poll_exchange(
        &mut self,
        ctx: &Shared,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Response, Fail>> {
        let exchange = self.exchange.get_or_insert_with(|| {
            let conn = self.group.conn.borrow();
            let Some(open) = conn.as_ref() else {
                unreachable!("exchanging without a connection");
            };
            let Some(h3) = &ctx.setup.h3 else {
                unreachable!("an HTTP/3 lane in a run without an HTTP/3 request");
            };
            Box::pin(h3::exchange(
                open.send.clone(),
                open.quic.clone(),
                h3.request.clone(),
                self.written.clone(),
            ))
        });
        let r = std::task::ready!(exchange.as_mut().poll(cx));
        self.exchange = None;
        Poll::Ready(r)
    }

    fn written(&self) -> Option<Tick> {
        self.written.get()
    }

    /// Bytes are counted per connection, by QUIC.
    fn bytes_out(&self, _: &Shared) -> u64 {
        0
    }

    fn bytes_in(&self) -> u64 {
        0
    }

    /// Called first when an attempt ends: an exchange still under way is dropped, which resets
    /// its stream. One the server turned away unprocessed waits for the next connection; a
    /// GOAWAY also ends the connection for new requests.
    fn again(&mut self, ctx: &Shared, adm: Admitted, _: bool, outcome: &Outcome) -> Again {
        self.exchange = None;
        match outcome {
            Ok(Err(f)) if f.refused() && adm.retries < MAX_RETRIES => {
                if matches!(f.cause, Cause::Refused(m) if m == h3::GOING_AWAY) {
                    self.group.mark_gone(true);
                }
                self.group.retries.borrow_mut().push(Admitted {
                    retries: adm.retries + 1,
                    ..adm
                });
                self.release(ctx);
                Again::Queued
            }
            _ => Again::No,
        }
    }

    fn ended(&mut self, ctx: &Shared, ended: Ended) {
        if self.on && matches!(ended, Ended::Completed { .. }) {
            let g = &*self.group;
            g.done.set(g.done.get() + 1);
        }
        self.release(ctx);
    }

    fn finish(&mut self, ctx: &Shared, index: usize) {
        self.exchange = None;
        self.release(ctx);
        let g = &*self.group;
        if g.opener.get() == Some(self.k) {
            g.opener.set(None);
        }
        g.live.set(g.live.get() - 1);
        ctx.slots[index].retire();
        if g.live.get() > 0 {
            g.nudge(ctx);
            return;
        }
        g.close(ctx);
        // Turned-away attempts the run ended before sending again: in flight, as far as it knows.
        let left = g.retries.borrow().iter().filter(|a| !a.warmup).count() as u64;
        ctx.rec.stats.borrow_mut().interrupted += left;
    }
}
