//! Plain data of a run: per-thread counters and histograms, merged exactly once at the end, and
//! the `Summary` derived from them. Knows nothing of sockets, threads or terminals.

mod board;
mod config;
mod connections;
mod entries;
mod failure;
mod fairness;
mod generator;
mod grpc_status;
mod hist;
mod live;
mod open_model;
mod quic;
mod run_output;
pub mod running;
mod stage_rows;
mod stream;
mod summary;
pub mod timeline;
mod tool_row;
pub mod url_row;

pub use crate::proto::{Failure, is_fd_exhaustion};
pub use board::Board;
pub use config::{Config, LATENCY_DEFINITION, OPEN_LATENCY_DEFINITION};
pub use connections::Connections;
pub use entries::EntryStats;
pub use failure::FailureCounts;
pub use fairness::{ConnectionCounts, Fairness, PerConnection};
pub use generator::Generator;
pub use grpc_status::{GrpcStatusRow, GrpcSummary};
pub use hist::{HIST_HIGH_NS, HIST_LOW_NS, HIST_SIGFIG, Hist, Sparse, from_base64_v2};
pub use live::{Counters, Live, LiveHist};
pub use open_model::OpenModel;
pub use quic::Quic;
pub use run_output::RunOutput;
pub use stage_rows::{StageRow, stage_rows};
pub use stream::{END_DONE, END_MAX_EVENTS, END_MAX_TIME, END_SERVER, StreamStats, Streaming};
pub use summary::{
    Bin, ErrorRow, HISTOGRAM_BINS, Latency, Percentiles, Phase, Phases, Requests, RunFailure,
    SCHEMA_VERSION, StatusRow, Summary, ThreadRates, Totals,
};
pub use tool_row::{McpSummary, ToolRow};
pub use url_row::UrlRow;

use std::ops::AddAssign;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Codes below this index are counted exactly; httparse only yields three-digit codes.
const STATUS_SLOTS: usize = 1000;

/// The class of a status, as an index: 1xx is 0, ... 5xx is 4; a status under 100 counts as
/// 1xx, one of 600 or more as 5xx (both are errors or informational by their own rules, and
/// the classes must sum to the responses).
pub fn status_class(status: u16) -> usize {
    usize::from((status / 100).clamp(1, 5) - 1)
}

/// Everything one thread measured. The hot path adds to it; `+=` merges two of them.
#[derive(Debug, Clone)]
pub struct Stats {
    /// Request attempts admitted: each ends completed, failed or interrupted.
    pub attempts: u64,
    pub completed: u64,
    /// Of `completed`, those that completed after the measured window, in the drain.
    pub drained: u64,
    /// Of `drained`, those of each status class (`status_class`).
    pub drained_classes: [u64; 5],
    /// Times a request refused unprocessed by the server (HTTP/2 GOAWAY) was sent again: not
    /// attempts of their own, and not failures.
    pub retried: u64,
    /// Redirects followed (--redirect) by recorded attempts, each hop of a chain once.
    pub redirects: u64,
    pub interrupted: u64,
    pub failures: FailureCounts,
    /// Responses by status code (index = code).
    pub status: Box<[u64; STATUS_SLOTS]>,
    /// Request latency of completed responses, ns.
    pub latency: Hist,
    /// Phases of completed responses, ns: opening a connection (only requests that opened one,
    /// inside their latency), write, wait for the first byte, read the rest.
    pub reconnect: Hist,
    pub write: Hist,
    pub wait: Hist,
    pub read: Hist,
    /// Every successful TCP connect, including those before the clock started.
    pub connect: Hist,
    /// Every successful TLS handshake.
    pub tls: Hist,
    /// Every CONNECT tunnel a proxy opened (--proxy to https:// or with HTTP/2).
    pub proxy: Hist,
    /// Open model: completion - actual send (service time), and actual send - intended time
    /// (send lag), ns.
    pub service: Hist,
    pub lag: Hist,
    /// Open model: intended send times in the measured part of the run, and those dropped for
    /// being later than --max-lag.
    pub scheduled: u64,
    pub dropped: u64,
    /// Open model: the last actual send of a recorded request.
    pub last_send: Option<Instant>,
    /// Requests sent during --warmup (not recorded anywhere else).
    pub warmup_requests: u64,
    /// The longest time without a completed response, and when it began. Merged threads keep
    /// the smallest of their longest gaps: a server stall stops every thread at once, so one
    /// slow thread does not make a stall.
    pub gap: Option<(Instant, Duration)>,
    /// The longest time the thread did not run during the measurement (its sweeper woke that
    /// much later than its timer: stopped, starved of CPU, swapped out), and when it began.
    /// Merged threads keep the longest: any stalled thread delays its requests.
    pub stall: Option<(Instant, Duration)>,
    pub bytes_out: u64,
    pub bytes_in: u64,
    pub body_bytes: u64,
    pub conns: ConnCounts,
    /// --http3: QUIC's figures of the connections that closed.
    pub quic: Quic,
    /// The first connect failure's message (formatted once, not per failure).
    pub connect_error: Option<String>,
    /// Connect failures because the file-descriptor limit was reached (EMFILE, ENFILE).
    pub fd_exhausted: u64,
    /// Connections that were not open when the clock started, by what became of them.
    pub not_opened: NotOpened,
    /// Recorded requests completed by each client: one of the `-c` connections that opened
    /// before the clock, with all its reconnects, in no particular order.
    pub per_client: Vec<u64>,
    /// Responses each TCP connection carried (warm-up included), recorded when it closed or the
    /// run ended.
    pub per_connection: ConnectionCounts,
    /// Responses each load thread completed within the measured window, in thread order.
    pub per_thread: Vec<u64>,
    /// Each load thread's rate over intervals of about 100 ms of the measured window, in
    /// requests per second (wrk's Req/Sec samples), all threads' in one list.
    pub rate_samples: Vec<f64>,
    /// A request list: each request's figures, by its place in the list (the last place
    /// counts the requests past `request_list::MAX_TRACKED`); empty without a list.
    pub per_entry: Vec<EntryStats>,
    /// `spate mcp` with sessions: how long each connection's handshake took (an
    /// `EntryStats`, whose latency is the handshakes'; none until the first).
    pub handshakes: Option<Box<EntryStats>>,
    /// `spate mcp --session per-request`: sessions the server ended when asked.
    pub sessions_ended: u64,
    /// The measured window second by second (`timeline`).
    pub seconds: Vec<timeline::Second>,
    /// --stream: what the measured streams did (boxed: absent, it costs a word).
    pub stream: Option<Box<StreamStats>>,
    /// -s: time spent in the script's Lua calls around requests, ns, and the calls.
    pub lua_ns: u64,
    pub lua_calls: u64,
}

/// The connections that did not open before the clock started (`-c` asks for `established +
/// total()`), by what became of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotOpened {
    /// Their connect did not finish within --connect-timeout.
    pub timed_out: u64,
    /// Their connect failed: refused, unreachable, TLS, no HTTP/2 (the first reason is the
    /// connections' `connect_error`).
    pub failed: u64,
    /// Still connecting when the connection phase ended (--setup-timeout, or Ctrl-C).
    pub cut_off: u64,
    /// Never tried: the connection phase ended first.
    pub not_tried: u64,
}

impl NotOpened {
    pub fn total(&self) -> u64 {
        self.timed_out + self.failed + self.cut_off + self.not_tried
    }
}

impl AddAssign for NotOpened {
    fn add_assign(&mut self, o: NotOpened) {
        self.timed_out += o.timed_out;
        self.failed += o.failed;
        self.cut_off += o.cut_off;
        self.not_tried += o.not_tried;
    }
}

/// Connection bookkeeping.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnCounts {
    /// Connections opened speaking HTTP/1.1, HTTP/2 and HTTP/3.
    pub h1: u64,
    pub h2: u64,
    pub h3: u64,
    /// TLS handshakes that resumed an earlier session.
    pub tls_resumed: u64,
    /// HTTP/2 connections the server ended with GOAWAY.
    pub goaways: u64,
    /// The lowest MAX_CONCURRENT_STREAMS an HTTP/2 server announced (`u32::MAX`: no limit).
    pub server_streams: Option<u64>,
    /// Connected before the clock started.
    pub established: u64,
    /// Connected during the run to replace one that closed.
    pub reconnects: u64,
    /// Connect attempts that failed (before or during the run).
    pub connect_failures: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            attempts: 0,
            completed: 0,
            drained: 0,
            drained_classes: [0; 5],
            retried: 0,
            redirects: 0,
            interrupted: 0,
            failures: FailureCounts::default(),
            status: Box::new([0; STATUS_SLOTS]),
            latency: Hist::new(),
            reconnect: Hist::new(),
            write: Hist::new(),
            wait: Hist::new(),
            read: Hist::new(),
            connect: Hist::new(),
            tls: Hist::new(),
            proxy: Hist::new(),
            service: Hist::new(),
            lag: Hist::new(),
            scheduled: 0,
            dropped: 0,
            last_send: None,
            warmup_requests: 0,
            gap: None,
            stall: None,
            bytes_out: 0,
            bytes_in: 0,
            body_bytes: 0,
            conns: ConnCounts::default(),
            quic: Quic::default(),
            connect_error: None,
            fd_exhausted: 0,
            not_opened: NotOpened::default(),
            per_client: Vec::new(),
            per_connection: ConnectionCounts::default(),
            per_thread: Vec::new(),
            seconds: Vec::new(),
            stream: None,
            lua_ns: 0,
            lua_calls: 0,
            rate_samples: Vec::new(),
            per_entry: Vec::new(),
            handshakes: None,
            sessions_ended: 0,
        }
    }
}

impl Stats {
    /// Counts one response with this status code.
    pub fn count_status(&mut self, code: u16) {
        if let Some(slot) = self.status.get_mut(usize::from(code)) {
            *slot += 1;
        }
    }

    /// Counts a failed connect, keeping the first message.
    pub fn connect_failed(&mut self, detail: impl FnOnce() -> String) {
        self.conns.connect_failures += 1;
        if self.connect_error.is_none() {
            self.connect_error = Some(detail());
        }
    }

    /// Keeps the longer of the recorded stall and this one.
    pub fn note_stall(&mut self, stall: Option<(Instant, Duration)>) {
        if let Some(p) = stall
            && self.stall.is_none_or(|(_, longest)| p.1 > longest)
        {
            self.stall = Some(p);
        }
    }

    /// Failures in wrk's four socket-error classes: connect (connects, ports, TLS, and the
    /// connections that never opened), read (reads, closes, resets, malformed or cut responses),
    /// write, timeout. What `spate wrk` prints and a script's `done()` receives.
    pub fn wrk_errors(&self) -> [u64; 4] {
        let f = |c: &[Failure]| c.iter().map(|&c| self.failures.get(c)).sum::<u64>();
        [
            f(&[Failure::Connect, Failure::Ports, Failure::Tls])
                + self.not_opened.timed_out
                + self.not_opened.failed,
            f(&[
                Failure::Read,
                Failure::Closed,
                Failure::Parse,
                Failure::Reset,
                Failure::H2,
                Failure::Redirect,
                Failure::StreamTruncated,
                Failure::StreamIdle,
                Failure::ToolError,
                Failure::JsonRpc,
                Failure::Protocol,
                Failure::SessionExpired,
            ]),
            f(&[Failure::Write]),
            f(&[Failure::Timeout]),
        ]
    }

    /// Completed responses with a status below 400.
    pub fn successful(&self) -> u64 {
        self.status[..400].iter().sum()
    }

    /// Completed responses with a status of 400 or more.
    pub fn error_status(&self) -> u64 {
        self.status[400..].iter().sum()
    }

    /// Of the responses in the drain, those with a status of 400 or more.
    pub fn drained_error_status(&self) -> u64 {
        self.drained_classes[3] + self.drained_classes[4]
    }

    /// Completed responses by status class (`status_class`).
    pub fn classes(&self) -> [u64; 5] {
        let mut out = [0; 5];
        for (status, n) in self.status.iter().enumerate() {
            out[status_class(status as u16)] += n;
        }
        out
    }

    pub fn failed(&self) -> u64 {
        self.failures.total()
    }

    /// The accounting invariant: every admitted request ended exactly one way.
    pub fn is_balanced(&self) -> bool {
        self.attempts == self.completed + self.failed() + self.interrupted
            && self.completed == self.status.iter().sum::<u64>()
    }

    /// (code, count) for every status seen, ascending.
    pub fn statuses(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.status
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(c, n)| (c as u16, *n))
    }
}

impl AddAssign<&Stats> for Stats {
    fn add_assign(&mut self, o: &Stats) {
        self.attempts += o.attempts;
        self.completed += o.completed;
        self.drained += o.drained;
        for (a, b) in self.drained_classes.iter_mut().zip(o.drained_classes) {
            *a += b;
        }
        self.retried += o.retried;
        self.redirects += o.redirects;
        self.interrupted += o.interrupted;
        self.failures += &o.failures;
        for (a, b) in self.status.iter_mut().zip(o.status.iter()) {
            *a += b;
        }
        self.latency += &o.latency;
        self.reconnect += &o.reconnect;
        self.write += &o.write;
        self.wait += &o.wait;
        self.read += &o.read;
        self.connect += &o.connect;
        self.tls += &o.tls;
        self.proxy += &o.proxy;
        self.service += &o.service;
        self.lag += &o.lag;
        self.scheduled += o.scheduled;
        self.dropped += o.dropped;
        self.last_send = self.last_send.max(o.last_send);
        self.warmup_requests += o.warmup_requests;
        self.gap = match (self.gap, o.gap) {
            (Some(a), Some(b)) => Some(if a.1 <= b.1 { a } else { b }),
            (a, b) => a.or(b),
        };
        self.note_stall(o.stall);
        self.conns.h1 += o.conns.h1;
        self.conns.h2 += o.conns.h2;
        self.conns.h3 += o.conns.h3;
        self.quic += &o.quic;
        self.conns.tls_resumed += o.conns.tls_resumed;
        self.conns.goaways += o.conns.goaways;
        self.conns.server_streams = match (self.conns.server_streams, o.conns.server_streams) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.bytes_out += o.bytes_out;
        self.bytes_in += o.bytes_in;
        self.body_bytes += o.body_bytes;
        self.conns.established += o.conns.established;
        self.conns.reconnects += o.conns.reconnects;
        self.conns.connect_failures += o.conns.connect_failures;
        if self.connect_error.is_none() {
            self.connect_error.clone_from(&o.connect_error);
        }
        self.fd_exhausted += o.fd_exhausted;
        self.not_opened += o.not_opened;
        self.per_client.extend_from_slice(&o.per_client);
        self.per_connection += &o.per_connection;
        self.per_thread.extend_from_slice(&o.per_thread);
        self.rate_samples.extend_from_slice(&o.rate_samples);
        entries::merge(&mut self.per_entry, &o.per_entry);
        if let Some(h) = &o.handshakes {
            self.handshakes.get_or_insert_default().add(h);
        }
        self.sessions_ended += o.sessions_ended;
        self.lua_ns += o.lua_ns;
        self.lua_calls += o.lua_calls;
        timeline::add(&mut self.seconds, &o.seconds);
        if let Some(o) = &o.stream {
            **self.stream.get_or_insert_with(Box::default) += o;
        }
    }
}

/// `t` in ms since the Unix epoch (0 before it).
pub fn unix_ms(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Microseconds since the Unix epoch.
pub fn unix_us(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// Nanoseconds in a duration, saturating (a u64 of ns lasts 584 years).
pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_everything_and_keeps_balance() {
        let mut a = Stats {
            attempts: 3,
            completed: 2,
            ..Stats::default()
        };
        a.count_status(200);
        a.count_status(503);
        a.failures.add(Failure::Timeout);
        a.latency.record(1_000);
        a.conns.reconnects = 1;
        let mut b = Stats {
            attempts: 2,
            completed: 1,
            interrupted: 1,
            ..Stats::default()
        };
        b.count_status(200);
        b.latency.record(2_000);
        b.bytes_in = 10;
        a.per_client = vec![2];
        b.per_client = vec![1, 0];
        a.per_connection.record(2);
        b.per_connection.record(1);

        assert!(a.is_balanced() && b.is_balanced());
        a += &b;
        assert!(a.is_balanced());
        assert_eq!(
            (a.attempts, a.completed, a.failed(), a.interrupted),
            (5, 3, 1, 1)
        );
        assert_eq!(a.statuses().collect::<Vec<_>>(), vec![(200, 2), (503, 1)]);
        assert_eq!(a.successful(), 2);
        assert_eq!(a.latency.len(), 2);
        assert_eq!((a.bytes_in, a.conns.reconnects), (10, 1));
        assert_eq!(a.per_client, vec![2, 1, 0]);
        assert_eq!(a.per_connection.len(), 2);
    }

    #[test]
    fn imbalance_is_detected() {
        let mut s = Stats {
            attempts: 1,
            ..Stats::default()
        };
        assert!(!s.is_balanced());
        s.completed = 1;
        assert!(!s.is_balanced(), "a completed response needs a status");
        s.count_status(200);
        assert!(s.is_balanced());
    }
}
