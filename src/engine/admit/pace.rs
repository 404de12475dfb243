//! The open model of one thread: intended send times from integer arithmetic
//! (t_j = start + j x 1e9 / rate ns, with the rate an exact fraction, so the schedule never
//! drifts), handed to connections as they become free. A request due while every connection is
//! busy waits for the next free one and keeps its intended time (it follows from its index, so
//! waiting costs no memory). One precise timer per thread wakes idle connections as requests fall
//! due; nothing is skipped unless --max-lag says so, and then it is counted. At the end of a
//! timed run, requests still waiting for a connection to be free are missed, never sent during
//! the drain; a connection that was already idle, waiting for its request, still takes it (it
//! fell due in the window, and only spate's wake-up was late, which its send lag shows).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::Arc;
use std::task::Waker;
use std::time::{Duration, Instant};

use crate::plan::Curve;
use crate::units::MAX_DURATION;

/// Intended send times: the run's global schedule t_i = start + i x 1e9 / rate ns (or, under
/// --stages, the time the rate curve's area reaches i), of which a thread takes every
/// `stride`-th index from `offset` (so that the threads together send exactly the global
/// schedule, with no request sent twice and none rounded away).
#[derive(Debug, Clone)]
pub struct Schedule {
    start: Instant,
    /// Interval in ns as a fraction: `ns_num / ns_den`.
    ns_num: u128,
    ns_den: u128,
    /// --stages: the rate curve, instead of the fixed interval.
    curve: Option<Arc<Curve>>,
    offset: u64,
    stride: u64,
}

impl Schedule {
    /// The whole schedule of `num / den` requests per second from `start`.
    pub fn new(start: Instant, num: u128, den: u128) -> Schedule {
        Schedule {
            start,
            ns_num: 1_000_000_000u128.saturating_mul(den),
            ns_den: num.max(1),
            curve: None,
            offset: 0,
            stride: 1,
        }
    }

    /// The whole schedule of a --stages rate curve from `start`: request i at the time the
    /// curve's area reaches i; none after the curve's end.
    pub fn curve(start: Instant, curve: Arc<Curve>) -> Schedule {
        Schedule {
            curve: Some(curve),
            ..Schedule::new(start, 1, 1)
        }
    }

    /// Part `index` of `parts` of this schedule's requests: its `index`-th, then every
    /// `parts`-th after it. A share of a share is one too: a shard's schedule, split over its
    /// threads, takes global indices `shard + shards * (thread + threads * j)`.
    pub fn share(&self, index: u64, parts: u64) -> Schedule {
        Schedule {
            offset: self.offset + self.stride * index,
            stride: self.stride * parts.max(1),
            ..self.clone()
        }
    }

    /// The intended time of this share's request `j`.
    pub fn at(&self, j: u64) -> Instant {
        let i = u128::from(self.offset) + u128::from(j) * u128::from(self.stride);
        if let Some(c) = &self.curve {
            // Past the curve's end: later than any run's end. (A float's cast to whole
            // nanoseconds costs a few instructions; `from_secs_f64`'s checks, a hundred.)
            let secs = c
                .time_of(i as f64)
                .unwrap_or(2.0 * MAX_DURATION.as_secs_f64());
            return self.start + Duration::from_nanos((secs * 1e9) as u64);
        }
        let ns = (i.saturating_mul(self.ns_num) / self.ns_den).min(u128::from(u64::MAX));
        self.start + Duration::from_nanos(ns as u64)
    }

    /// How many of this share's requests have a global index below `global`.
    pub fn count_below(&self, global: u64) -> u64 {
        global.saturating_sub(self.offset).div_ceil(self.stride)
    }

    /// How many of the whole schedule's intended times fall before `end`.
    pub fn global_count_before(&self, end: Instant) -> u64 {
        let Some(span) = end.checked_duration_since(self.start) else {
            return 0;
        };
        if let Some(c) = &self.curve {
            // The requests whose time is before `end`: those below the area there.
            let n = c.count_before(span.as_secs_f64());
            return (n - 1e-9).ceil().max(0.0) as u64;
        }
        // Smallest i with i * ns_num / ns_den >= span, i.e. ceil(span * ns_den / ns_num).
        let i = span
            .as_nanos()
            .saturating_mul(self.ns_den)
            .div_ceil(self.ns_num);
        i.min(u128::from(u64::MAX)) as u64
    }

    /// How many of this share's intended times fall before `end`.
    pub fn count_before(&self, end: Instant) -> u64 {
        self.count_below(self.global_count_before(end))
    }
}

/// What `Pacer::take` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// Request `index`, intended at `intended`, is due: send it now.
    Due { index: u64, intended: Instant },
    /// Nothing due yet.
    Wait,
    /// The schedule is over.
    Over,
}

pub struct Pacer {
    pub schedule: Schedule,
    next: Cell<u64>,
    /// The intended time of the last index asked for, kept: a waiting connection and the pacer
    /// task ask for the next one's at every wake-up until it falls due.
    asked: Cell<Option<(u64, Instant)>>,
    end: Cell<u64>,
    /// Requests before this index are the warm-up.
    pub recorded_from: u64,
    /// The end of a timed run's window: from then on only idle connections take a request.
    deadline: Option<Instant>,
    /// Set when a busy connection found the deadline passed: the schedule is over.
    ended: Cell<bool>,
    /// Per slot: idle since its last request, waiting for the next one to fall due.
    idle: Box<[Cell<bool>]>,
    max_lag: Option<Duration>,
    /// Recorded requests dropped for --max-lag.
    dropped: Cell<u64>,
    /// Idle connections waiting for a request to fall due (slot index and waker, in order).
    waiters: RefCell<VecDeque<(usize, Waker)>>,
    waiting: Box<[Cell<bool>]>,
    /// The pacer task, woken when the first connection starts waiting.
    task: RefCell<Option<Waker>>,
}

impl Pacer {
    pub fn new(
        schedule: Schedule,
        recorded_from: u64,
        end: u64,
        deadline: Option<Instant>,
        max_lag: Option<Duration>,
        slots: usize,
    ) -> Pacer {
        Pacer {
            schedule,
            next: Cell::new(0),
            asked: Cell::new(None),
            end: Cell::new(end),
            recorded_from,
            deadline,
            ended: Cell::new(false),
            idle: (0..slots).map(|_| Cell::new(false)).collect(),
            max_lag,
            dropped: Cell::new(0),
            waiters: RefCell::new(VecDeque::with_capacity(slots)),
            waiting: (0..slots).map(|_| Cell::new(false)).collect(),
            task: RefCell::new(None),
        }
    }

    /// The next due request for slot `slot`, skipping (and counting) those later than
    /// --max-lag. Warm-up requests still unsent when the measured part begins are skipped
    /// without a count: behind schedule, they would fill the measured window and leave nothing
    /// of it measured. Past the deadline only a slot that was idle takes one.
    pub fn take(&self, now: Instant, slot: usize) -> Take {
        let idle = self.idle.get(slot).is_some_and(|i| i.replace(false));
        if !idle && (self.ended.get() || self.deadline.is_some_and(|d| now >= d)) {
            self.ended.set(true);
            self.wake_all();
            return Take::Over;
        }
        loop {
            let j = self.next.get();
            if j >= self.end.get() {
                return Take::Over;
            }
            if j < self.recorded_from && self.schedule.at(self.recorded_from) <= now {
                self.next.set(self.recorded_from);
                continue;
            }
            let intended = self.at(j);
            if intended > now {
                return Take::Wait;
            }
            self.next.set(j + 1);
            if self.max_lag.is_some_and(|max| now - intended > max) {
                if j >= self.recorded_from {
                    self.dropped.set(self.dropped.get() + 1);
                }
                continue;
            }
            return Take::Due { index: j, intended };
        }
    }

    /// Slot `slot` waits for the next request; its task is woken when one falls due.
    pub fn wait(&self, slot: usize, waker: &Waker) {
        self.idle[slot].set(true);
        if !self.waiting[slot].replace(true) {
            self.waiters.borrow_mut().push_back((slot, waker.clone()));
            if let Some(task) = self.task.borrow_mut().take() {
                task.wake();
            }
        }
    }

    /// Wakes up to `n` waiting connections, first come first served.
    pub fn wake(&self, n: usize) {
        let mut waiters = self.waiters.borrow_mut();
        for _ in 0..n {
            let Some((slot, waker)) = waiters.pop_front() else {
                break;
            };
            self.waiting[slot].set(false);
            waker.wake();
        }
    }

    pub fn wake_all(&self) {
        let n = self.waiters.borrow().len();
        self.wake(n);
    }

    pub fn has_waiters(&self) -> bool {
        !self.waiters.borrow().is_empty()
    }

    pub fn is_over(&self) -> bool {
        self.ended.get() || self.next.get() >= self.end.get()
    }

    /// The intended time of the next request to hand out.
    pub fn next_due(&self) -> Instant {
        self.at(self.next.get())
    }

    /// The intended time of this thread's request `j`, computed once while it is asked for.
    fn at(&self, j: u64) -> Instant {
        if let Some((k, t)) = self.asked.get()
            && k == j
        {
            return t;
        }
        let t = self.schedule.at(j);
        self.asked.set(Some((j, t)));
        t
    }

    /// Requests due by `now` that idle connections could take (at most one per waiter): one
    /// count of the schedule, not an intended time per waiter.
    pub fn due_count(&self, now: Instant) -> usize {
        let waiting = self.waiters.borrow().len() as u64;
        let (next, end) = (self.next.get(), self.end.get());
        // Intended times at or before `now`: those before the next nanosecond.
        let due = self
            .schedule
            .count_before(now + Duration::from_nanos(1))
            .min(end);
        due.saturating_sub(next).min(waiting) as usize
    }

    /// Registers the pacer task's waker (woken by the first waiter).
    pub fn park(&self, waker: &Waker) {
        *self.task.borrow_mut() = Some(waker.clone());
    }

    /// Ends the schedule now (Ctrl-C): nothing more is handed out.
    pub fn close(&self) {
        self.end.set(self.next.get().min(self.end.get()));
        self.wake_all();
    }

    /// Intended times in the measured part that were handed out, dropped or left.
    pub fn scheduled(&self) -> u64 {
        self.end.get().saturating_sub(self.recorded_from)
    }

    pub fn dropped(&self) -> u64 {
        self.dropped.get()
    }

    /// Of the recorded requests, how many are due before `at` (the timeline's per-second count).
    pub fn scheduled_before(&self, at: Instant) -> u64 {
        let due = self.schedule.count_before(at);
        due.clamp(self.recorded_from, self.end.get().max(self.recorded_from)) - self.recorded_from
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intended_times_never_drift() {
        let t0 = Instant::now();
        // 3 per second: 333,333,333.33 ns apart; the millionth is exactly 333,333 s later.
        let s = Schedule::new(t0, 3, 1);
        assert_eq!(s.at(0), t0);
        assert_eq!(s.at(1) - t0, Duration::from_nanos(333_333_333));
        assert_eq!(s.at(3) - t0, Duration::from_secs(1));
        assert_eq!(s.at(3_000_000) - t0, Duration::from_secs(1_000_000));
        // 0.5 per second = one every 2 s.
        let half = Schedule::new(t0, 1, 2);
        assert_eq!(half.at(5) - t0, Duration::from_secs(10));
    }

    #[test]
    fn counting_intended_times_before_an_instant() {
        let t0 = Instant::now();
        let s = Schedule::new(t0, 1000, 1);
        assert_eq!(s.count_before(t0), 0);
        assert_eq!(s.count_before(t0 + Duration::from_secs(10)), 10_000);
        assert_eq!(s.count_before(t0 + Duration::from_nanos(1)), 1);
        assert_eq!(s.count_before(t0 + Duration::from_millis(1)), 1);
        assert_eq!(s.count_before(t0 + Duration::from_micros(1001)), 2);
        for k in [0u64, 1, 7, 999, 12_345] {
            assert_eq!(
                s.count_before(s.at(k)),
                k,
                "at({k}) itself is not before at({k})"
            );
        }
    }

    #[test]
    fn shares_add_up_to_the_whole_schedule() {
        let t0 = Instant::now();
        let whole = Schedule::new(t0, 801, 2); // 400.5 per second
        let end = t0 + Duration::from_secs(1);
        assert_eq!(whole.global_count_before(end), 401);
        for threads in 1..=7u64 {
            let shares: Vec<Schedule> = (0..threads).map(|k| whole.share(k, threads)).collect();
            let total: u64 = shares.iter().map(|s| s.count_before(end)).sum();
            assert_eq!(total, 401, "{threads} threads");
            let mut times: Vec<Instant> = shares
                .iter()
                .flat_map(|s| (0..s.count_before(end)).map(|j| s.at(j)))
                .collect();
            times.sort();
            let expected: Vec<Instant> = (0..401).map(|i| whole.at(i)).collect();
            assert_eq!(
                times, expected,
                "{threads} threads send exactly the global schedule"
            );
        }
        assert_eq!(whole.share(2, 3).count_below(10), 3, "indices 2, 5, 8");
    }

    #[test]
    fn shards_split_over_their_threads_send_the_single_schedule_once() {
        let t0 = Instant::now();
        let mut seed = 11u64;
        let mut next = move |below: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % below
        };
        for _ in 0..200 {
            let whole = Schedule::new(t0, u128::from(next(5_000) + 1), u128::from(next(3) + 1));
            let end = t0 + Duration::from_millis(next(2_000) + 1);
            let n = whole.global_count_before(end);
            let (shards, threads) = (next(6) + 1, next(4) + 1);
            let mut indices: Vec<u64> = Vec::new();
            for shard in 0..shards {
                let mine = whole.share(shard, shards);
                let mut own = 0;
                for thread in 0..threads {
                    let part = mine.share(thread, threads);
                    own += part.count_before(end);
                    for j in 0..part.count_before(end) {
                        let at = part.at(j);
                        // The global index whose intended time this is.
                        let i = shard + shards * (thread + threads * j);
                        assert_eq!(at, whole.at(i));
                        indices.push(i);
                    }
                }
                assert_eq!(own, crate::shard::part(n, shard as u32, shards as u32));
            }
            indices.sort_unstable();
            assert_eq!(indices, (0..n).collect::<Vec<_>>(), "{shards} x {threads}");
        }
    }

    #[test]
    fn take_hands_out_due_requests_in_order_and_drops_late_ones() {
        let t0 = Instant::now();
        let p = Pacer::new(
            Schedule::new(t0, 1000, 1),
            2,
            10,
            None,
            Some(Duration::from_millis(3)),
            4,
        );
        assert_eq!(
            p.take(t0, 0),
            Take::Due {
                index: 0,
                intended: t0
            }
        );
        assert_eq!(p.take(t0, 0), Take::Wait);
        // 5 ms later: request 1 (1 ms) is 4 ms late and dropped, 2 (2 ms) is 3 ms late: sent.
        let now = t0 + Duration::from_millis(5);
        assert_eq!(
            p.take(now, 0),
            Take::Due {
                index: 2,
                intended: t0 + Duration::from_millis(2)
            }
        );
        assert_eq!(p.dropped(), 0, "request 1 was a warm-up request");
        let late = t0 + Duration::from_millis(9);
        assert_eq!(
            p.take(late, 0),
            Take::Due {
                index: 6,
                intended: t0 + Duration::from_millis(6)
            }
        );
        assert_eq!(p.dropped(), 3, "requests 3, 4 and 5");
        assert_eq!(p.scheduled(), 8);
        p.close();
        assert_eq!(p.take(late + Duration::from_secs(1), 0), Take::Over);
    }

    /// The backlog at the end of a timed run is missed, not sent during the drain: the
    /// schedule still counts it, so that scheduled = sent + dropped + missed.
    #[test]
    fn nothing_is_handed_out_after_the_deadline() {
        let t0 = Instant::now();
        // 1000 per second for 1 s: 1000 intended times, of which a busy client took 3.
        let end = t0 + Duration::from_secs(1);
        let p = Pacer::new(Schedule::new(t0, 1000, 1), 0, 1000, Some(end), None, 1);
        for j in 0..3 {
            assert!(
                matches!(p.take(t0 + Duration::from_millis(500), 0), Take::Due { index, .. } if index == j)
            );
        }
        assert!(!p.is_over());
        // A connection freed a moment before the end still takes the oldest waiting request.
        let just_before = end - Duration::from_nanos(1);
        assert!(matches!(p.take(just_before, 0), Take::Due { index: 3, .. }));
        assert_eq!(
            p.take(end, 0),
            Take::Over,
            "996 requests were waiting at the end"
        );
        assert!(p.is_over());
        assert_eq!(p.take(just_before, 0), Take::Over, "over stays over");
        assert_eq!(p.scheduled(), 1000);
        assert_eq!(p.scheduled_before(end + Duration::from_secs(1)), 1000);
    }

    /// A connection idle before the end, woken late for a request due in the window, sends it
    /// (once): spate's wake-up was late, not the connection busy.
    #[test]
    fn an_idle_connection_takes_the_request_it_waited_for_even_if_woken_after_the_end() {
        let t0 = Instant::now();
        let end = t0 + Duration::from_secs(1);
        // 2 per second for 1 s: due at 0 and 0.5 s.
        let p = Pacer::new(Schedule::new(t0, 2, 1), 0, 2, Some(end), None, 2);
        assert!(matches!(p.take(t0, 0), Take::Due { index: 0, .. }));
        assert_eq!(p.take(t0, 1), Take::Wait);
        p.wait(1, std::task::Waker::noop());
        // Its wake-up for 0.5 s came only after the end.
        let late = end + Duration::from_millis(3);
        assert!(matches!(p.take(late, 1), Take::Due { index: 1, .. }));
        assert_eq!(p.take(late, 1), Take::Over, "once");
        assert_eq!(p.take(late, 0), Take::Over, "a busy one takes nothing");
    }

    #[test]
    fn warm_up_requests_left_behind_do_not_fill_the_measured_part() {
        let t0 = Instant::now();
        // 1000 per second, the first second a warm-up: a connection that sent only request 0
        // finds, half a second into the measured part, the measured schedule, not request 1.
        let p = Pacer::new(Schedule::new(t0, 1000, 1), 1000, 2000, None, None, 1);
        assert_eq!(
            p.take(t0, 0),
            Take::Due {
                index: 0,
                intended: t0
            }
        );
        let later = t0 + Duration::from_millis(1500);
        assert_eq!(
            p.take(later, 0),
            Take::Due {
                index: 1000,
                intended: t0 + Duration::from_secs(1)
            }
        );
        assert_eq!(p.dropped(), 0, "skipped warm-up requests are not drops");
        // Still in the warm-up: its requests are handed out as they fall due.
        let q = Pacer::new(Schedule::new(t0, 1000, 1), 1000, 2000, None, None, 1);
        let early = t0 + Duration::from_millis(500);
        assert_eq!(
            q.take(early, 0),
            Take::Due {
                index: 0,
                intended: t0
            }
        );
    }

    #[test]
    fn waiters_are_woken_once_each_in_order() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        struct Count(AtomicUsize);
        impl std::task::Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let counts: Vec<Arc<Count>> = (0..3)
            .map(|_| Arc::new(Count(AtomicUsize::new(0))))
            .collect();
        let wakers: Vec<Waker> = counts.iter().map(|c| Waker::from(c.clone())).collect();
        let t0 = Instant::now();
        let p = Pacer::new(Schedule::new(t0, 1000, 1), 0, 100, None, None, 3);
        p.wait(0, &wakers[0]);
        p.wait(0, &wakers[0]);
        p.wait(2, &wakers[2]);
        assert_eq!(
            p.due_count(t0 + Duration::from_millis(10)),
            2,
            "one per waiter"
        );
        p.wake(1);
        assert_eq!(counts[0].0.load(Ordering::SeqCst), 1);
        assert_eq!(counts[2].0.load(Ordering::SeqCst), 0);
        p.wake_all();
        assert_eq!(counts[2].0.load(Ordering::SeqCst), 1);
        assert!(!p.has_waiters());
    }
}
