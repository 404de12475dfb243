//! `Summary`: the numbers of a run as plain serializable data, the measured part of the JSON
//! (described by docs/output-schema.json); `report::Report` adds the judgements. The text report
//! is rendered from it, so text and JSON always show the same numbers.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::config::config;
use super::connections::connections;
use super::generator::generator;
use super::hist::{Sparse, base64_v2};
use super::open_model::open_model;
use super::timeline::Entry;
use super::{Config, Connections, Failure, Generator, Hist, OpenModel, RunOutput, Stats};
use crate::plan::Plan;

/// Bumped whenever a field changes meaning or disappears (adding one does not bump it).
pub const SCHEMA_VERSION: u32 = 2;

/// Histogram bins in the report unless `--hist-bins` says otherwise.
pub const HISTOGRAM_BINS: usize = 11;

/// Read back from a saved result by `report::Report::from_json`; written as part of a report.
#[derive(Debug, Clone, Deserialize)]
pub struct Summary {
    pub schema_version: u32,
    pub spate_version: String,
    pub config: Config,
    pub totals: Totals,
    pub requests: Requests,
    pub latency: Latency,
    pub histogram: Vec<Bin>,
    pub status_codes: Vec<StatusRow>,
    pub errors: Vec<ErrorRow>,
    pub phases: Phases,
    pub connections: Connections,
    /// Facts about spate itself during the run.
    pub generator: Generator,
    /// The open model's schedule and how well it was kept; null in the closed model.
    pub open_model: Option<OpenModel>,
    /// --stream: what the measured streams did; null without --stream.
    #[serde(default)]
    pub streaming: Option<super::Streaming>,
    /// A request list: each request's figures, in the list's order (the requests past the
    /// first `request_list::MAX_TRACKED` together, last); empty without a list.
    #[serde(default)]
    pub per_url: Vec<super::UrlRow>,
    /// `spate mcp`: the server, the transport and a row per tool; null otherwise.
    #[serde(default)]
    pub mcp: Option<super::McpSummary>,
    /// `spate grpc`: the call and its calls by gRPC status; null otherwise.
    #[serde(default)]
    pub grpc: Option<super::GrpcSummary>,
    /// When the measured window began, in ms since the Unix epoch.
    pub start_unix_ms: u64,
    /// The measured window second by second.
    pub timeline: Vec<Entry>,
    /// `--stages`: each stage's results, from the timeline's seconds; empty without a profile.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<super::StageRow>,
    /// Each second's latency histogram, for `--hdr-log` (not in the JSON: the log is its form).
    #[serde(skip)]
    pub second_latencies: Vec<Sparse>,
    /// Why nothing was measured (the target was unreachable, the setup failed); null when the
    /// run ran. Every other field then holds the zeros of a run that did not start.
    pub error: Option<RunFailure>,
}

/// Why a run did not start, for programs that read the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFailure {
    /// A stable word: `unreachable`, `resolve`, `tls_setup`, `plan`, `request`, `file_limit`,
    /// `threads`, `script`; `not_mcp` when `spate mcp`'s server answered but not as an MCP
    /// server of the revision spate speaks.
    pub kind: String,
    /// The same line spate printed on stderr.
    pub message: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Totals {
    /// The measured window: -z (or until the stop request), or the time a count run took.
    pub elapsed_s: f64,
    /// Responses completed within the window, per second of it.
    pub requests_per_sec: f64,
    /// After the window, the wait for requests still in flight (at most min(--timeout, 1 s)).
    pub drain_s: f64,
    /// Responses that completed in the drain: in `requests.completed` and the latencies, not in
    /// the rate.
    pub completed_in_drain: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub body_bytes: u64,
    pub body_bytes_per_response: Option<f64>,
    pub bytes_in_per_sec: f64,
    /// The longest time without a completed response (ms), seen by every load thread, and when
    /// it began (s from the start of the measurement); null with fewer than two responses.
    pub longest_gap_ms: Option<f64>,
    pub longest_gap_at_s: Option<f64>,
    /// How the rate spread over the load threads (wrk's per-thread Req/Sec); null with one.
    pub per_thread: Option<ThreadRates>,
}

/// Requests per second of each load thread within the window, across the threads.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ThreadRates {
    pub mean: f64,
    /// Population standard deviation over the threads.
    pub stdev: f64,
    pub min: f64,
    pub max: f64,
}

impl ThreadRates {
    /// `None` with fewer than two threads or no window to divide by.
    pub fn of(completed: &[u64], elapsed_s: f64) -> Option<ThreadRates> {
        if completed.len() < 2 || elapsed_s <= 0.0 {
            return None;
        }
        let rates: Vec<f64> = completed.iter().map(|&n| n as f64 / elapsed_s).collect();
        let mean = rates.iter().sum::<f64>() / rates.len() as f64;
        let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / rates.len() as f64;
        Some(ThreadRates {
            mean,
            stdev: var.sqrt(),
            min: rates.iter().copied().fold(f64::INFINITY, f64::min),
            max: rates.iter().copied().fold(0.0, f64::max),
        })
    }
}

/// Accounting: `attempted = completed + failed + interrupted`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Requests {
    pub attempted: u64,
    pub completed: u64,
    /// Completed with a status below 400.
    pub successful: u64,
    /// Completed with a status of 400 or above: answered, but with an error.
    pub error_status: u64,
    pub failed: u64,
    pub interrupted: u64,
    /// Times a request the server refused unprocessed (HTTP/2: above a graceful GOAWAY's last
    /// stream) was sent again on a new connection; each request counts once in `attempted`.
    pub retried: u64,
    /// Redirects followed (--redirect), each hop of a chain once; 0 when not following.
    pub redirects_followed: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Latency {
    pub count: u64,
    pub min_ms: Option<f64>,
    pub mean_ms: Option<f64>,
    pub stdev_ms: Option<f64>,
    pub max_ms: Option<f64>,
    pub percentiles: Percentiles,
    /// Values above one hour, recorded as one hour.
    pub clamped: u64,
    /// The HDR histogram (ns), HdrHistogram V2 encoding, base64.
    pub hdr_base64: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Percentiles {
    pub p10: Option<f64>,
    pub p25: Option<f64>,
    pub p50: Option<f64>,
    pub p75: Option<f64>,
    pub p90: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub p99_9: Option<f64>,
    pub p99_99: Option<f64>,
}

impl Percentiles {
    /// (label, quantile, value) in report order.
    pub fn rows(&self) -> [(&'static str, Option<f64>); 9] {
        [
            ("p10", self.p10),
            ("p25", self.p25),
            ("p50", self.p50),
            ("p75", self.p75),
            ("p90", self.p90),
            ("p95", self.p95),
            ("p99", self.p99),
            ("p99.9", self.p99_9),
            ("p99.99", self.p99_99),
        ]
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bin {
    pub from_ms: f64,
    pub to_ms: f64,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusRow {
    pub code: u16,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorRow {
    pub class: String,
    pub count: u64,
    /// The first message seen for this class.
    pub example: Option<String>,
}

/// A phase of completed requests (or of connects).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Phase {
    pub count: u64,
    pub mean_ms: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    pub hdr_base64: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Phases {
    /// Request start to the connection being up, for the requests that opened one (a reconnect
    /// inside their latency; count = how many).
    pub connect: Phase,
    /// Request start (or connect end) to the last request byte written.
    pub write: Phase,
    /// Last request byte written to the first response byte read.
    pub wait: Phase,
    /// First response byte to the last.
    pub read: Phase,
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn quantile(h: &Histogram<u64>, q: f64) -> Option<f64> {
    (!h.is_empty()).then(|| ms(h.value_at_quantile(q)))
}

impl Latency {
    /// The figures of the latency histogram `h` (ns), of which `clamped` values were above
    /// its range.
    pub fn of(h: &Histogram<u64>, clamped: u64) -> Latency {
        let some = !h.is_empty();
        Latency {
            count: h.len(),
            min_ms: some.then(|| ms(h.min())),
            mean_ms: some.then(|| h.mean() / 1e6),
            stdev_ms: some.then(|| h.stdev() / 1e6),
            max_ms: some.then(|| ms(h.max())),
            percentiles: Percentiles {
                p10: quantile(h, 0.10),
                p25: quantile(h, 0.25),
                p50: quantile(h, 0.50),
                p75: quantile(h, 0.75),
                p90: quantile(h, 0.90),
                p95: quantile(h, 0.95),
                p99: quantile(h, 0.99),
                p99_9: quantile(h, 0.999),
                p99_99: quantile(h, 0.9999),
            },
            clamped,
            hdr_base64: base64_v2(h),
        }
    }
}

impl Phase {
    pub(super) fn of(h: &Hist) -> Phase {
        let inner = h.hdr();
        let some = !h.is_empty();
        Phase {
            count: h.len(),
            mean_ms: some.then(|| inner.mean() / 1e6),
            p50_ms: quantile(&inner, 0.5),
            p99_ms: quantile(&inner, 0.99),
            max_ms: some.then(|| ms(inner.max())),
            hdr_base64: base64_v2(&inner),
        }
    }
}

/// Geometric bins from the fastest to the slowest latency, so that a long tail does not squash
/// the body of the distribution into one bar.
fn bins(h: &Hist, inner: &Histogram<u64>, n: usize) -> Vec<Bin> {
    if h.is_empty() || n == 0 {
        return Vec::new();
    }
    let (lo, hi) = (inner.min().max(1), inner.max().max(1));
    if inner.equivalent(lo, hi) {
        return vec![Bin {
            from_ms: ms(lo),
            to_ms: ms(hi),
            count: h.len(),
        }];
    }
    let ratio = (hi as f64 / lo as f64).ln();
    let edge = |i: usize| lo as f64 * (ratio * i as f64 / n as f64).exp();
    let mut out: Vec<Bin> = (0..n)
        .map(|i| Bin {
            from_ms: edge(i) / 1e6,
            to_ms: edge(i + 1) / 1e6,
            count: 0,
        })
        .collect();
    for v in inner.iter_recorded() {
        let x = v.value_iterated_to().clamp(lo, hi) as f64;
        let i = ((x / lo as f64).ln() / ratio * n as f64) as usize;
        out[i.min(n - 1)].count += v.count_at_value();
    }
    out
}

impl Summary {
    pub fn new(plan: &Plan, run: &RunOutput, hist_bins: usize) -> Summary {
        let s: &Stats = &run.stats;
        let elapsed = run.elapsed.as_secs_f64();
        let per_sec = |x: u64| {
            if elapsed > 0.0 {
                x as f64 / elapsed
            } else {
                0.0
            }
        };
        let lat = &s.latency;
        // Each `hdr()` makes 270 KiB resident: this one is dropped before the phases build theirs.
        let (latency, histogram) = {
            let li = lat.hdr();
            let latency = Latency::of(&li, lat.clamped());
            (latency, bins(lat, &li, hist_bins))
        };
        let mean_s = latency.mean_ms.map(|m| m / 1e3);
        Summary {
            schema_version: SCHEMA_VERSION,
            spate_version: env!("CARGO_PKG_VERSION").into(),
            config: config(plan, run),
            totals: Totals {
                elapsed_s: elapsed,
                requests_per_sec: per_sec(s.completed - s.drained),
                drain_s: run.drain.as_secs_f64(),
                completed_in_drain: s.drained,
                bytes_in: s.bytes_in,
                bytes_out: s.bytes_out,
                body_bytes: s.body_bytes,
                body_bytes_per_response: (s.completed > 0)
                    .then(|| s.body_bytes as f64 / s.completed as f64),
                bytes_in_per_sec: per_sec(s.bytes_in),
                longest_gap_ms: s.gap.map(|(_, g)| g.as_secs_f64() * 1e3),
                longest_gap_at_s: s
                    .gap
                    .map(|(at, _)| at.saturating_duration_since(run.window_start).as_secs_f64()),
                per_thread: ThreadRates::of(&s.per_thread, elapsed),
            },
            requests: Requests {
                attempted: s.attempts,
                completed: s.completed,
                successful: s.successful(),
                error_status: s.completed - s.successful(),
                failed: s.failed(),
                interrupted: s.interrupted,
                retried: s.retried,
                redirects_followed: s.redirects,
            },
            latency,
            histogram,
            status_codes: s
                .statuses()
                .map(|(code, count)| StatusRow { code, count })
                .collect(),
            errors: Failure::ALL
                .iter()
                .filter(|f| s.failures.get(**f) > 0)
                .map(|&f| ErrorRow {
                    class: f.name().into(),
                    count: s.failures.get(f),
                    example: s.failures.example(f).map(str::to_owned),
                })
                .collect(),
            phases: Phases {
                connect: Phase::of(&s.reconnect),
                write: Phase::of(&s.write),
                wait: Phase::of(&s.wait),
                read: Phase::of(&s.read),
            },
            connections: connections(plan, run),
            generator: generator(plan, run, mean_s),
            open_model: open_model(plan, run),
            streaming: plan.stream.as_ref().map(|sp| {
                let none = super::StreamStats::default();
                super::Streaming::of(
                    sp,
                    s.stream.as_deref().unwrap_or(&none),
                    (
                        s.failures.get(Failure::StreamTruncated),
                        s.failures.get(Failure::StreamIdle),
                    ),
                    elapsed,
                )
            }),
            per_url: plan
                .list
                .as_ref()
                .filter(|l| l.mcp.is_none())
                .map_or_else(Vec::new, |l| super::UrlRow::of(plan, l, &s.per_entry)),
            mcp: plan.list.as_ref().and_then(|l| l.mcp.as_ref()).map(|m| {
                let h = s.handshakes.as_deref();
                super::McpSummary::of(m, &s.per_entry, h, s.sessions_ended, elapsed)
            }),
            grpc: plan.grpc.as_ref().map(|g| {
                super::GrpcSummary::of(g, s.status.get(200).copied().unwrap_or(0), &s.failures)
            }),
            start_unix_ms: run.start_unix_ms,
            timeline: super::timeline::entries(plan, &s.seconds),
            stages: super::stage_rows(plan, &s.seconds),
            second_latencies: s.seconds.iter().map(|sec| sec.latency.clone()).collect(),
            error: None,
        }
    }

    /// The result of a run that did not start, so that a program reading the JSON always finds
    /// a document, with `error` saying why.
    pub fn not_run(plan: &Plan, failure: RunFailure, hist_bins: usize) -> Summary {
        let run = RunOutput::empty(plan.effective_threads());
        let mut summary = Summary::new(plan, &run, hist_bins);
        summary.error = Some(failure);
        summary
    }

    /// Exit status contract: at least one response below 400 arrived.
    pub fn any_success(&self) -> bool {
        self.requests.successful > 0
    }

    /// Why the counts of a result (a saved file, a shard's) disagree with each other, if they
    /// do: every run spate makes has `attempted = completed + failed + interrupted`,
    /// `completed = successful + error_status`, and no more responses in the drain than
    /// completed. A result that breaks one was not written by spate as it stands.
    pub fn inconsistency(&self) -> Option<String> {
        let r = &self.requests;
        let sum = |a: u64, b: u64| a.checked_add(b);
        let accounted = sum(r.completed, r.failed).and_then(|n| sum(n, r.interrupted));
        if accounted != Some(r.attempted) {
            return Some(format!(
                "its counts disagree: attempted {} is not completed {} + failed {} + interrupted {}",
                r.attempted, r.completed, r.failed, r.interrupted
            ));
        }
        if sum(r.successful, r.error_status) != Some(r.completed) {
            return Some(format!(
                "its counts disagree: completed {} is not successful {} + error status {}",
                r.completed, r.successful, r.error_status
            ));
        }
        if self.totals.completed_in_drain > r.completed {
            return Some(format!(
                "its counts disagree: {} responses completed in the drain, of {} completed",
                self.totals.completed_in_drain, r.completed
            ));
        }
        if let Some(e) = self.timeline.iter().find(|e| e.error_status > e.completed) {
            return Some(format!(
                "its counts disagree: second {} has {} error responses of {} completed",
                e.t_s, e.error_status, e.completed
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_rates_spread_over_the_threads() {
        assert_eq!(
            ThreadRates::of(&[100], 1.0),
            None,
            "one thread has no spread"
        );
        assert_eq!(ThreadRates::of(&[100, 200], 0.0), None);
        let r = ThreadRates::of(&[300, 500], 2.0).unwrap();
        assert_eq!((r.mean, r.stdev, r.min, r.max), (200.0, 50.0, 150.0, 250.0));
    }

    #[test]
    fn bins_cover_every_value_once() {
        let mut h = Hist::new();
        for v in [1_000u64, 10_000, 12_000, 1_000_000, 50_000_000] {
            h.record(v);
        }
        let b = bins(&h, &h.hdr(), 11);
        assert_eq!(b.len(), 11);
        assert_eq!(b.iter().map(|x| x.count).sum::<u64>(), 5);
        assert_eq!(b[0].count, 1, "the fastest value is in the first bin");
        assert_eq!(b[10].count, 1, "the slowest value is in the last bin");
        for w in b.windows(2) {
            assert!((w[0].to_ms - w[1].from_ms).abs() < 1e-9);
        }
    }

    #[test]
    fn one_value_is_one_bin_and_no_values_none() {
        let mut h = Hist::new();
        assert!(bins(&h, &h.hdr(), 11).is_empty());
        h.record(5_000);
        h.record(5_000);
        let b = bins(&h, &h.hdr(), 11);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].count, 2);
    }
}
