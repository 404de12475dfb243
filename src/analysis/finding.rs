//! What the insight rules found, as typed data: which rule spoke and the figures it rests on.
//! No sentences here: `report::insight` words each finding, so the text and HTML reports (and a
//! program reading `findings` in the JSON) all start from the same facts.

use serde::Serialize;

/// One finding of one rule (docs/MEASUREMENT.md), in the order the report says them. Shares
/// are percentages (0-100), latencies ms, rates requests/s.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    /// `--stages`: the load at which the service stopped keeping up.
    BreakingPoint(super::BreakingPoint),
    /// The run did not start; `message` says why.
    DidNotStart {
        message: String,
    },
    NothingSent,
    /// 3xx that were counted as they came; `followed`: `--redirect` was on, so these were the
    /// ones it could not follow.
    Redirects {
        count: u64,
        share: f64,
        followed: bool,
    },
    /// Requests sent again on a new connection (never failures).
    Resent {
        times: u64,
    },
    /// Nothing completed: every request was still waiting at the end.
    NoResponse {
        interrupted: u64,
    },
    NoErrors,
    Failed {
        share: f64,
        classes: Vec<ClassCount>,
    },
    /// Responses with a status of 400 or more; `top`: the three most frequent codes.
    ErrorStatus {
        share: f64,
        top: Vec<CodeCount>,
    },
    /// Failures and error statuses together above `HIGH_ERROR_RATE`.
    HighErrorRate {
        share: f64,
    },
    NoLatency,
    /// p99/p50, in its band.
    Spread {
        band: Spread,
        p50: f64,
        p99: f64,
        ratio: f64,
    },
    /// The percentiles mix calls of several kinds (an MCP run's tools): their shape says as
    /// much about the mix as about the server, so no queueing is read into it.
    Mixed {
        kinds: u64,
    },
    /// p95/p50 above `QUEUEING`.
    Queueing {
        ratio: f64,
    },
    /// p99/p95 above `TAIL_LONG`.
    LongTail {
        ratio: f64,
    },
    /// p99.9/p99 above `OUTLIERS`.
    Outliers {
        ratio: f64,
    },
    /// p99.99/p99.9 above `OUTLIERS`.
    RareOutliers {
        ratio: f64,
    },
    /// None of the four above; `p99_99_p99_9` only with enough samples to know it.
    NoTail {
        p95_p50: f64,
        p99_p95: f64,
        p99_9_p99: f64,
        p99_99_p99_9: Option<f64>,
    },
    /// The phase with the largest p99, against the latency p99.
    TailPhase {
        phase: TailPhase,
        p99: f64,
        latency_p99: f64,
    },
    /// Reconnects inside latency are the largest phase (of a subset of the requests).
    TailInConnects {
        count: u64,
        completed: u64,
        share: f64,
        p99: f64,
        latency_p99: f64,
    },
    /// The longest time without a completion, while spate itself did not run: not the
    /// server's.
    SpateStalled {
        gap_ms: f64,
        at_s: f64,
        own_ms: f64,
        own_at_s: f64,
    },
    /// The longest time without a completion, put on the server.
    ServerStalled {
        gap_ms: f64,
        at_s: f64,
        open_model: bool,
    },
    /// --stream: when the first data event came and how fast the rest followed (p50s), and
    /// whether a stream's time went mostly to waiting for its first token.
    StreamPace {
        first_data_ms: f64,
        gap_ms: f64,
        /// A typical stream's time after its first token: its mean gap times its gaps.
        after_first_ms: f64,
        /// The streams are server-streaming gRPC calls: their events are messages.
        grpc: bool,
    },
    /// --stream: the longest gap of some stream was at least `STALL_MS` and
    /// `STALL_P50_FACTOR` times the median gap.
    StreamStalled {
        longest_ms: f64,
        gap_ms: f64,
        grpc: bool,
    },
    /// Closed model: connections that got no response in the whole run.
    Starved {
        starved: u64,
        established: u64,
        median_answered: u64,
    },
    /// Closed model: requests per connection spread more than `UNEVEN` times.
    Uneven {
        min: u64,
        max: u64,
        median: u64,
    },
    /// Open model: scheduled requests dropped (`--max-lag`) or not sent before the end.
    BehindSchedule {
        dropped: u64,
        missed: u64,
        scheduled: u64,
        achieved: f64,
        target: f64,
    },
    /// Open model: send lag p99 above `SEND_LAG_MS`.
    LateSends {
        lag_p99: Option<f64>,
        achieved: f64,
        target: f64,
    },
    OnSchedule {
        lag_p99: Option<f64>,
        achieved: f64,
        target: f64,
    },
    StoppedEarly {
        elapsed_s: f64,
    },
    /// Requests still in flight when the drain ended.
    InFlight {
        interrupted: u64,
    },
    /// Busy polling hides whether the load threads were saturated.
    BusyPolled {
        cpu_busy: f64,
    },
    CpuUse {
        threads: u32,
        cpu_busy: f64,
    },
    CpuUnknown,
    /// -s: what the script's Lua cost per request (µs) and its share of spate's CPU time.
    ScriptCost {
        us_per_request: f64,
        cpu_share: Option<f64>,
    },
    /// Little's law says the connections were kept busy.
    ConnectionsLoaded {
        /// The streams per connection counted (1: the connections themselves).
        streams: u64,
        busy: f64,
    },
    /// Connects that found no free local port.
    PortsExhausted {
        connects: u64,
    },
    /// The verdict on spate: what may have limited the result.
    SpateLimited {
        limits: Vec<Limit>,
    },
    NotLimited,
}

/// A reason spate may have limited the result rather than the server.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Limit {
    /// Busy-polling threads on every core.
    BusyPollAllCores {
        threads: u32,
        cores: u32,
    },
    /// Load threads busy at least `CPU_BOUND` of the time.
    CpuBound {
        threads: u32,
        cpu_busy: f64,
    },
    /// Connections busy less than `BUSY_CONNECTIONS` of the time.
    IdleConnections {
        busy: f64,
        /// The streams per connection counted (1: the connections themselves).
        streams: u64,
    },
    /// Fewer connections than asked; `not_open`: still not open when the phase ended.
    ConnectionsShort {
        established: u64,
        requested: u64,
        first_error: Option<String>,
        not_open: u64,
        setup_ms: f64,
    },
    /// Open model: below the target rate.
    BelowRate {
        achieved: f64,
        target: f64,
    },
    /// A load thread did not run for `ms` from `at_s`.
    Stalled {
        ms: f64,
        at_s: f64,
    },
    FileLimit {
        nofile: Option<u64>,
    },
    OutOfPorts,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Spread {
    /// p99/p50 at most `SPREAD_TIGHT`.
    Consistent,
    Moderate,
    /// Above `SPREAD_WIDE`.
    Wide,
}

/// A part of a request's latency, as a candidate for the tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TailPhase {
    Wait,
    Read,
    Write,
    SendLag,
    /// Send lag, while a load thread was measured not to run.
    SendLagSpateStalled,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClassCount {
    pub class: String,
    pub count: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CodeCount {
    pub code: u16,
    pub count: u64,
}
