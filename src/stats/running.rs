//! The run's figures so far, for a metrics endpoint scraped while it goes: counters added up
//! from the seconds every load thread has closed, the latency and send lag as counts under
//! fixed bounds (10 µs to 5 min), gauges of the last second; and, once the run is over, the
//! whole run's own figures, so that the last scrape equals the report. Knows nothing of the
//! exposition format or of sockets.

use super::timeline::Second;
use super::{Failure, Hist, Sparse, Stats};

/// The bounds of the latency and send-lag buckets, in ns: 10 µs to 5 min, 1-2.5-5 a decade up
/// to 10 s, then 30 s, 1, 2 and 5 min.
pub const BOUNDS_NS: [u64; 23] = [
    10_000,
    25_000,
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    10_000_000_000,
    30_000_000_000,
    60_000_000_000,
    120_000_000_000,
    300_000_000_000,
];

/// Values counted by bucket: `counts[k]` holds those at most `BOUNDS_NS[k]` and above the bound
/// before; the last, those above every bound. A value is taken as its HDR bucket's lowest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Buckets {
    pub counts: [u64; BOUNDS_NS.len() + 1],
    pub sum_ns: u128,
}

impl Buckets {
    /// Adds the values of `sparse`.
    pub fn add(&mut self, sparse: &Sparse) {
        for &(i, n) in sparse {
            let v = Hist::floor_of(i);
            let k = BOUNDS_NS.partition_point(|&b| b < v);
            self.counts[k] += n;
            self.sum_ns += u128::from(v) * u128::from(n);
        }
    }

    /// Every value counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// What the run did so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Running {
    /// Requests sent (attempts admitted).
    pub sent: u64,
    /// Responses completed, by status class (`super::status_class`).
    pub classes: [u64; 5],
    /// A request list's rows: each one's completed and failed.
    pub rows: Vec<[u64; 2]>,
    pub failures: [u64; Failure::ALL.len()],
    pub bytes_in: u64,
    pub latency: Buckets,
    /// The open model's send lag.
    pub lag: Buckets,
    /// Connections open at the last second's end.
    pub open: u64,
    /// The open model: requests due in the last second, per second of it.
    pub target_rate: Option<f64>,
    /// A connection profile: its target over the last second.
    pub target_connections: Option<f64>,
    /// Seconds of the measured window closed so far.
    pub seconds: u64,
    /// The run is over: the figures are the whole run's, the report's.
    pub over: bool,
}

impl Default for Running {
    fn default() -> Running {
        Running {
            sent: 0,
            classes: [0; 5],
            rows: Vec::new(),
            failures: [0; Failure::ALL.len()],
            bytes_in: 0,
            latency: Buckets::default(),
            lag: Buckets::default(),
            open: 0,
            target_rate: None,
            target_connections: None,
            seconds: 0,
            over: false,
        }
    }
}

impl Running {
    /// The run's next closed second, `s`, whose connection target was `target_connections`;
    /// `open_model`: its requests were due on a schedule.
    pub fn add(&mut self, s: &Second, target_connections: Option<f64>, open_model: bool) {
        self.sent += s.sent;
        for (a, b) in self.classes.iter_mut().zip(s.classes) {
            *a += b;
        }
        super::timeline::add_rows(&mut self.rows, &s.rows);
        for (a, b) in self.failures.iter_mut().zip(s.failures) {
            *a += b;
        }
        self.bytes_in += s.bytes_in;
        self.latency.add(&s.latency);
        self.lag.add(&s.lag);
        self.open = s.open;
        self.target_rate =
            (open_model && s.span_ns > 0).then(|| s.scheduled as f64 / (s.span_ns as f64 / 1e9));
        self.target_connections = target_connections;
        self.seconds += 1;
    }

    /// The run is over, and `stats` is what it did in all (the drain included): every counter
    /// becomes the report's. Never lower than before, since the seconds are part of it.
    pub fn finish(&mut self, stats: &Stats) {
        self.sent = stats.attempts;
        self.classes = stats.classes();
        self.rows = stats
            .per_entry
            .iter()
            .map(|e| [e.completed, e.failed])
            .collect();
        self.failures = stats.failures.counts();
        self.bytes_in = stats.bytes_in;
        self.latency = Buckets::default();
        self.latency.add(&stats.latency.sparse());
        self.lag = Buckets::default();
        self.lag.add(&stats.lag.sparse());
        self.over = true;
    }

    /// Responses completed.
    pub fn completed(&self) -> u64 {
        self.classes.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_fall_under_the_first_bound_they_do_not_pass() {
        let mut h = Hist::new();
        for ns in [1, 10_007, 10_008, 299_000_000_000, 400_000_000_000] {
            h.record(ns);
        }
        let mut b = Buckets::default();
        b.add(&h.sparse());
        assert_eq!(
            b.counts[0], 2,
            "1 ns, and 10 µs to its HDR bucket (8 ns wide there)"
        );
        assert_eq!(b.counts[1], 1, "the next bucket up");
        assert_eq!(b.counts[BOUNDS_NS.len() - 1], 1, "under 5 min");
        assert_eq!(b.counts[BOUNDS_NS.len()], 1, "over every bound");
        assert_eq!(b.total(), 5);
        assert!(BOUNDS_NS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn the_last_figures_are_the_whole_runs() {
        let mut s = Stats::default();
        for (status, ns) in [(200, 1_000_000), (503, 2_000_000), (200, 3_000_000)] {
            s.count_status(status);
            s.completed += 1;
            s.attempts += 1;
            s.latency.record(ns);
        }
        let mut r = Running::default();
        let second = Second {
            span_ns: 1_000_000_000,
            sent: 2,
            classes: [0, 1, 0, 0, 1],
            scheduled: 50,
            open: 3,
            ..Second::default()
        };
        r.add(&second, Some(3.0), true);
        assert_eq!((r.sent, r.completed(), r.open), (2, 2, 3));
        assert_eq!(
            (r.target_rate, r.target_connections),
            (Some(50.0), Some(3.0))
        );
        r.finish(&s);
        assert_eq!((r.sent, r.completed(), r.latency.total()), (3, 3, 3));
        assert_eq!(r.classes, [0, 2, 0, 0, 1]);
        assert!(r.over);
    }
}
