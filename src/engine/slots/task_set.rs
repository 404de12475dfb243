//! HOT: a load thread's tasks (its connections, inline, and its boxed side tasks) as one arena
//! that the thread's task loop polls. Each member is a task beside its place's waker (made once
//! per place, and kept by the tasks that take the place later), aligned to a cache line; a
//! wake-up queues the member's index and prefetches the member's lines and one line the task
//! names (a connection's slot). At c = 1000 and more a connection comes round again only after
//! every other one and the kernel's work for them have passed through the caches, so each line
//! a request touches is a miss; the wake-up comes before the poll by at least the driver's turn,
//! and the poll itself spends microseconds in system calls, which is time for those misses to be
//! served in parallel. `FuturesUnordered` offers no place
//! to do that. Members are `Unpin` (hand-written, or boxed), so they live in a plain `Vec` and
//! the only `unsafe` is the prefetch instruction. Must not be shared across threads (members
//! are `!Send`); its wakers may be woken from anywhere.

use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

/// A task of the set: a future that may name one line worth fetching when it is woken, beside
/// its own (a connection's slot). Any address will do: it is never dereferenced.
pub trait Member: Future + Unpin {
    fn companion(&self) -> usize {
        0
    }
}

/// A boxed task names nothing.
impl<F: Future + ?Sized> Member for Pin<Box<F>> {}

/// What the wakers share with the set: the members woken since the set last looked, in the order
/// they were woken, the waker of whoever polls the set (taken by the first wake-up after it was
/// registered, as `FuturesUnordered` does), and where the members are, for the prefetch. Behind
/// a mutex because a `Waker` may be woken from any thread; it is the thread's own and nobody
/// else takes it, so each wake-up costs its two atomic operations, as many as
/// `FuturesUnordered`'s queue.
#[derive(Default)]
struct Queue {
    woken: Vec<usize>,
    parent: Option<Waker>,
    /// The first member's address and the members' size: only addresses, never dereferenced.
    members: (usize, usize),
}

#[derive(Default)]
struct WakeQueue(Mutex<Queue>);

impl WakeQueue {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Nothing panics while holding it; a poisoned queue is still a consistent one.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One place's waker: queues the member once until the set polls it again. It stays with the
/// place, so a task that takes a finished one's place takes its waker too: whoever still holds
/// the old clone (a socket keeps the last waker that polled it) holds nothing new.
struct Flag {
    index: usize,
    /// The line the place's task named when it joined.
    companion: AtomicUsize,
    queued: AtomicBool,
    queue: Arc<WakeQueue>,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let (parent, members, place) = {
            let mut q = self.queue.lock();
            q.woken.push(self.index);
            (q.parent.take(), q.members, q.woken.len())
        };
        // Further back in the queue, the poll fetches ahead of itself (`TaskSet::poll`).
        if place <= AHEAD {
            prefetch_member(members, self.index);
            let companion = self.companion.load(Ordering::Relaxed);
            if companion != 0 {
                prefetch(companion);
            }
        }
        // Woken outside the lock: the parent's waker may do anything.
        if let Some(parent) = parent {
            parent.wake();
        }
    }
}

/// How far ahead of its poll a member's lines are fetched: at wake-up for the first members
/// queued, and by the poll, this many members ahead, for the rest. With hundreds woken at once
/// (c = 10,000), fetching every one at wake-up would push the first ones out of the cache before
/// they are polled.
const AHEAD: usize = 16;

/// Prefetches member `i`'s lines, given where the members are.
#[inline(always)]
fn prefetch_member((base, size): (usize, usize), i: usize) {
    let at = base.wrapping_add(i.wrapping_mul(size));
    for line in (0..size).step_by(64) {
        prefetch(at.wrapping_add(line));
    }
}

/// Asks the CPU to bring the line at `addr` into its caches. A hint: any address is allowed.
#[inline(always)]
fn prefetch(addr: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and changes no memory, whatever the address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // No provenance: the address only names a line, and is never read through.
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::without_provenance(addr));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// A task and its waker, in as few cache lines as its size allows: the waker is read on every
/// poll, so it sits in the task's first line rather than in an array of its own.
#[repr(C, align(64))]
struct Place<T> {
    waker: Waker,
    flag: Arc<Flag>,
    /// The line the task named, also kept here: the poll's look-ahead reads it from this line,
    /// which it fetched a few members earlier, rather than from the flag.
    companion: usize,
    /// `None` once the task has finished.
    task: Option<T>,
}

/// What one [`TaskSet::poll`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Polled {
    /// Members polled.
    pub polled: usize,
    /// The set stopped with members still queued, and has woken the caller to come back after
    /// the runtime has looked for I/O.
    pub yielded: bool,
}

/// The tasks of one thread.
pub struct TaskSet<T> {
    places: Vec<Place<T>>,
    /// Places of finished tasks, for the next ones.
    free: Vec<usize>,
    queue: Arc<WakeQueue>,
    /// The members being polled; kept to reuse its allocation.
    batch: Vec<usize>,
    /// Tasks that have not finished.
    live: usize,
}

impl<T> Default for TaskSet<T> {
    fn default() -> Self {
        TaskSet {
            places: Vec::new(),
            free: Vec::new(),
            queue: Arc::default(),
            batch: Vec::new(),
            live: 0,
        }
    }
}

impl<T: Member> TaskSet<T> {
    /// Adds a task; it is first polled by the next [`poll`](Self::poll).
    pub fn push(&mut self, task: T) {
        let companion = task.companion();
        self.live += 1;
        if let Some(index) = self.free.pop() {
            let place = &mut self.places[index];
            place.flag.companion.store(companion, Ordering::Relaxed);
            place.companion = companion;
            place.task = Some(task);
            // Queued already if a late wake-up of the finished task came: that entry polls
            // the new one.
            if !place.flag.queued.swap(true, Ordering::AcqRel) {
                self.queue.lock().woken.push(index);
            }
            return;
        }
        let index = self.places.len();
        let flag = Arc::new(Flag {
            index,
            companion: AtomicUsize::new(companion),
            queued: AtomicBool::new(true),
            queue: self.queue.clone(),
        });
        self.places.push(Place {
            waker: Waker::from(flag.clone()),
            companion,
            flag,
            task: Some(task),
        });
        let mut q = self.queue.lock();
        q.woken.push(index);
        q.members = (self.places.as_ptr().addr(), size_of::<Place<T>>());
    }

    /// Tasks that have not finished.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Adds these tasks, each first polled by the next [`poll`](Self::poll), in one allocation
    /// when they are many: growing by doubling would hold them twice while they are copied.
    pub fn extend(&mut self, tasks: impl Iterator<Item = T>) {
        let more = tasks.size_hint().0.saturating_sub(self.free.len());
        self.places.reserve_exact(more);
        for task in tasks {
            self.push(task);
        }
    }

    /// Polls the members that were woken, in the order they were woken, until none is queued,
    /// handing each finished task's output to `done`, which may stop the poll at once. Like
    /// `FuturesUnordered`, it also stops once it has polled as many members as are live or two
    /// members woke themselves while being polled (they asked to yield), so that the runtime
    /// looks for I/O before anything runs twice; and when tokio's cooperative budget is spent,
    /// since a member polled then could do nothing but be put off.
    pub fn poll(
        &mut self,
        cx: &mut Context<'_>,
        mut done: impl FnMut(T::Output) -> ControlFlow<()>,
    ) -> Polled {
        let mut out = Polled::default();
        let mut yields = 0;
        loop {
            let members;
            {
                let mut q = self.queue.lock();
                members = q.members;
                if !q.parent.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    q.parent = Some(cx.waker().clone());
                }
                std::mem::swap(&mut q.woken, &mut self.batch);
            }
            if self.batch.is_empty() {
                return out;
            }
            for k in 0..self.batch.len() {
                if !tokio::task::coop::has_budget_remaining() {
                    // The runtime's budget for this turn is spent (TLS connections spend it on
                    // their socket calls): each member polled now would only be put off to the
                    // next turn, so the rest of the batch waits for it, in order.
                    let rest = self.batch.drain(k..);
                    self.queue.lock().woken.splice(0..0, rest);
                    self.batch.clear();
                    out.yielded = true;
                    cx.waker().wake_by_ref();
                    return out;
                }
                // Two stages: a member's own lines, then (once they have arrived) the line it
                // named, read from its first line.
                if let Some(&ahead) = self.batch.get(k + AHEAD) {
                    prefetch_member(members, ahead);
                }
                if let Some(&half) = self.batch.get(k + AHEAD / 2)
                    && k + AHEAD / 2 >= AHEAD
                {
                    prefetch(self.places[half].companion);
                }
                let i = self.batch[k];
                let place = &mut self.places[i];
                // Before the poll, so that a wake-up during it queues the member again.
                place.flag.queued.store(false, Ordering::Release);
                // A late wake-up of a finished task.
                let Some(task) = place.task.as_mut() else {
                    continue;
                };
                out.polled += 1;
                match Pin::new(task).poll(&mut Context::from_waker(&place.waker)) {
                    Poll::Ready(v) => {
                        place.task = None;
                        self.free.push(i);
                        self.live -= 1;
                        if done(v).is_break() {
                            // The rest of the batch stays queued, ahead of later wake-ups.
                            let rest = self.batch.drain(k + 1..);
                            let mut q = self.queue.lock();
                            q.woken.splice(0..0, rest);
                            self.batch.clear();
                            return out;
                        }
                    }
                    Poll::Pending => {
                        yields += usize::from(place.flag.queued.load(Ordering::Acquire));
                    }
                }
            }
            self.batch.clear();
            if yields >= 2 || out.polled >= self.live.max(1) {
                if !self.queue.lock().woken.is_empty() {
                    out.yielded = true;
                    cx.waker().wake_by_ref();
                }
                return out;
            }
        }
    }
}

#[cfg(test)]
pub(crate) fn member_bytes<T>() -> usize {
    size_of::<Place<T>>()
}

#[cfg(test)]
mod tests;
