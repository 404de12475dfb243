//! The run over time: one entry per second of the measured window. Each load thread's sweeper
//! takes the differences of its cumulative counters and histograms at every second (`Recorder`),
//! so nothing is added per request; the threads' seconds are added up when the run ends, and the
//! `Summary` reads percentiles from them (`Entry`). Knows nothing of sockets or threads.

use std::collections::BTreeMap;
use std::ops::AddAssign;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::hist::Sparse;
use super::{Failure, Hist, Stats};

/// One second of one thread or, added up, of the run: what changed in it.
#[derive(Debug, Clone)]
pub struct Second {
    /// Offset of its start from the start of the measured window, and its length, in ns (the
    /// last second of a run may be shorter).
    pub start_ns: u64,
    pub span_ns: u64,
    pub completed: u64,
    /// Of `completed`, those with a status of 400 or more.
    pub error_status: u64,
    /// Of `completed`, those of each status class (`super::status_class`).
    pub classes: [u64; 5],
    /// A request list's rows (`super::EntryStats`): each one's completed and failed in it. The
    /// last second of a thread counts its drain here (it is the metrics', which end with the
    /// run's own figures).
    pub rows: Vec<[u64; 2]>,
    pub failures: [u64; Failure::ALL.len()],
    pub bytes_in: u64,
    /// Recorded attempts admitted (open model: requests sent).
    pub sent: u64,
    /// Connections open when it ended.
    pub open: u64,
    /// Open model: requests due in it, and those dropped for --max-lag.
    pub scheduled: u64,
    pub dropped: u64,
    /// Latencies of the responses completed in it, and (open model) send lags of the requests
    /// sent in it: bucket counts.
    pub latency: Sparse,
    pub lag: Sparse,
}

// By hand: the standard library derives `Default` for arrays of at most 32.
impl Default for Second {
    fn default() -> Second {
        Second {
            start_ns: 0,
            span_ns: 0,
            completed: 0,
            error_status: 0,
            classes: [0; 5],
            rows: Vec::new(),
            failures: [0; Failure::ALL.len()],
            bytes_in: 0,
            sent: 0,
            open: 0,
            scheduled: 0,
            dropped: 0,
            latency: Sparse::default(),
            lag: Sparse::default(),
        }
    }
}

impl AddAssign<&Second> for Second {
    fn add_assign(&mut self, o: &Second) {
        self.span_ns = self.span_ns.max(o.span_ns);
        self.completed += o.completed;
        self.error_status += o.error_status;
        for (a, b) in self.classes.iter_mut().zip(o.classes) {
            *a += b;
        }
        add_rows(&mut self.rows, &o.rows);
        for (a, b) in self.failures.iter_mut().zip(o.failures) {
            *a += b;
        }
        self.bytes_in += o.bytes_in;
        self.sent += o.sent;
        self.open += o.open;
        self.scheduled += o.scheduled;
        self.dropped += o.dropped;
        self.latency.extend_from_slice(&o.latency);
        self.lag.extend_from_slice(&o.lag);
    }
}

/// Adds the rows `b` to `a`, row by row.
pub fn add_rows(a: &mut Vec<[u64; 2]>, b: &[[u64; 2]]) {
    if a.len() < b.len() {
        a.resize(b.len(), [0; 2]);
    }
    for (x, y) in a.iter_mut().zip(b) {
        x[0] += y[0];
        x[1] += y[1];
    }
}

/// Adds `b`'s seconds to `a`'s, second by second.
pub fn add(a: &mut Vec<Second>, b: &[Second]) {
    for (i, s) in b.iter().enumerate() {
        match a.get_mut(i) {
            Some(mine) => *mine += s,
            None => a.push(s.clone()),
        }
    }
}

/// Cumulative figures of a thread that are not in its `Stats`, read at each second.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gauges {
    /// HTTP/2 bytes received, counted per connection.
    pub h2_bytes_in: u64,
    pub open: u64,
    pub scheduled: u64,
    pub dropped: u64,
}

/// A thread's timeline in the making: the cumulative state at the last second, to take the
/// next second's differences from.
#[derive(Debug)]
pub struct Recorder {
    window_start: Instant,
    /// Where the measured window ends, when known (duration mode): the last second ends there.
    window_end: Option<Instant>,
    taken_ns: u64,
    latency: Hist,
    lag: Hist,
    completed: u64,
    error_status: u64,
    classes: [u64; 5],
    rows: Vec<[u64; 2]>,
    failures: [u64; Failure::ALL.len()],
    bytes_in: u64,
    attempts: u64,
    gauges: Gauges,
    pub seconds: Vec<Second>,
}

impl Recorder {
    /// From the start of the measured window, when nothing is recorded yet.
    pub fn new(window_start: Instant, window_end: Option<Instant>) -> Recorder {
        Recorder {
            window_start,
            window_end,
            taken_ns: 0,
            latency: Hist::new(),
            lag: Hist::new(),
            completed: 0,
            error_status: 0,
            classes: [0; 5],
            rows: Vec::new(),
            failures: [0; Failure::ALL.len()],
            bytes_in: 0,
            attempts: 0,
            gauges: Gauges::default(),
            seconds: Vec::new(),
        }
    }

    /// When the next second ends, if the window has one more.
    pub fn next_at(&self) -> Option<Instant> {
        let taken = self.window_start + Duration::from_nanos(self.taken_ns);
        let next = taken + Duration::from_secs(1);
        match self.window_end {
            Some(end) if taken >= end => None,
            Some(end) => Some(next.min(end)),
            None => Some(next),
        }
    }

    /// The window ends at `end` (a stop request): the last second ends there.
    pub fn end_window(&mut self, end: Instant) {
        self.window_end = Some(self.window_end.map_or(end, |e| e.min(end)));
    }

    /// Takes the second (or what is left of it) that ended at `at`, if `at` is past its end
    /// (or `last`: the thread is done) and the window has it; `gauges` reads the figures outside
    /// `stats` as of the second's end.
    pub fn take(
        &mut self,
        at: Instant,
        last: bool,
        stats: &Stats,
        gauges: impl FnOnce(Instant) -> Gauges,
    ) {
        let Some(due) = self.next_at() else {
            return;
        };
        if at < due && !last {
            return;
        }
        let end = match last {
            true => at.min(due),
            false => due,
        };
        let gauges = gauges(end);
        let end_ns = super::nanos(end.saturating_duration_since(self.window_start));
        let bytes_in = stats.bytes_in + gauges.h2_bytes_in;
        let failures = stats.failures.counts();
        let error_status = stats.error_status() - stats.drained_error_status();
        let all = stats.classes();
        let classes: [u64; 5] = std::array::from_fn(|i| all[i] - stats.drained_classes[i]);
        let second = Second {
            start_ns: self.taken_ns,
            span_ns: end_ns.saturating_sub(self.taken_ns),
            completed: stats.completed - stats.drained - self.completed,
            error_status: error_status - self.error_status,
            classes: std::array::from_fn(|i| classes[i] - self.classes[i]),
            rows: stats
                .per_entry
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let was = self.rows.get(i).copied().unwrap_or_default();
                    [e.completed - was[0], e.failed - was[1]]
                })
                .collect(),
            failures: std::array::from_fn(|i| failures[i] - self.failures[i]),
            bytes_in: bytes_in - self.bytes_in,
            sent: stats.attempts - self.attempts,
            open: gauges.open,
            scheduled: gauges.scheduled - self.gauges.scheduled,
            dropped: gauges.dropped - self.gauges.dropped,
            latency: stats.latency.since(&mut self.latency),
            lag: stats.lag.since(&mut self.lag),
        };
        self.taken_ns = end_ns;
        // Responses after the window's end (the drain) are not the window's, even when they
        // came before the sweeper took its last second.
        self.completed = stats.completed - stats.drained;
        self.error_status = error_status;
        self.classes = classes;
        self.rows = stats
            .per_entry
            .iter()
            .map(|e| [e.completed, e.failed])
            .collect();
        self.failures = failures;
        self.bytes_in = bytes_in;
        self.attempts = stats.attempts;
        self.gauges = gauges;
        // A last piece with nothing in it and no length is no second.
        if !(last && second.span_ns == 0) {
            self.seconds.push(second);
        }
    }
}

/// The run's `seconds` as the result shows them (the targets of a connection profile among
/// them): the report's timeline, and --live-json's lines one by one.
pub fn entries(plan: &crate::plan::Plan, seconds: &[Second]) -> Vec<Entry> {
    super::stage_rows::with_targets(
        plan,
        seconds
            .iter()
            .map(|sec| Entry::of(sec, plan.is_open()))
            .collect(),
    )
}

/// One second of the run as the result shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    /// Its start, seconds from the start of the measured window, and its length.
    pub t_s: f64,
    pub span_s: f64,
    pub completed: u64,
    /// Of `completed`, the responses with a status of 400 or more; a result without the field
    /// reads as 0.
    #[serde(default)]
    pub error_status: u64,
    pub failed: u64,
    /// Failures by class; only the classes that occurred.
    pub failures: BTreeMap<String, u64>,
    pub bytes_in: u64,
    /// Of the responses completed in it; null when none completed.
    pub latency_ms: Option<Quantiles>,
    /// Connections open at its end.
    pub connections_open: u64,
    /// --stages of connections: the connections the profile's target averaged over it; null
    /// otherwise.
    #[serde(default)]
    pub target_connections: Option<f64>,
    /// Open model: requests due, sent and dropped in it, and the p99 of their send lag; null in
    /// the closed model.
    pub scheduled: Option<u64>,
    pub sent: u64,
    pub dropped: Option<u64>,
    pub lag_p99_ms: Option<f64>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Quantiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Quantiles {
    /// The quantiles of bucket counts `sparse` (nanoseconds), in ms.
    pub fn of_sparse(sparse: &Sparse) -> Quantiles {
        let ms = |ns: u64| ns as f64 / 1e6;
        let h = Hist::of_sparse(sparse);
        Quantiles {
            p50: ms(h.value_at_quantile(0.5)),
            p90: ms(h.value_at_quantile(0.9)),
            p99: ms(h.value_at_quantile(0.99)),
            max: ms(h.max()),
        }
    }
}

impl Entry {
    pub fn of(s: &Second, open_model: bool) -> Entry {
        let ms = |ns: u64| ns as f64 / 1e6;
        let latency = (!s.latency.is_empty()).then(|| Quantiles::of_sparse(&s.latency));
        let lag = (open_model && !s.lag.is_empty())
            .then(|| ms(Hist::of_sparse(&s.lag).value_at_quantile(0.99)));
        Entry {
            t_s: s.start_ns as f64 / 1e9,
            span_s: s.span_ns as f64 / 1e9,
            completed: s.completed,
            error_status: s.error_status,
            failed: s.failures.iter().sum(),
            failures: Failure::ALL
                .iter()
                .zip(s.failures)
                .filter(|(_, n)| *n > 0)
                .map(|(f, n)| (f.name().to_owned(), n))
                .collect(),
            bytes_in: s.bytes_in,
            latency_ms: latency,
            connections_open: s.open,
            target_connections: None,
            scheduled: open_model.then_some(s.scheduled),
            sent: s.sent,
            dropped: open_model.then_some(s.dropped),
            lag_p99_ms: lag,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn each_second_holds_what_changed_in_it_and_the_window_ends_where_it_ends() {
        let t0 = Instant::now();
        let mut rec = Recorder::new(t0, Some(t0 + Duration::from_millis(2_500)));
        let mut s = Stats::default();
        let gauges = |open| {
            move |_| Gauges {
                open,
                ..Gauges::default()
            }
        };
        for (ms, status) in [(1, 200), (2, 503), (3, 404)] {
            s.latency.record(ms * MS);
            s.completed += 1;
            s.count_status(status);
        }
        s.failures.add(Failure::Timeout);
        // Not yet a second: nothing taken.
        rec.take(t0 + Duration::from_millis(999), false, &s, gauges(4));
        assert!(rec.seconds.is_empty());
        assert_eq!(rec.next_at(), Some(t0 + Duration::from_secs(1)));
        rec.take(t0 + Duration::from_millis(1_001), false, &s, gauges(4));
        s.latency.record(2_000 * MS);
        s.completed += 1;
        s.count_status(500);
        rec.take(t0 + Duration::from_secs(2), false, &s, gauges(3));
        // The last second is half of one: the window ends at 2.5 s.
        assert_eq!(rec.next_at(), Some(t0 + Duration::from_millis(2_500)));
        rec.take(t0 + Duration::from_secs(3), false, &s, gauges(2));
        assert_eq!(rec.next_at(), None);
        // After the window (the drain): nothing more, even at the thread's end.
        s.completed += 5;
        s.drained += 5;
        for _ in 0..5 {
            s.count_status(500);
        }
        s.drained_classes[4] += 5;
        rec.take(t0 + Duration::from_secs(4), true, &s, gauges(0));

        let got: Vec<(u64, u64, u64, u64, u64)> = rec
            .seconds
            .iter()
            .map(|x| {
                (
                    x.start_ns,
                    x.span_ns,
                    x.completed,
                    x.failures.iter().sum(),
                    x.open,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (0, 1_000 * MS, 3, 1, 4),
                (1_000 * MS, 1_000 * MS, 1, 0, 3),
                (2_000 * MS, 500 * MS, 0, 0, 2),
            ]
        );
        let errors: Vec<u64> = rec.seconds.iter().map(|x| x.error_status).collect();
        assert_eq!(errors, [2, 1, 0], "the 503 and the 404, then the 500");
        let classes: Vec<[u64; 5]> = rec.seconds.iter().map(|x| x.classes).collect();
        assert_eq!(
            classes,
            [[0, 1, 0, 1, 1], [0, 0, 0, 0, 1], [0; 5]],
            "by class, the drain's 500s in none"
        );
        let e = Entry::of(&rec.seconds[0], false);
        assert_eq!(e.error_status, 2);
        let q = e.latency_ms.unwrap();
        assert_eq!((e.failures["timeout"], e.failed), (1, 1));
        assert!(
            (q.p50 - 2.0).abs() < 0.01 && (q.max - 3.0).abs() < 0.01,
            "{q:?}"
        );
        let e = Entry::of(&rec.seconds[1], false);
        assert!((e.latency_ms.unwrap().max - 2_000.0).abs() < 2.0);
        assert!(Entry::of(&rec.seconds[2], false).latency_ms.is_none());
        assert_eq!(e.scheduled, None);
    }

    #[test]
    fn a_count_run_ends_its_last_second_when_the_thread_ends() {
        let t0 = Instant::now();
        let mut rec = Recorder::new(t0, None);
        let s = Stats {
            completed: 7,
            ..Stats::default()
        };
        rec.take(t0 + Duration::from_millis(300), true, &s, |_| {
            Gauges::default()
        });
        assert_eq!(rec.seconds.len(), 1);
        assert_eq!(
            (rec.seconds[0].span_ns, rec.seconds[0].completed),
            (300 * MS, 7)
        );
    }

    #[test]
    fn threads_add_up_second_by_second() {
        let one = |completed, at| Second {
            completed,
            span_ns: 1_000 * MS,
            latency: vec![(at, 1)],
            ..Second::default()
        };
        let mut a = vec![one(1, 5)];
        add(&mut a, &[one(2, 7), one(3, 9)]);
        assert_eq!(a.iter().map(|s| s.completed).collect::<Vec<_>>(), [3, 3]);
        assert_eq!(a[0].latency, [(5, 1), (7, 1)]);
    }
}
