//! HOT (HTTP/2): what the stream slots of one multiplexed connection (HTTP/2, HTTP/3) share
//! beside the connection itself: whether it takes more requests, what it carried, which slots
//! hold it, which slot opens the next one, and the attempts that wait for the next one. Knows
//! no protocol: each lane keeps its own connection and asks its `Crew` when to use, close or
//! open one. Must not allocate per request or account for attempts.

use std::cell::{Cell, RefCell};
use std::task::Poll;

use crate::engine::protocols::protocol::{Again, Outcome, Ready};
use crate::engine::slots::attempt::{Ended, MAX_RETRIES};
use crate::engine::slots::shared::{Admitted, Shared};

pub struct Crew {
    /// The group's first slot.
    base: usize,
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
    /// Attempts the server refused unprocessed, to go first on the next connection. At most one
    /// per slot: allocated once per group, not per request.
    retries: RefCell<Vec<Admitted>>,
}

impl Crew {
    /// The crew of connection `group`, pre-connected.
    pub fn new(ctx: &Shared, group: usize) -> Crew {
        let streams = ctx.setup.streams.max(1);
        Crew {
            base: group * streams,
            gone: Cell::new(false),
            goaway: Cell::new(false),
            used: Cell::new(0),
            done: Cell::new(0),
            preconnected: Cell::new(true),
            busy: Cell::new(0),
            opener: Cell::new(None),
            live: Cell::new(streams),
            retries: RefCell::new(Vec::with_capacity(streams)),
        }
    }

    pub fn base(&self) -> usize {
        self.base
    }

    /// Wakes every slot of the group, for those waiting on it to look again.
    pub fn nudge(&self, ctx: &Shared) {
        let n = ctx.setup.streams.max(1);
        for slot in &ctx.slots[self.base..self.base + n] {
            slot.nudge();
        }
    }

    #[inline]
    pub fn is_gone(&self) -> bool {
        self.gone.get()
    }

    #[inline]
    pub fn mark_gone(&self, goaway: bool) {
        self.gone.set(true);
        self.goaway.set(self.goaway.get() || goaway);
    }

    /// --rpc: the current connection has taken all the requests it may.
    #[inline]
    pub fn spent(&self, ctx: &Shared) -> bool {
        ctx.setup.rpc.is_some_and(|n| self.used.get() >= n)
    }

    /// A slot takes an attempt on the current connection.
    #[inline]
    pub fn board(&self, on: &mut bool) {
        *on = true;
        self.busy.set(self.busy.get() + 1);
    }

    /// The attempt that took a place is admitted on the current connection.
    #[inline]
    pub fn admitted(&self) {
        self.used.set(self.used.get() + 1);
    }

    /// The slot opening a connection took it, with its attempt on it.
    pub fn adopted(&self, on: &mut bool) {
        self.opener.set(None);
        self.used.set(1);
        self.board(on);
    }

    /// The attempt no longer holds the connection; the last one off a gone connection lets it
    /// be closed.
    #[inline]
    pub fn release(&self, ctx: &Shared, on: &mut bool) {
        if !std::mem::take(on) {
            return;
        }
        self.busy.set(self.busy.get() - 1);
        if self.busy.get() == 0 && self.gone.get() {
            self.nudge(ctx);
        }
    }

    /// A slot that waits for the group: it ends if the run admits nothing more and no refused
    /// attempt waits to go again.
    #[inline]
    pub fn wait(&self, ctx: &Shared) -> Poll<Ready> {
        match self.retries.borrow().is_empty() && ctx.is_over() {
            true => Poll::Ready(Ready::Over),
            false => Poll::Pending,
        }
    }

    /// Slot `k`'s turn when the connection is gone (`held`: the lane still holds it) or absent:
    /// the first slot to find a gone one idle closes it (`close`: the lane drops it and counts
    /// its own figures), and one slot opens the next while the others wait.
    pub fn turn(&self, ctx: &Shared, k: usize, held: bool, close: impl FnOnce()) -> Poll<Ready> {
        if held {
            if self.busy.get() > 0 {
                return self.wait(ctx);
            }
            close();
            let served = self.closed(ctx);
            self.opener.set(Some(k));
            if !served && !self.wait(ctx).is_ready() {
                return Poll::Ready(Ready::BackOff);
            }
        }
        match self.opener.get() {
            Some(o) if o != k => self.wait(ctx),
            _ => {
                self.opener.set(Some(k));
                Poll::Ready(Ready::Go)
            }
        }
    }

    /// The lane dropped its connection: counts what it carried; true if it served (a
    /// connection that served nothing is a failed connect).
    pub fn closed(&self, ctx: &Shared) -> bool {
        ctx.rec.closed(self.done.get(), self.goaway.get());
        let served = self.preconnected.get() || self.done.get() > 0;
        self.gone.set(false);
        self.goaway.set(false);
        self.used.set(0);
        self.done.set(0);
        self.preconnected.set(false);
        served
    }

    #[inline]
    pub fn retry(&self) -> Option<Admitted> {
        self.retries.borrow_mut().pop()
    }

    /// An attempt the server refused unprocessed waits for the next connection, unless it went
    /// again too often already.
    #[inline]
    pub fn again(&self, ctx: &Shared, on: &mut bool, adm: Admitted, outcome: &Outcome) -> Again {
        match outcome {
            Ok(Err(f)) if f.refused() && adm.retries < MAX_RETRIES => {
                self.retries.borrow_mut().push(Admitted {
                    retries: adm.retries + 1,
                    ..adm
                });
                self.release(ctx, on);
                Again::Queued
            }
            _ => Again::No,
        }
    }

    #[inline]
    pub fn ended(&self, ctx: &Shared, on: &mut bool, ended: Ended) {
        if *on && matches!(ended, Ended::Completed { .. }) {
            self.done.set(self.done.get() + 1);
        }
        self.release(ctx, on);
    }

    /// Slot `k` (at `index`) is done; the last one closes the connection (`close`: the lane
    /// drops it, if it holds one, and says whether it did) and counts the refused attempts the
    /// run ended before sending again.
    pub fn leave(
        &self,
        ctx: &Shared,
        k: usize,
        index: usize,
        on: &mut bool,
        close: impl FnOnce() -> bool,
    ) {
        self.release(ctx, on);
        if self.opener.get() == Some(k) {
            self.opener.set(None);
        }
        self.live.set(self.live.get() - 1);
        ctx.slots[index].retire();
        if self.live.get() > 0 {
            self.nudge(ctx);
            return;
        }
        if close() {
            self.closed(ctx);
        }
        // In flight, as far as the run knows.
        let left = self.retries.borrow().iter().filter(|a| !a.warmup).count() as u64;
        ctx.rec.interrupted(left);
    }
}
