//! The live view of a running load thread, for the progress display: counters that the thread
//! publishes itself a few times a second (relaxed stores; it is their only writer) and the
//! latencies of the last interval, handed over under a lock at the same moments. The hot path
//! touches none of this: it records into the thread's own `LiveHist` only.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::{Failure, HIST_HIGH_NS};

/// Sub-buckets per power of two: 128 keeps every recorded value within 1/128 (< 0.8 %) of the
/// truth, finer than the three digits the display prints.
const SUB_BITS: u32 = 7;
const SUB: usize = 1 << SUB_BITS;
/// Powers of two up to the report's ceiling (one hour in ns, below 2^42).
const TOP_BIT: u32 = u64::BITS - HIST_HIGH_NS.leading_zeros();
const BUCKETS: usize = (TOP_BIT - SUB_BITS + 1) as usize * SUB;

/// A small latency histogram (ns) for the display's rolling percentiles: log-linear buckets
/// (128 per power of two, up to one hour), 37 KB. Recording is a few instructions, since it
/// runs once per request whenever the display is on; the report's exact histograms are
/// elsewhere.
#[derive(Debug, Clone)]
pub struct LiveHist {
    counts: Box<[u64; BUCKETS]>,
    total: u64,
}

impl Default for LiveHist {
    fn default() -> Self {
        LiveHist {
            counts: Box::new([0; BUCKETS]),
            total: 0,
        }
    }
}

/// The bucket of `ns`: exact below 128, then 128 buckets per power of two.
fn index(ns: u64) -> usize {
    let v = ns.min(HIST_HIGH_NS);
    if v < SUB as u64 {
        return v as usize;
    }
    let top = u64::BITS - 1 - v.leading_zeros();
    let shift = top - SUB_BITS;
    (((shift + 1) as usize) << SUB_BITS) + ((v >> shift) as usize - SUB)
}

/// The largest value that falls in bucket `i` (the value a quantile reports, as HdrHistogram's
/// highest equivalent value).
fn highest(i: usize) -> u64 {
    if i < SUB {
        return i as u64;
    }
    let shift = (i >> SUB_BITS) as u32 - 1;
    let base = ((i & (SUB - 1)) + SUB) as u64;
    ((base + 1) << shift) - 1
}

impl LiveHist {
    pub fn record(&mut self, ns: u64) {
        self.counts[index(ns)] += 1;
        self.total += 1;
    }

    pub fn add(&mut self, other: &LiveHist) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.total += other.total;
    }

    /// Removes `other`, which was added to `self` before. Saturating: the display thread must
    /// not panic even if that promise were broken.
    pub fn subtract(&mut self, other: &LiveHist) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a = a.saturating_sub(*b);
        }
        self.total = self.total.saturating_sub(other.total);
    }

    pub fn reset(&mut self) {
        if self.total > 0 {
            self.counts.fill(0);
            self.total = 0;
        }
    }

    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Value at quantile `q` in ns (the highest value of the bucket holding the sample of rank
    /// ceil(q * n)), or `None` without samples.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(highest(i));
            }
        }
        Some(highest(BUCKETS - 1))
    }
}

/// Counters of one thread at one moment (or summed over threads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    pub attempts: u64,
    pub completed: u64,
    pub failures: [u64; Failure::ALL.len()],
    /// Connections open right now.
    pub open: u64,
    /// Connects that failed (timed out, refused...), before the clock or during the run.
    pub connect_failures: u64,
    /// Completed responses with a status of 400 or above.
    pub error_status: u64,
}

// By hand: the standard library derives `Default` for arrays of at most 32.
impl Default for Counters {
    fn default() -> Counters {
        Counters {
            attempts: 0,
            completed: 0,
            failures: [0; Failure::ALL.len()],
            open: 0,
            connect_failures: 0,
            error_status: 0,
        }
    }
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
        self.connect_failures += o.connect_failures;
        self.error_status += o.error_status;
    }
}

/// What one load thread shares with the display.
#[derive(Debug)]
pub struct Live {
    attempts: AtomicU64,
    completed: AtomicU64,
    failures: [AtomicU64; Failure::ALL.len()],
    open: AtomicU64,
    connect_failures: AtomicU64,
    error_status: AtomicU64,
    /// Latencies published since the display last took them.
    interval: Mutex<LiveHist>,
}

// By hand: the standard library derives `Default` for arrays of at most 32.
impl Default for Live {
    fn default() -> Live {
        Live {
            attempts: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            failures: std::array::from_fn(|_| AtomicU64::new(0)),
            open: AtomicU64::new(0),
            connect_failures: AtomicU64::new(0),
            error_status: AtomicU64::new(0),
            interval: Mutex::default(),
        }
    }
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
        self.connect_failures.store(c.connect_failures, Relaxed);
        self.error_status.store(c.error_status, Relaxed);
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
            connect_failures: self.connect_failures.load(Relaxed),
            error_status: self.error_status.load(Relaxed),
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
            connect_failures: 3,
            error_status: 4,
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
    fn buckets_cover_every_value_within_one_128th() {
        for v in (0..5_000u64)
            .chain((0..64).map(|k| 1u64 << k))
            .chain([HIST_HIGH_NS, u64::MAX])
        {
            let i = index(v);
            assert!(i < BUCKETS, "{v}");
            let clamped = v.min(HIST_HIGH_NS);
            let hi = highest(i);
            assert!(hi >= clamped, "{v}: bucket top {hi}");
            assert!((hi - clamped) as f64 <= clamped as f64 / 128.0, "{v}: {hi}");
        }
        // Bucket tops are exactly the values just below the next bucket's first value (up to the
        // bucket of the ceiling, where larger values are clamped).
        for i in 0..index(HIST_HIGH_NS) {
            assert_eq!(index(highest(i)), i);
            assert_eq!(index(highest(i) + 1), i + 1);
        }
    }

    #[test]
    fn quantiles_match_a_sorted_list() {
        let mut h = LiveHist::default();
        let values: Vec<u64> = (1..=1000).map(|k| k * 1_000).collect();
        for &v in values.iter().rev() {
            h.record(v);
        }
        for q in [0.01, 0.5, 0.9, 0.99, 1.0] {
            let exact = values[((q * 1000.0) as usize).max(1) - 1];
            let got = h.quantile(q).unwrap();
            assert!(
                got >= exact && got - exact <= exact / 128,
                "q {q}: {got} vs {exact}"
            );
        }
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
