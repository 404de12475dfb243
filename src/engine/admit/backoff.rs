//! The waits between failed connects, without a timer of their own: each wait is an entry (when,
//! slot) in one queue per thread, and the thread's sweeper, which sleeps on its timer anyway,
//! sleeps until the earliest entry too and wakes the slots whose wait is over. So a load thread
//! needs no timer wheel (tokio's time driver costs every wake-up of the thread), and a refused
//! target costs no timer descriptor per connection when descriptors may be what ran out.
//! Must not block: everything here is a queue operation or a wake.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::poll_fn;
use std::pin::pin;
use std::task::{Poll, Waker};

use crate::clock::Tick;
use crate::engine::slots::slot::Slot;

/// The waits of one thread's slots.
#[derive(Default)]
pub struct Backoffs {
    due: RefCell<BinaryHeap<Reverse<(Tick, usize)>>>,
    /// The sweeper while it sleeps, and until when.
    sweeper: RefCell<Option<Waker>>,
    planned: Cell<Option<Tick>>,
}

impl Backoffs {
    /// Slot `index` waits until `until`; the sweeper is woken if that is before its own plan.
    pub fn push(&self, until: Tick, index: usize) {
        self.due.borrow_mut().push(Reverse((until, index)));
        if self.planned.get().is_none_or(|p| until < p)
            && let Some(w) = self.sweeper.borrow_mut().take()
        {
            w.wake();
        }
    }

    /// The end of the earliest wait.
    pub fn earliest(&self) -> Option<Tick> {
        self.due.borrow().peek().map(|Reverse((t, _))| *t)
    }

    /// Ends every wait that is over at `now`, waking its slot.
    pub fn release(&self, now: Tick, slots: &[Slot]) {
        let mut due = self.due.borrow_mut();
        while let Some(&Reverse((t, i))) = due.peek() {
            if t > now {
                break;
            }
            due.pop();
            slots[i].end_wait();
        }
    }

    /// The sweeper's sleep: `sleep` until it completes (true), or until a wait that ends before
    /// `until` is pushed (false).
    pub async fn sleep_until<F: Future<Output = ()>>(&self, until: Tick, sleep: F) -> bool {
        let mut sleep = pin!(sleep);
        self.planned.set(Some(until));
        let fired = poll_fn(|cx| {
            if sleep.as_mut().poll(cx).is_ready() {
                return Poll::Ready(true);
            }
            if self.earliest().is_some_and(|e| e < until) {
                return Poll::Ready(false);
            }
            *self.sweeper.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        })
        .await;
        self.planned.set(None);
        self.sweeper.borrow_mut().take();
        fired
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::pending;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Wake};
    use std::time::Duration;

    #[test]
    fn release_wakes_only_the_waits_that_are_over_in_order() {
        let b = Backoffs::default();
        let slots: Vec<Slot> = (0..3).map(|_| Slot::default()).collect();
        let t0 = Tick::now();
        b.push(t0.after(Duration::from_millis(20)), 2);
        b.push(t0.after(Duration::from_millis(10)), 0);
        assert_eq!(b.earliest(), Some(t0.after(Duration::from_millis(10))));
        b.release(t0.after(Duration::from_millis(15)), &slots);
        assert!(slots[0].wait_is_over());
        assert!(!slots[2].wait_is_over(), "woken before its wait was over");
        assert_eq!(b.earliest(), Some(t0.after(Duration::from_millis(20))));
        b.release(t0.after(Duration::from_millis(20)), &slots);
        assert!(slots[2].wait_is_over());
        assert_eq!(b.earliest(), None);
    }

    #[test]
    fn an_earlier_wait_interrupts_the_sweepers_sleep_and_a_later_one_does_not() {
        struct Count(AtomicUsize);
        impl Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let b = Backoffs::default();
        let t0 = Tick::now();
        let mut sleep = pin!(b.sleep_until(t0.after(Duration::from_secs(3600)), pending()));
        assert!(sleep.as_mut().poll(&mut cx).is_pending());
        b.push(t0.after(Duration::from_secs(7200)), 0);
        assert_eq!(
            count.0.load(Ordering::Relaxed),
            0,
            "a later wait woke the sweeper"
        );
        assert!(sleep.as_mut().poll(&mut cx).is_pending());
        b.push(t0.after(Duration::from_millis(1)), 1);
        assert_eq!(
            count.0.load(Ordering::Relaxed),
            1,
            "an earlier wait did not wake it"
        );
        assert_eq!(sleep.as_mut().poll(&mut cx), Poll::Ready(false));
        // Once awake, the sweeper plans anew: nothing is woken until it sleeps again.
        b.push(t0, 2);
        assert_eq!(count.0.load(Ordering::Relaxed), 1);
    }
}
