//! The live view of a running load thread, for the progress display: counters that the thread
//! publishes itself a few times a second (relaxed stores; it is their only writer) and the
//! latencies of the last interval, handed over under a lock at the same moments. The hot path
//! touches none of this: it records into the thread's own `LiveHist` only.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use hdrhistogram::Histogram;

use super::{Failure, HIST_HIGH_NS, HIST_LOW_NS};

/// Two significant digits are plenty for a display and keep one histogram near 37 KB, cheap to
/// hand over ten times a second.
const LIVE_SIGFIG: u8 = 2;

/// A small latency histogram (ns) for the display's rolling percentiles.
#[derive(Debug, Clone)]
pub struct LiveHist(Histogram<u64>);

impl Default for LiveHist {
    fn default() -> Self {
        LiveHist(
            Histogram::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, LIVE_SIGFIG)
                .expect("constant histogram bounds are valid"),
        )
    }
}

impl LiveHist {
    pub fn record(&mut self, ns: u64) {
        self.0.saturating_record(ns);
    }

    pub fn add(&mut self, other: &LiveHist) {
        // Same configuration on both sides: cannot fail.
        let _ = self.0.add(&other.0);
    }

    pub fn subtract(&mut self, other: &LiveHist) {
        // `other` was added to `self` before: cannot fail.
        let _ = self.0.subtract(&other.0);
    }

    pub fn reset(&mut self) {
        self.0.reset();
    }

    pub fn len(&self) -> u64 {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Value at quantile `q` in ns, or `None` without samples.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        (!self.0.is_empty()).then(|| self.0.value_at_quantile(q))
    }
}

/// Counters of one thread at one moment (or summed over threads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub attempts: u64,
    pub completed: u64,
    pub failures: [u64; Failure::ALL.len()],
    /// Connections open right now.
    pub open: u64,
}

impl Counters {
    pub fn failed(&self) -> u64 {
        self.failures.iter().sum()
    }

    pub fn add(&mut self, o: &Counters) {
        self.attempts += o.attempts;
        self.completed += o.completed;
        for (a, b) in self.failures.iter_mut().zip(o.failures) {
            *a += b;
        }
        self.open += o.open;
    }
}

/// What one load thread shares with the display.
#[derive(Debug, Default)]
pub struct Live {
    attempts: AtomicU64,
    completed: AtomicU64,
    failures: [AtomicU64; Failure::ALL.len()],
    open: AtomicU64,
    /// Latencies published since the display last took them.
    interval: Mutex<LiveHist>,
}

impl Live {
    /// Called by the load thread: stores its counters and hands over (then clears) the
    /// latencies of the interval that just ended.
    pub fn publish(&self, c: &Counters, interval: &mut LiveHist) {
        self.attempts.store(c.attempts, Relaxed);
        self.completed.store(c.completed, Relaxed);
        for (a, b) in self.failures.iter().zip(c.failures) {
            a.store(b, Relaxed);
        }
        self.open.store(c.open, Relaxed);
        if !interval.is_empty() {
            self.interval
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .add(interval);
            interval.reset();
        }
    }

    /// Called by the display: the counters as last published.
    pub fn counters(&self) -> Counters {
        Counters {
            attempts: self.attempts.load(Relaxed),
            completed: self.completed.load(Relaxed),
            failures: std::array::from_fn(|i| self.failures[i].load(Relaxed)),
            open: self.open.load(Relaxed),
        }
    }

    /// Called by the display: adds the latencies published since the last call to `into`.
    pub fn take_interval(&self, into: &mut LiveHist) {
        let mut shared = self.interval.lock().unwrap_or_else(|e| e.into_inner());
        into.add(&shared);
        shared.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_then_read() {
        let live = Live::default();
        let mut iv = LiveHist::default();
        iv.record(1_000_000);
        iv.record(3_000_000);
        let mut c = Counters {
            attempts: 5,
            completed: 4,
            open: 2,
            ..Counters::default()
        };
        c.failures[Failure::Timeout as usize] = 1;
        live.publish(&c, &mut iv);
        assert!(iv.is_empty(), "the thread's interval starts afresh");
        assert_eq!(live.counters(), c);
        let mut got = LiveHist::default();
        live.take_interval(&mut got);
        assert_eq!(got.len(), 2);
        let mut again = LiveHist::default();
        live.take_interval(&mut again);
        assert!(again.is_empty(), "taken once");
    }

    #[test]
    fn live_hist_is_small_and_windows_subtract() {
        let mut a = LiveHist::default();
        assert!(std::mem::size_of_val(&a) < 1024);
        a.record(2_000);
        let mut w = LiveHist::default();
        w.add(&a);
        w.add(&a);
        w.subtract(&a);
        assert_eq!(w.len(), 1);
        assert!(w.quantile(0.5).unwrap() >= 2_000);
        assert_eq!(LiveHist::default().quantile(0.5), None);
    }
}
