//! `Plan`: everything a run needs, validated, as plain serde data (so it can later ship to remote
//! shards). No clap types here, and no sockets: building a Plan never touches the network.

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::route::Route;
use crate::target::Target;

mod error;
pub mod stages;
mod validate;
pub use error::PlanError;
pub use stages::{Curve, Stage, StageKind, Stages};

/// Which part of the job this run is, and the job as a whole. The open model's schedule is the
/// job's, striped: shard `index` sends the job's requests `k` with `k mod count = index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
    /// The job's connections and stop, as the command line gave them to every shard.
    pub job_connections: u32,
    pub job_stop: Stop,
}

/// `--start-at`: when the run starts, and how late it may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartAt {
    pub at: SystemTime,
    /// `--start-deadline`: a run whose connections are ready later than `at` plus this does
    /// not start (exit 4); `None`: it starts at once, however late.
    pub deadline: Option<Duration>,
}

/// When the run stops sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// Exactly this many request attempts in total.
    Requests(u64),
    /// Send until this long after the clock starts, then drain.
    Duration(Duration),
}

/// Which HTTP version to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// http://: HTTP/1.1. https://: offer h2 and http/1.1 with ALPN, use what the server picks.
    #[default]
    Auto,
    /// HTTP/1.1 only (`--http1.1`).
    Http1,
    /// HTTP/2 only (`--http2`): ALPN h2 on https://, prior knowledge (h2c) on http://.
    Http2,
    /// HTTP/3 over QUIC (`--http3`): https:// only, ALPN h3, TLS 1.3.
    Http3,
}

/// TLS settings for https:// targets. Certificates and keys are PEM, read once by the CLI.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tls {
    /// Skip certificate verification (`--insecure`).
    pub insecure: bool,
    /// More trusted roots (`--cacert`), besides the system's.
    pub cacert: Option<Vec<u8>>,
    /// Client certificate chain and key for mTLS (`--cert`, `--key`).
    pub cert: Option<Vec<u8>>,
    pub key: Option<Vec<u8>>,
}

/// HTTP/2 settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct H2 {
    /// Concurrent streams per connection (`-p`), never more than the server allows.
    pub streams: u32,
    /// Initial stream window we advertise (`--h2-stream-window`).
    pub stream_window: u32,
    /// Connection window we advertise (`--h2-conn-window`).
    pub conn_window: u32,
    /// Largest frame we accept (`--h2-max-frame`).
    pub max_frame: u32,
}

/// A request rate of `num / den` per second (an exact fraction, so that intended send times
/// are integers and never drift).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rate {
    pub num: u64,
    pub den: u64,
}

impl Rate {
    pub fn per_second(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

/// The largest HTTP/2 flow-control window, used by default (as h2load does).
pub const H2_MAX_WINDOW: u32 = (1 << 31) - 1;

impl Default for H2 {
    fn default() -> Self {
        H2 {
            streams: 1,
            stream_window: (1 << 30) - 1,
            conn_window: (1 << 30) - 1,
            max_frame: 16_384,
        }
    }
}

/// A complete, validated description of one load test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub target: Target,
    /// Where the connections go when not simply to the URL's host and port.
    pub route: Route,
    pub method: String,
    /// User headers in order; each replaces a default header of the same name.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Send `Accept-Encoding: gzip, deflate, br` unless the user set it.
    pub compression: bool,
    /// False: `Connection: close` on every request and a new connection for each.
    pub keep_alive: bool,
    pub connections: u32,
    pub threads: u32,
    pub stop: Stop,
    /// Per request, from the start of the attempt to the last byte of the response.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// The longest the connections may take to open before the clock starts (`--setup-timeout`);
    /// the run then starts with those that are open.
    pub setup_timeout: Duration,
    pub protocol: Protocol,
    pub tls: Tls,
    pub h2: H2,
    /// Open model (`-q`): this many requests per second in total, at intended times.
    pub rate: Option<Rate>,
    /// `--stages`: a profile of rates (the open model) or of connections (the closed model) that
    /// the run follows (it lasts its stages).
    #[serde(default)]
    pub stages: Option<Stages>,
    /// `spate grpc`: the call each request makes (the request itself is the plan's method,
    /// path, headers and body), judged by its gRPC status.
    #[serde(default)]
    pub grpc: Option<GrpcPlan>,
    /// Open model: requests later than this are dropped and counted (`--max-lag`).
    pub max_lag: Option<Duration>,
    /// Requests per connection before it is closed and re-opened (`--rpc`).
    pub rpc: Option<u64>,
    /// Redirects followed per request (`--redirect`); 0: a redirect is a response like any other.
    #[serde(default)]
    pub redirects: u32,
    /// --stream and its companions: responses measured as streams; `None`: not measured. The
    /// report's `streaming` section says what was asked.
    #[serde(skip)]
    pub stream: Option<StreamPlan>,
    /// Load sent but not recorded before the measurement starts (`--warmup`).
    pub warmup: Duration,
    /// Poll for events instead of sleeping (`--busy-poll`).
    pub busy_poll: bool,
    /// `-s`: the wrk script the run's states run; `None`: no Lua at all.
    #[serde(default)]
    pub script: Option<ScriptPlan>,
    /// Several URLs or `--urls-from-file`: the requests sent in turn or at random instead of
    /// one; the target is the first's. `None`: the one request of the flags.
    #[serde(skip)]
    pub list: Option<std::sync::Arc<crate::request_list::RequestList>>,
    /// `--shard`: this run is one part of a job split over several processes; `connections`
    /// and `stop` are this part's.
    #[serde(skip)]
    pub shard: Option<Shard>,
    /// `--start-at`: the wall-clock instant to start at, once connected.
    #[serde(skip)]
    pub start_at: Option<StartAt>,
    /// `--alt-svc`: HTTP/3 where the server's Alt-Svc (read over TCP before the run) points.
    #[serde(default)]
    pub alt_svc: bool,
}

/// `-s` as a plan names it: the file, the words after `--`, and the functions it defines (what
/// the plan's checks ask). The script itself, read and run once, is loaded beside the plan
/// (`script::Loaded`) and handed to what runs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptPlan {
    pub file: std::path::PathBuf,
    pub args: Vec<String>,
    pub defines: Defines,
}

/// The functions wrk calls, as a script defines them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Defines {
    pub setup: bool,
    pub init: bool,
    pub delay: bool,
    pub request: bool,
    pub response: bool,
    pub done: bool,
}

impl Defines {
    /// Lua runs around requests: the connections go through the scripted lane.
    pub fn per_request(&self) -> bool {
        self.request || self.response || self.delay
    }

    /// Each load thread needs a state of its own (to run `init`, or what `setup` gave it).
    pub fn per_thread(&self) -> bool {
        self.per_request() || self.init || self.setup
    }
}

/// How responses are cut into the units a stream is timed by (--stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamMode {
    /// By each response's Content-Type: `text/event-stream` as SSE, JSON lines as lines, any
    /// other type not as a stream.
    Auto,
    Sse,
    Lines,
    Chunks,
    /// `spate grpc`'s server-streaming calls: each gRPC message is an event.
    Grpc,
}

impl StreamMode {
    /// The mode as the reports name it.
    pub fn words(self) -> &'static str {
        match self {
            StreamMode::Auto => "auto: by Content-Type",
            StreamMode::Sse => "sse",
            StreamMode::Lines => "lines",
            StreamMode::Chunks => "chunks: each read",
            StreamMode::Grpc => "gRPC messages",
        }
    }

    /// What one unit of a stream is called: a message of a gRPC call, an event otherwise.
    pub fn unit(self) -> &'static str {
        match self {
            StreamMode::Grpc => "message",
            _ => "event",
        }
    }
}

/// What --stream, --done, --usage, --max-events, --max-stream-time and --idle-timeout ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamPlan {
    pub mode: StreamMode,
    pub rules: crate::proto::stream::Rules,
    /// End a stream after this many units (a success: the cap, not the server, ended it).
    pub max_events: Option<u64>,
    /// End a stream this long after its request started (checked as its bytes arrive).
    pub max_time: Option<Duration>,
    /// Fail a stream that receives no bytes for this long (instead of the request timeout,
    /// once its first byte has arrived).
    pub idle: Option<Duration>,
}

/// The shortest timeout that is enforced: the sweeper that cancels late requests looks at them
/// once a millisecond at the finest.
pub const MIN_TIMEOUT: Duration = Duration::from_millis(1);

/// How long the connections may take to open, unless --setup-timeout says otherwise (or
/// --connect-timeout is longer: one connect must fit).
pub const DEFAULT_SETUP_TIMEOUT: Duration = Duration::from_secs(30);

pub use crate::syntax::{is_field_value, is_request_target, is_token, is_token_bytes};

impl Plan {
    /// This plan as entry `i` of `list` makes it: the entry's method, URL and body, and
    /// (`spate mcp`) its own headers after the user's.
    pub fn for_entry(&self, list: &crate::request_list::RequestList, i: usize) -> Plan {
        let e = &list.entries[i];
        let mut headers = self.headers.clone();
        if let Some(m) = &list.mcp {
            headers.extend(m.headers[i].iter().cloned());
        }
        Plan {
            method: e.method.clone().unwrap_or_else(|| self.method.clone()),
            target: e.target.clone(),
            body: e.body.clone().unwrap_or_else(|| self.body.clone()),
            headers,
            ..self.clone()
        }
    }

    /// A GET plan with the defaults of the command line, for library users and tests.
    pub fn new(target: Target) -> Plan {
        Plan {
            target,
            route: Route::default(),
            method: "GET".into(),
            headers: Vec::new(),
            body: Vec::new(),
            compression: true,
            keep_alive: true,
            connections: 50,
            threads: 1,
            stop: Stop::Requests(200),
            timeout: Duration::from_secs(20),
            connect_timeout: Duration::from_secs(10),
            setup_timeout: DEFAULT_SETUP_TIMEOUT,
            protocol: Protocol::Auto,
            tls: Tls::default(),
            h2: H2::default(),
            rate: None,
            stages: None,
            grpc: None,
            max_lag: None,
            rpc: None,
            redirects: 0,
            stream: None,
            warmup: Duration::ZERO,
            busy_poll: false,
            script: None,
            list: None,
            shard: None,
            start_at: None,
            alt_svc: false,
        }
    }

    /// Open model: the requests per second this run sends, a shard's part of the job's (under
    /// --stages, the profile's mean).
    pub fn own_rate(&self) -> Option<f64> {
        let shards = self.shard.map_or(1, |s| s.count);
        self.job_rate().map(|r| r / f64::from(shards))
    }

    /// Open model: the job's requests per second (under --stages, the profile's mean).
    pub fn job_rate(&self) -> Option<f64> {
        match &self.stages {
            Some(s) if s.kind == StageKind::Rate => {
                Some(Curve::of(s, 1.0).total() / s.duration().as_secs_f64())
            }
            _ => self.rate.map(Rate::per_second),
        }
    }

    /// Whether requests go at intended times (`-q`, or --stages of rates): the open model.
    pub fn is_open(&self) -> bool {
        self.rate.is_some()
            || self
                .stages
                .as_ref()
                .is_some_and(|s| s.kind == StageKind::Rate)
    }

    /// Whether connections carry several requests at once (-p): HTTP/3, and HTTP/2 where it
    /// may be spoken.
    pub fn multiplexes(&self) -> bool {
        self.protocol == Protocol::Http3 || self.may_use_h2()
    }

    /// Whether connections may speak HTTP/2: forced, or offered with ALPN on https.
    pub fn may_use_h2(&self) -> bool {
        match self.protocol {
            Protocol::Http2 => true,
            Protocol::Http1 | Protocol::Http3 => false,
            Protocol::Auto => self.target.tls,
        }
    }

    /// The request is HEAD, whose responses carry no body.
    pub fn is_head(&self) -> bool {
        self.method.eq_ignore_ascii_case("HEAD")
    }

    /// Whether every request ends its connection: `--disable-keepalive`, or a user header
    /// `Connection: close`, after which the server may close without saying so.
    pub fn closes_connections(&self) -> bool {
        !self.keep_alive
            || self.headers.iter().any(|(n, v)| {
                n.eq_ignore_ascii_case("connection")
                    && v.split(',').any(|t| t.trim().eq_ignore_ascii_case("close"))
            })
    }

    /// Requests per connection before it is re-opened: --rpc, 1 without keep-alive (or with a
    /// `Connection: close` header), none otherwise.
    /// Whether the method is idempotent (RFC 9110 9.2.2): sending it twice has the effect of
    /// once, so a request lost to a connection the server closed may go again.
    pub fn is_idempotent(&self) -> bool {
        ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(&self.method.as_str())
    }

    /// Through a proxy, whether each connection is a CONNECT tunnel to the target (https://, and
    /// HTTP/2, which a proxy does not forward) rather than absolute-form HTTP/1.1 requests.
    pub fn proxy_tunnel(&self) -> bool {
        self.route.proxy.is_some() && (self.target.tls || self.protocol == Protocol::Http2)
    }

    /// Through a proxy without a tunnel: requests name the whole URL (absolute form).
    pub fn proxy_forward(&self) -> bool {
        self.route.proxy.is_some() && !self.proxy_tunnel()
    }

    pub fn requests_per_connection(&self) -> Option<u64> {
        if self.closes_connections() {
            Some(1)
        } else {
            self.rpc
        }
    }

    /// Threads actually used: never more than connections.
    pub fn effective_threads(&self) -> u32 {
        self.threads.min(self.connections).max(1)
    }
}

/// `spate grpc`'s call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrpcPlan {
    /// The method, `package.Service/Method`.
    pub call: String,
    /// The method answers with a stream of messages (one message answers a unary call).
    pub server_streaming: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::MAX_DURATION;

    fn plan() -> Plan {
        Plan::new(Target::parse("http://127.0.0.1:8080/").unwrap())
    }

    #[test]
    fn defaults_are_valid() {
        assert_eq!(plan().validate(), Ok(()));
    }

    type Edit = fn(&mut Plan);

    #[test]
    fn each_rule_rejects() {
        let cases: Vec<(Edit, PlanError)> = vec![
            (|p| p.connections = 0, PlanError::NoConnections),
            (|p| p.threads = 0, PlanError::NoThreads),
            (
                |p| p.stop = Stop::Requests(10),
                PlanError::FewerRequestsThanConnections {
                    requests: 10,
                    connections: 50,
                },
            ),
            (
                |p| p.stop = Stop::Duration(Duration::ZERO),
                PlanError::ZeroDuration,
            ),
            (|p| p.timeout = Duration::ZERO, PlanError::ShortTimeout),
            (
                |p| p.timeout = Duration::from_micros(999),
                PlanError::ShortTimeout,
            ),
            (
                |p| p.connect_timeout = Duration::from_micros(100),
                PlanError::ShortConnectTimeout,
            ),
            (
                |p| p.stop = Stop::Duration(Duration::from_secs(u64::MAX)),
                PlanError::TooLong("--duration"),
            ),
            (
                |p| p.warmup = MAX_DURATION + Duration::from_nanos(1),
                PlanError::TooLong("--warmup"),
            ),
            (
                |p| p.method = "GE T".into(),
                PlanError::Method("GE T".into()),
            ),
            (
                |p| p.headers = vec![("X Y".into(), "1".into())],
                PlanError::HeaderName("X Y".into()),
            ),
            (
                |p| p.headers = vec![("X".into(), "a\r\nb".into())],
                PlanError::HeaderValue("X".into()),
            ),
            (
                |p| p.headers = vec![("content-length".into(), "3".into())],
                PlanError::ManagedHeader("content-length".into()),
            ),
        ];
        for (edit, want) in cases {
            let mut p = plan();
            edit(&mut p);
            assert_eq!(p.validate(), Err(want));
        }
    }

    #[test]
    fn protocol_rules() {
        let mut p = plan();
        p.h2.streams = 0;
        assert_eq!(p.validate(), Err(PlanError::NoStreams));
        p.h2.streams = 8;
        assert_eq!(
            p.validate(),
            Err(PlanError::StreamsNeedH2(8)),
            "http:// without --http2"
        );
        p.protocol = Protocol::Http2;
        assert_eq!(p.validate(), Ok(()), "h2c prior knowledge");
        let mut s = Plan::new(Target::parse("https://h/").unwrap());
        s.h2.streams = 8;
        assert_eq!(s.validate(), Ok(()), "https may negotiate h2");
        s.protocol = Protocol::Http1;
        assert_eq!(s.validate(), Err(PlanError::StreamsNeedH2(8)));
        s.protocol = Protocol::Auto;
        s.h2.stream_window = 1000;
        assert_eq!(s.validate(), Err(PlanError::H2Window));
        s.h2.stream_window = H2_MAX_WINDOW;
        s.h2.max_frame = 1000;
        assert_eq!(s.validate(), Err(PlanError::H2Frame));
        s.h2.max_frame = 16_384;
        s.tls.cert = Some(b"pem".to_vec());
        assert_eq!(s.validate(), Err(PlanError::CertWithoutKey));
        let mut k = Plan::new(Target::parse("https://h/").unwrap());
        k.h2.streams = 2;
        k.keep_alive = false;
        assert_eq!(k.validate(), Err(PlanError::StreamsWithoutKeepAlive));
        let mut q = plan();
        q.tls.insecure = true;
        assert_eq!(q.validate(), Err(PlanError::TlsWithoutHttps));
        let mut u = Plan::new(Target::parse("https://h/").unwrap());
        u.route.unix_socket = Some("/run/x.sock".into());
        assert_eq!(u.validate(), Err(PlanError::UnixSocketTls));
        let mut v = plan();
        v.route.unix_socket = Some("/run/x.sock".into());
        assert_eq!(v.validate(), Ok(()));
        v.route.family = Some(crate::route::Family::V6);
        assert_eq!(
            v.validate(),
            Err(PlanError::UnixSocketWith("--ipv4 or --ipv6"))
        );
    }

    #[test]
    fn connection_close_header_closes_connections() {
        let mut p = plan();
        assert!(!p.closes_connections());
        p.headers = vec![("CONNECTION".into(), "upgrade, Close".into())];
        assert!(p.closes_connections());
        p.headers = vec![("Connection".into(), "keep-alive".into())];
        assert!(!p.closes_connections());
        p.keep_alive = false;
        assert!(p.closes_connections());
    }

    #[test]
    fn threads_never_exceed_connections() {
        let mut p = plan();
        p.connections = 3;
        p.threads = 8;
        assert_eq!(p.effective_threads(), 3);
    }

    #[test]
    fn serde_round_trip() {
        let mut p = plan();
        p.stop = Stop::Duration(Duration::from_millis(1500));
        let back: Plan = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
    }
}
