//! `PlanError`: why a plan cannot run, one line that names the flag to change. Only messages
//! here; the checks that raise them live with `Plan`.

/// Why a plan cannot run. Each message names the flag so that a person can fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("--connections must be at least 1")]
    NoConnections,
    #[error("--threads must be at least 1")]
    NoThreads,
    #[error(
        "--requests ({requests}) is smaller than --connections ({connections}); every connection needs at least one request"
    )]
    FewerRequestsThanConnections { requests: u64, connections: u32 },
    #[error("--duration must be longer than zero")]
    ZeroDuration,
    #[error(
        "--timeout must be at least 1ms: spate checks timeouts once a millisecond at the finest"
    )]
    ShortTimeout,
    #[error(
        "--connect-timeout must be at least 1ms: spate checks timeouts once a millisecond at the finest"
    )]
    ShortConnectTimeout,
    #[error("--setup-timeout must be at least 1ms")]
    ShortSetupTimeout,
    #[error("{0} is too long: at most 365d")]
    TooLong(&'static str),
    #[error("invalid method {0:?}: a method is a token such as GET or POST")]
    Method(String),
    #[error(
        "invalid path {0:?}: a request's path has no spaces or control characters (CR, LF...); percent-encode them (%20, %0D, %0A)"
    )]
    Path(String),
    #[error("invalid header name {0:?}")]
    HeaderName(String),
    #[error("invalid value for header {0:?}: it must not contain CR, LF or NUL")]
    HeaderValue(String),
    #[error(
        "header {0:?} is managed by spate; set the body with -d/-D and keep-alive with --disable-keepalive"
    )]
    ManagedHeader(String),
    #[error("--streams must be at least 1")]
    NoStreams,
    #[error(
        "--streams {0} needs HTTP/2 or HTTP/3: HTTP/1.1 has one request in flight per connection (use --http2, --http3, or an https:// URL)"
    )]
    StreamsNeedH2(u32),
    #[error(
        "fewer requests per connection (--rpc, --disable-keepalive) than --streams leaves streams idle"
    )]
    StreamsWithoutKeepAlive,
    #[error("--stream cannot be combined with --redirect: the hops of a chain are not one stream")]
    StreamRedirect,
    #[error("--max-events must be at least 1")]
    ZeroMaxEvents,
    #[error("--max-stream-time and --idle-timeout must be longer than zero")]
    ZeroStreamTime,
    #[error("--rpc must be at least 1")]
    ZeroRpc,
    #[error("--disable-keepalive means --rpc 1; give one or the other")]
    RpcWithoutKeepAlive,
    #[error("--max-lag needs the open model (-q RATE, or --stages of rates)")]
    MaxLagWithoutRate,
    #[error("--stages: {0}")]
    StagesOf(&'static str),
    #[error("--max-lag must be longer than zero")]
    ZeroMaxLag,
    #[error("-q must be above zero")]
    ZeroRate,
    #[error("--h2-stream-window and --h2-conn-window must be between 65535 and 2147483647")]
    H2Window,
    #[error("--h2-max-frame must be between 16384 and 16777215")]
    H2Frame,
    #[error("--cert and --key go together (mTLS needs both)")]
    CertWithoutKey,
    #[error(
        "TLS options (--insecure, --cacert, --cert, --key) need an https:// URL (or --redirect, which may lead to one)"
    )]
    TlsWithoutHttps,
    #[error(
        "--unix-socket carries HTTP/1.1 and h2c, not TLS: use an http:// URL (its host names the Host header)"
    )]
    UnixSocketTls,
    #[error("--unix-socket says where every connection goes; it cannot be combined with {0}")]
    UnixSocketWith(&'static str),
    #[error("--proxy and --connect-to both say where connections go; give one")]
    ProxyWithConnectTo,
    #[error("a script with delay(), request() or response() cannot be combined with {0}")]
    ScriptWith(&'static str),
    #[error("a request list (several URLs, --urls-from-file) cannot be combined with {0}")]
    ListWith(&'static str),
    #[error("spate grpc: {0}")]
    GrpcOf(&'static str),
    #[error("--http3 needs an https:// URL: HTTP/3 runs over QUIC, which is always encrypted")]
    Http3NeedsHttps,
    #[error("--http3 cannot be combined with {0}")]
    Http3With(&'static str),
}
