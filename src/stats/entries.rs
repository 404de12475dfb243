//! A request list's figures per request: how many completed and failed, the status codes, and
//! the latency in a compact histogram (two significant digits: a list of 32 requests costs
//! 32 of them per thread, not 32 of the run's 270 KiB ones). Requests past
//! `request_list::MAX_TRACKED` share the last place, "other". Recorded after each attempt;
//! must not know the engine.

use hdrhistogram::Histogram;

use super::{Failure, HIST_HIGH_NS, HIST_LOW_NS};

/// One request's figures (or the others').
#[derive(Debug, Clone)]
pub struct EntryStats {
    pub completed: u64,
    pub failed: u64,
    /// Responses by status code, in the order first seen.
    pub status: Vec<(u16, u64)>,
    /// Latency of completed responses, and of MCP calls whose answer failed them, ns.
    pub latency: Histogram<u64>,
    /// Failures by class, in the order first seen.
    pub failures: Vec<(Failure, u64)>,
    /// MCP: notifications that came before the answers, and how many were progress.
    pub notifications: u64,
    pub progress: u64,
}

impl Default for EntryStats {
    fn default() -> Self {
        EntryStats {
            completed: 0,
            failed: 0,
            status: Vec::new(),
            latency: Histogram::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, 2)
                .expect("constant histogram bounds are valid"),
            failures: Vec::new(),
            notifications: 0,
            progress: 0,
        }
    }
}

impl EntryStats {
    pub fn completed(&mut self, status: u16, latency_ns: u64) {
        self.completed += 1;
        self.latency.saturating_record(latency_ns);
        match self.status.iter_mut().find(|(c, _)| *c == status) {
            Some((_, n)) => *n += 1,
            None => self.status.push((status, 1)),
        }
    }

    /// A failed attempt's answer came after `latency_ns` (an MCP tool's error).
    pub fn answered(&mut self, latency_ns: u64) {
        self.latency.saturating_record(latency_ns);
    }

    pub fn failed(&mut self, class: Failure) {
        self.failed += 1;
        count(&mut self.failures, class, 1);
    }

    /// Notifications before an answer: `n`, of which `progress` were progress.
    pub fn noted(&mut self, n: u32, progress: u32) {
        self.notifications += u64::from(n);
        self.progress += u64::from(progress);
    }

    pub fn add(&mut self, o: &EntryStats) {
        self.completed += o.completed;
        self.failed += o.failed;
        for &(c, n) in &o.failures {
            count(&mut self.failures, c, n);
        }
        self.notifications += o.notifications;
        self.progress += o.progress;
        for &(code, n) in &o.status {
            match self.status.iter_mut().find(|(c, _)| *c == code) {
                Some((_, m)) => *m += n,
                None => self.status.push((code, n)),
            }
        }
        // Same bounds on both sides: adding cannot fail.
        let _ = self.latency.add(&o.latency);
    }
}

fn count(into: &mut Vec<(Failure, u64)>, class: Failure, n: u64) {
    match into.iter_mut().find(|(c, _)| *c == class) {
        Some((_, m)) => *m += n,
        None => into.push((class, n)),
    }
}

/// Adds `o`'s entries to `into`'s, place by place.
pub fn merge(into: &mut Vec<EntryStats>, o: &[EntryStats]) {
    if into.len() < o.len() {
        into.resize_with(o.len(), EntryStats::default);
    }
    for (a, b) in into.iter_mut().zip(o) {
        a.add(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_add_up_place_by_place() {
        let mut a = vec![EntryStats::default()];
        a[0].completed(200, 1_000_000);
        let mut b = vec![EntryStats::default(), EntryStats::default()];
        b[0].completed(404, 2_000_000);
        b[0].completed(200, 3_000_000);
        b[1].failed += 1;
        merge(&mut a, &b);
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].completed, 3);
        assert_eq!(a[0].status, [(200, 2), (404, 1)]);
        assert_eq!(a[0].latency.len(), 3);
        assert_eq!(a[1].failed, 1);
        // Two significant digits: within 1 %.
        let p50 = a[0].latency.value_at_quantile(0.5) as f64;
        assert!((p50 / 2_000_000.0 - 1.0).abs() < 0.01, "{p50}");
    }
}
