//! When a thread admits request attempts: the stop rule (a count, a deadline, the open
//! model's schedule), the warm-up, the drain, and the run's phases as the sweeper moves them.
//! Single-threaded (`Cell`); must not know how attempts are exchanged.

use std::cell::{Cell, OnceCell};
use std::task::{Context, Poll};
use std::time::Instant;

use crate::clock::Tick;
use crate::engine::admit::pace::{Pacer, Take};
use crate::engine::slots::record::Record;
use crate::engine::slots::slot::Slot;

/// When a thread stops admitting new request attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Not started yet (or aborted): admit nothing.
    Closed,
    /// This many attempts left for the thread.
    Budget(u64),
    /// Admit until this instant.
    Deadline(Tick),
    /// Admit until this instant, only on the slots below `Gate::slots_on` (--stages of
    /// connections): a variant of its own, so that no other run pays for the look.
    Staffed(Tick),
    /// Open model: the pacer decides.
    Paced,
}

/// An admitted request attempt.
#[derive(Debug, Clone, Copy)]
pub struct Admitted {
    /// When it actually starts.
    pub start: Tick,
    /// Open model: when it was meant to be sent (latency counts from here).
    pub intended: Option<Tick>,
    /// Sent during --warmup: not recorded.
    pub warmup: bool,
    /// Times it was sent again after a server refused it unprocessed (HTTP/2 GOAWAY).
    pub retries: u8,
    /// The place in a request list of the request it sends again (set when it goes again:
    /// another slot of the connection may take it). In the padding: no larger.
    pub entry: u32,
}

/// A thread's admission state.
pub struct Gate {
    /// Set when the drain is over: nothing new starts.
    pub stop: Cell<bool>,
    pub limit: Cell<Limit>,
    /// When in-flight attempts stop being waited for (duration mode).
    pub drain_end: Cell<Option<Instant>>,
    /// The end of the measured window (duration mode, or a stop request): responses completed
    /// after it are counted as completed in the drain.
    pub window_end: Cell<Option<Tick>>,
    /// The thread acted on an outside stop request.
    pub interrupted: Cell<bool>,
    /// The connection phase is over (its deadline passed): no pre-connect starts any more.
    pub setup_over: Cell<bool>,
    /// Open model: the thread's schedule, set with the start signal.
    pub pacer: OnceCell<Pacer>,
    /// Closed model: attempts that start before this are the warm-up.
    pub warmup_end: Cell<Option<Tick>>,
    /// When the thread got the start signal (pauses before it are not the run's).
    pub started: Cell<Option<Instant>>,
    /// Closed model under --stages of connections (`Limit::Staffed`): slots from this index on
    /// take no attempt (their connection is above the profile's level now).
    pub slots_on: Cell<usize>,
}

impl Default for Gate {
    fn default() -> Gate {
        Gate {
            stop: Cell::new(false),
            limit: Cell::new(Limit::Closed),
            drain_end: Cell::new(None),
            window_end: Cell::new(None),
            interrupted: Cell::new(false),
            setup_over: Cell::new(false),
            pacer: OnceCell::new(),
            warmup_end: Cell::new(None),
            started: Cell::new(None),
            slots_on: Cell::new(usize::MAX),
        }
    }
}

impl Gate {
    /// Open model: the next attempt for slot `index` once one falls due, under `slot`'s guard
    /// (`None` when the run is over for it, or the slot was cancelled while waiting).
    pub fn poll_paced(
        &self,
        index: usize,
        slot: &Slot,
        rec: &Record,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Admitted>> {
        let Some(pacer) = self.pacer.get() else {
            return Poll::Ready(self.admit(index, rec));
        };
        if slot.poll_guard(cx).is_err() || self.stop.get() {
            return Poll::Ready(None);
        }
        let now = Instant::now();
        match pacer.take(now, index) {
            Take::Due { index: j, intended } => {
                // The schedule is in `Instant`s; the tick is read beside `now`, so that the
                // intended time converts against a pair of readings made together.
                let start = Tick::now();
                let intended = start.before(now.saturating_duration_since(intended));
                let warmup = j < pacer.recorded_from;
                rec.admitted(warmup, Some(now));
                Poll::Ready(Some(Admitted {
                    start,
                    intended: Some(intended),
                    warmup,
                    retries: 0,
                    entry: 0,
                }))
            }
            Take::Wait => {
                pacer.wait(index, cx.waker());
                Poll::Pending
            }
            Take::Over => Poll::Ready(None),
        }
    }

    /// Closed model: admits an attempt for slot `index` that starts now, if the run admits any
    /// more and the slot's connection is within the profile's level.
    pub fn admit(&self, index: usize, rec: &Record) -> Option<Admitted> {
        if self.stop.get() {
            return None;
        }
        let now = Tick::now();
        // Warm-up attempts do not use up the count: -n counts recorded requests.
        let warmup = self.warmup_end.get().is_some_and(|end| now < end);
        match self.limit.get() {
            Limit::Closed | Limit::Paced => return None,
            Limit::Staffed(_) if index >= self.slots_on.get() => return None,
            _ if warmup => {}
            Limit::Budget(0) => return None,
            Limit::Budget(n) => self.limit.set(Limit::Budget(n - 1)),
            Limit::Deadline(d) if now >= d => return None,
            Limit::Deadline(_) => {}
            Limit::Staffed(d) if now >= d => return None,
            Limit::Staffed(_) => {}
        }
        rec.admitted(warmup, None);
        Some(Admitted {
            start: now,
            intended: None,
            warmup,
            retries: 0,
            entry: 0,
        })
    }

    /// Whether no more attempts will be admitted (without using one up).
    pub fn is_over(&self) -> bool {
        if let Some(pacer) = self.pacer.get() {
            return self.stop.get() || pacer.is_over();
        }
        self.stop.get()
            || match self.limit.get() {
                Limit::Closed | Limit::Budget(0) | Limit::Paced => true,
                Limit::Budget(_) => false,
                Limit::Deadline(d) | Limit::Staffed(d) => Tick::now() >= d,
            }
    }

    /// Whether attempts are a fixed number (count mode) rather than a time.
    pub fn counts_down(&self) -> bool {
        matches!(self.limit.get(), Limit::Budget(_))
    }
}
