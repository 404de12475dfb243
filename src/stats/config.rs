//! `Config`: what a run was asked to do, as the report's header and `config` in the JSON state
//! it (model, latency definition, protocol actually spoken, limits, TLS, rate, churn, warm-up).

use serde::{Deserialize, Serialize};

use super::{RunOutput, Stats};
use crate::plan::{Plan, Protocol, Stages, Stop};
use crate::route::Family;

/// What the latency of one request measures in the closed model.
pub const LATENCY_DEFINITION: &str = "closed model: from the start of the request (write of the first byte, or the connect when the connection had to be re-opened) to the last byte of the response body";

/// What the latency of one request measures in the open model.
pub const OPEN_LATENCY_DEFINITION: &str = "open model: from the intended send time (start + i / rate) to the last byte of the response body, so that waiting for a free connection, or for spate, counts (free of coordinated omission)";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Config {
    pub url: String,
    pub method: String,
    pub protocol: String,
    /// `--alt-svc`: the server's HTTP/3 alternative the run followed, as `h3=":443"`.
    #[serde(default)]
    pub alt_svc: Option<String>,
    pub model: String,
    pub latency_definition: String,
    pub connections: u32,
    pub threads: u32,
    /// Set in count mode.
    pub requests: Option<u64>,
    /// Set in duration mode.
    pub duration_s: Option<f64>,
    pub timeout_s: f64,
    pub connect_timeout_s: f64,
    /// --setup-timeout: the longest the connections could take to open.
    pub setup_timeout_s: f64,
    pub keep_alive: bool,
    pub compression: bool,
    /// "verified", "insecure" (--insecure), or null without TLS.
    pub tls: Option<String>,
    /// HTTP/2 or HTTP/3 streams per connection asked for with -p (1 for HTTP/1.1).
    pub streams: u32,
    /// Open model: requests per second (-q; under --stages, the profile's mean); null in the
    /// closed model.
    pub rate: Option<f64>,
    /// --stages: the profile, as `DUR:TARGET,...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<String>,
    /// Requests per connection before it is re-opened (--rpc, 1 without keep-alive).
    pub rpc: Option<u64>,
    /// Redirects followed per request at most (--redirect); 0: not followed.
    pub redirects: u32,
    /// Load sent before the measurement, not recorded (--warmup).
    pub warmup_s: f64,
    /// Requests sent during the warm-up.
    pub warmup_requests: u64,
    /// Where the connections went when not to the URL's host and port: "unix:PATH"
    /// (--unix-socket) or "HOST:PORT" (--connect-to); null otherwise.
    pub connected_to: Option<String>,
    /// "ipv4" or "ipv6" when --ipv4 or --ipv6 narrowed the addresses; null otherwise.
    pub address_family: Option<String>,
    /// --proxy, credentials masked ("http://***@host:port"); null without one.
    pub proxy: Option<String>,
    /// Through the proxy: "tunnel" (CONNECT) or "forward" (absolute-form requests); null
    /// without one.
    pub proxy_mode: Option<String>,
    /// --shard: which part of a job this run is, and the job; null otherwise.
    #[serde(default)]
    pub shard: Option<ShardConfig>,
    /// --start-at: the instant the run was to start, µs since the Unix epoch; null otherwise.
    #[serde(default)]
    pub start_at_unix_us: Option<u64>,
    /// When the run started (its start signal, before any --warm-up), µs since the Unix
    /// epoch: with --start-at, its lateness is this minus start_at_unix_us.
    #[serde(default)]
    pub started_unix_us: Option<u64>,
}

/// A shard's place in its job, and the job as every shard was given it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardConfig {
    pub index: u32,
    pub count: u32,
    /// The job's connections (`connections` is this shard's part).
    pub job_connections: u32,
    /// The job's requests in count mode (`requests` is this shard's part); null with -z.
    pub job_requests: Option<u64>,
    /// Open model: the job's rate (`rate` is this shard's part); null in the closed model.
    pub job_rate: Option<f64>,
    /// The job's `--slo`, as given: a shard's part is not judged on it (its figures are a part
    /// of the job's), `spate merge` judges the job; null without one.
    #[serde(default)]
    pub slo: Option<String>,
}

pub(super) fn config(plan: &Plan, run: &RunOutput) -> Config {
    let s = &run.stats;
    Config {
        url: plan.target.url.clone(),
        method: plan.method.clone(),
        protocol: protocol(plan, s),
        alt_svc: run.alt_svc.clone(),
        model: if plan.is_open() { "open" } else { "closed" }.into(),
        latency_definition: if plan.is_open() {
            OPEN_LATENCY_DEFINITION
        } else {
            LATENCY_DEFINITION
        }
        .into(),
        connections: plan.connections,
        threads: run.threads,
        requests: match plan.stop {
            Stop::Requests(n) => Some(n),
            Stop::Duration(_) => None,
        },
        duration_s: match plan.stop {
            Stop::Duration(d) => Some(d.as_secs_f64()),
            Stop::Requests(_) => None,
        },
        timeout_s: plan.timeout.as_secs_f64(),
        connect_timeout_s: plan.connect_timeout.as_secs_f64(),
        setup_timeout_s: plan.setup_timeout.as_secs_f64(),
        keep_alive: plan.keep_alive,
        compression: plan.compression,
        tls: plan.target.tls.then(|| {
            if plan.tls.insecure {
                "insecure"
            } else {
                "verified"
            }
            .into()
        }),
        streams: if plan.multiplexes() {
            plan.h2.streams
        } else {
            1
        },
        rate: plan.own_rate(),
        stages: plan.stages.as_ref().map(Stages::written),
        rpc: plan.requests_per_connection(),
        redirects: plan.redirects,
        warmup_s: plan.warmup.as_secs_f64(),
        warmup_requests: s.warmup_requests,
        connected_to: connected_to(plan),
        proxy: plan.route.proxy.as_ref().map(|p| p.shown()),
        proxy_mode: plan.route.proxy.as_ref().map(|_| {
            match plan.proxy_tunnel() {
                true => "tunnel",
                false => "forward",
            }
            .into()
        }),
        address_family: plan.route.family.map(|f| {
            match f {
                Family::V4 => "ipv4",
                Family::V6 => "ipv6",
            }
            .into()
        }),
        shard: plan.shard.map(|s| ShardConfig {
            index: s.index,
            count: s.count,
            job_connections: s.job_connections,
            job_requests: match s.job_stop {
                Stop::Requests(n) => Some(n),
                Stop::Duration(_) => None,
            },
            job_rate: plan.job_rate(),
            slo: None,
        }),
        start_at_unix_us: plan.start_at.map(|s| super::unix_us(s.at)),
        started_unix_us: Some(run.started_unix_us),
    }
}

/// Where the connections went, when a flag sent them away from the URL's host and port.
fn connected_to(plan: &Plan) -> Option<String> {
    if let Some(path) = &plan.route.unix_socket {
        return Some(format!("unix:{}", path.display()));
    }
    let (host, port) = plan.route.destination(&plan.target);
    let moved = (host.as_str(), port) != (plan.target.host.as_str(), plan.target.port);
    moved.then(|| match host.contains(':') {
        true => format!("[{host}]:{port}"),
        false => format!("{host}:{port}"),
    })
}

/// The protocol the connections spoke, as the report names it.
fn protocol(plan: &Plan, s: &Stats) -> String {
    let h2 = if plan.target.tls {
        "HTTP/2"
    } else {
        "HTTP/2 (h2c)"
    };
    if s.conns.h3 > 0 || (plan.protocol == Protocol::Http3 && s.conns.h1 + s.conns.h2 == 0) {
        // --redirect's hops to other origins go over TCP: HTTP/1.1 in a run over HTTP/3.
        return match s.conns.h1 > 0 {
            true => "HTTP/1.1 and HTTP/3".into(),
            false => "HTTP/3".into(),
        };
    }
    match (s.conns.h1 > 0, s.conns.h2 > 0) {
        (true, true) => format!("HTTP/1.1 and {h2}"),
        (false, true) => h2.into(),
        (true, false) => "HTTP/1.1".into(),
        // No connection opened: what was asked for.
        (false, false) => match plan.protocol {
            Protocol::Http2 => h2.into(),
            Protocol::Auto if plan.target.tls => "HTTP/2 or HTTP/1.1 (ALPN)".into(),
            _ => "HTTP/1.1".into(),
        },
    }
}
