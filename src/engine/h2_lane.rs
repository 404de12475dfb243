//! HOT: an HTTP/2 stream slot as a `Lane`. The slots of one connection group (`-p` of them)
//! share its connection through a `Group`: as many run as the server allows; when the
//! connection takes no more streams (GOAWAY, an error, --rpc), the streams in flight finish, the
//! first slot to find it idle closes it, and one slot (the opener) opens the next inside its
//! next attempt while the others wait. Attempts the server refused unprocessed wait in the group
//! and go first on the next connection. What a stream's response says as it arrives goes to `E`
//! (`()` on the static path: nothing; a `Watch` per slot under --stream). Must not allocate per
//! request or account for attempts.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::task::{Context, Poll};

use super::attempt::{Ended, MAX_RETRIES};
use super::lane::{Again, Lane, Outcome, Ready};
use super::shared::{Admitted, Connected, OpenH2, Shared};
use super::slot::Slot;
use super::watch::{Observe, Streamed};
use crate::clock::Tick;
use crate::proto::{Fail, Response, h2};

/// What the slots of one HTTP/2 connection group share.
pub struct Group<E: Observe> {
    /// The group's first slot.
    base: usize,
    /// The connection, while there is one.
    lane: RefCell<Option<h2::Lane<E>>>,
    /// Slots that run on the current connection: -p, or fewer if the server allows fewer.
    width: Cell<usize>,
    /// The current connection takes no more streams, and whether a GOAWAY said so.
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
    /// Attempts the server refused unprocessed, to go first on the next connection. At most one
    /// per slot: allocated once per group, not per request.
    retries: RefCell<Vec<Admitted>>,
}

impl<E: Observe> Group<E> {
    /// The group of connection `group`, pre-connected as `open`, whose streams tell their
    /// responses to an `E`.
    pub fn new(ctx: &Shared, group: usize, open: OpenH2) -> Rc<Group<E>> {
        let streams = ctx.setup.streams.max(1);
        let g = Group {
            base: group * streams,
            lane: RefCell::new(None),
            width: Cell::new(1),
            gone: Cell::new(false),
            goaway: Cell::new(false),
            used: Cell::new(0),
            done: Cell::new(0),
            preconnected: Cell::new(true),
            busy: Cell::new(0),
            opener: Cell::new(None),
            live: Cell::new(streams),
            retries: RefCell::new(Vec::with_capacity(streams)),
        };
        g.install(ctx, open)
            .expect("the run's connections tell their responses to one kind of receiver");
        Rc::new(g)
    }

    pub fn base(&self) -> usize {
        self.base
    }

    /// Takes the new connection `open`; fails if its streams report to another kind of
    /// receiver (which the run never opens).
    fn install(&self, ctx: &Shared, open: OpenH2) -> Result<(), Fail> {
        let OpenH2 { lane, max_streams } = open;
        let lane = E::h2_lane(lane).ok_or_else(super::drive::switched)?;
        let mut s = ctx.rec.stats.borrow_mut();
        // HTTP/2 allows at most 2^31-1; more means the server announced no limit.
        let limit = (max_streams as u64).min(u64::from(u32::MAX));
        s.conns.server_streams = Some(s.conns.server_streams.map_or(limit, |n| n.min(limit)));
        drop(s);
        self.width
            .set(ctx.setup.streams.max(1).min(max_streams.max(1)));
        *self.lane.borrow_mut() = Some(lane);
        self.opener.set(None);
        self.nudge(ctx);
        Ok(())
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
        let Some(lane) = self.lane.borrow_mut().take() else {
            return true;
        };
        drop(lane);
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

    /// A slot that waits for the group: it ends if the run admits nothing more and no refused
    /// attempt waits to go again.
    fn wait(&self, ctx: &Shared) -> Poll<Ready> {
        match self.retries.borrow().is_empty() && ctx.is_over() {
            true => Poll::Ready(Ready::Over),
            false => Poll::Pending,
        }
    }
}

/// Stream slot `k` of a group.
pub struct H2Lane<E: Observe> {
    group: Rc<Group<E>>,
    k: usize,
    /// The current attempt is on the group's connection (counted in its `busy`).
    on: bool,
    /// Its stream is open: the request was queued, the response not yet taken.
    open: bool,
    written: Option<Tick>,
}

impl<E: Observe> H2Lane<E> {
    pub fn new(group: Rc<Group<E>>, k: usize) -> H2Lane<E> {
        H2Lane {
            group,
            k,
            on: false,
            open: false,
            written: None,
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

    /// Tells the slot's receiver that the attempt `adm` begins on the current connection.
    fn begin_watch(&self, adm: &Admitted) {
        if E::WATCHES
            && let Some(lane) = self.group.lane.borrow().as_ref()
        {
            lane.events(self.k).begin(adm.start, !adm.warmup);
        }
    }

    /// Resets the stream if the attempt ended before its response.
    fn abandon(&mut self) {
        if std::mem::take(&mut self.open)
            && let Some(lane) = self.group.lane.borrow().as_ref()
        {
            lane.cancel(self.k);
        }
    }
}

impl<E: Observe> Lane for H2Lane<E> {
    const STREAMS: bool = E::WATCHES;

    fn poll_ready(&mut self, ctx: &Shared, index: usize, cx: &mut Context<'_>) -> Poll<Ready> {
        if ctx.slots[index].poll_guard(cx).is_err() {
            return Poll::Ready(Ready::Over);
        }
        let g = &*self.group;
        loop {
            let lane = g.lane.borrow();
            match &*lane {
                Some(lane) if !g.gone.get() => {
                    if self.k >= g.width.get() {
                        return g.wait(ctx);
                    }
                    if ctx.setup.rpc.is_some_and(|n| g.used.get() >= n) {
                        g.mark_gone(false);
                        continue;
                    }
                    // A server that allows no stream while none of ours is open frees no place:
                    // the attempt then waits for one inside, under its timeout, so that the wait
                    // shows as failures and a count run still ends.
                    let ready = match lane.starved() {
                        true => h2::Ready::Yes,
                        false => std::task::ready!(lane.poll_ready(cx)),
                    };
                    match ready {
                        h2::Ready::Gone { goaway } => g.mark_gone(goaway),
                        _ => {
                            self.on = true;
                            g.busy.set(g.busy.get() + 1);
                            return Poll::Ready(Ready::Go);
                        }
                    }
                }
                Some(_) => {
                    if g.busy.get() > 0 {
                        return g.wait(ctx);
                    }
                    drop(lane);
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

    fn begin(&mut self, _: &Shared, adm: &Admitted) -> bool {
        self.open = false;
        self.written = None;
        if self.on {
            let g = &*self.group;
            g.used.set(g.used.get() + 1);
            self.begin_watch(adm);
        }
        self.on
    }

    fn adopt(&mut self, ctx: &Shared, opened: Connected, adm: &Admitted) -> Result<(), Fail> {
        let Connected::H2(open) = opened else {
            return Err(super::drive::switched());
        };
        let g = &*self.group;
        g.install(ctx, open)?;
        g.used.set(1);
        g.busy.set(g.busy.get() + 1);
        self.on = true;
        self.begin_watch(adm);
        Ok(())
    }

    fn poll_exchange(&mut self, _: &Shared, cx: &mut Context<'_>) -> Poll<Result<Response, Fail>> {
        let lane = self.group.lane.borrow();
        let Some(lane) = lane.as_ref() else {
            unreachable!("exchanging without a connection");
        };
        if !self.open {
            if let Err(fail) = std::task::ready!(lane.poll_open(self.k, cx)) {
                return Poll::Ready(Err(fail));
            }
            self.open = true;
            self.written = Some(Tick::now());
        }
        let r = std::task::ready!(lane.poll_response(self.k, cx));
        self.open = false;
        Poll::Ready(r)
    }

    /// Under --idle-timeout the slot learns of each read of its stream (the connection wakes it
    /// at each frame, `Events::WATCHES`).
    #[inline(always)]
    fn waiting(&self, slot: &Slot) {
        if E::WATCHES
            && let Some(lane) = self.group.lane.borrow().as_ref()
        {
            slot.read_at(lane.events(self.k).last_read());
        }
    }

    #[inline(always)]
    fn streamed(&mut self) -> Option<Streamed> {
        if !E::WATCHES {
            return None;
        }
        let lane = self.group.lane.borrow();
        lane.as_ref().and_then(|lane| lane.events(self.k).settle())
    }

    fn written(&self) -> Option<Tick> {
        self.written
    }

    /// Bytes are counted per connection, frames of all streams together.
    fn bytes_out(&self, _: &Shared) -> u64 {
        0
    }

    fn bytes_in(&self) -> u64 {
        0
    }

    /// Called first when an attempt ends: a stream still open is reset. One the server refused
    /// unprocessed (a graceful GOAWAY below its id) waits for the next connection.
    fn again(&mut self, ctx: &Shared, adm: Admitted, _: bool, outcome: &Outcome) -> Again {
        self.abandon();
        match outcome {
            Ok(Err(f)) if f.refused() && adm.retries < MAX_RETRIES => {
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
        self.abandon();
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
        // Refused attempts the run ended before sending again: in flight, as far as it knows.
        let left = g.retries.borrow().iter().filter(|a| !a.warmup).count() as u64;
        ctx.rec.stats.borrow_mut().interrupted += left;
    }
}
