//! The load flags, `LoadArgs`: how the load is made whatever the URL, shared by a run, each
//! target of `spate compare`, `spate sweep` and `spate mcp`; parsed by clap, made into a plan
//! by `load`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::values;
use crate::route::ConnectTo;

/// How the load is made, whatever the URL: a run's flags, and each target's in `spate compare`.
#[derive(Debug, Clone, Args)]
pub struct LoadArgs {
    /// Number of requests in total (10k, 1m); 200 when neither -n nor -z is given.
    #[arg(
        short = 'n',
        long = "requests",
        value_name = "N",
        value_parser = values::count,
        conflicts_with = "duration"
    )]
    pub requests: Option<u64>,

    #[command(flatten)]
    pub connections: ConnectionsArg,

    /// Run for this long (500ms, 10s, 1m30s) instead of a request count.
    #[arg(short = 'z', long = "duration", value_name = "TIME", value_parser = values::duration)]
    pub duration: Option<Duration>,

    /// Open model: R requests per second in total (across all connections), at intended times;
    /// latency counts from the intended time. hey's -q is per worker; spate's is the total.
    #[arg(short = 'q', long = "rate", value_name = "R", value_parser = values::rate)]
    pub rate: Option<(u64, u64)>,

    /// Load that moves during the run, in k6's sense: DUR:TARGET,... (30s:100/s,1m:500/s,30s:0/s).
    /// Each stage moves linearly from the previous target to its own over its duration (the
    /// first from 0; a 0s stage jumps). Targets with /s are request rates: the open model, its
    /// intended times following the curve. Plain numbers are connections (30s:10,1m:50): the
    /// closed model, connections opened and closed as the target moves (the highest is -c).
    /// The run lasts the stages.
    #[arg(
        long = "stages",
        value_name = "DUR:TARGET,...",
        value_parser = values::stages,
        conflicts_with_all = ["duration", "requests", "rate"]
    )]
    pub stages: Option<crate::plan::Stages>,

    /// Open model: drop (and count) requests that could not be sent within this of their
    /// intended time.
    #[arg(long = "max-lag", value_name = "TIME", value_parser = values::duration)]
    pub max_lag: Option<Duration>,

    /// Requests per connection, then it is closed (Connection: close) and re-opened; --rpc 1
    /// measures connections per second.
    #[arg(long = "rpc", value_name = "N", value_parser = values::count)]
    pub rpc: Option<u64>,

    /// Send load for this long before measuring (not recorded; -n/-z start after it). With
    /// --stages, at the first stage's target, before the profile starts as written.
    #[arg(long = "warmup", value_name = "TIME", default_value = "0s", value_parser = values::duration)]
    pub warmup: Duration,

    /// Poll for responses instead of sleeping: lower measurement overhead, one busy core per
    /// load thread.
    #[arg(long = "busy-poll")]
    pub busy_poll: bool,

    /// Timeout per request, from its start to the last byte of the response (at least 1ms, with
    /// a unit: -t 4s); a response that completes later is a timeout.
    #[arg(short = 't', long = "timeout", value_name = "TIME", default_value = "20s", value_parser = values::timeout)]
    pub timeout: Duration,

    /// Timeout per connection attempt.
    #[arg(long = "connect-timeout", value_name = "TIME", default_value = "10s", value_parser = values::duration)]
    pub connect_timeout: Duration,

    /// Longest time to open the -c connections before the clock starts [default: 30s, or
    /// --connect-timeout if longer]. The run then starts with those that are open, and the
    /// report says what became of the others.
    #[arg(long = "setup-timeout", value_name = "TIME", value_parser = values::duration)]
    pub setup_timeout: Option<Duration>,

    /// HTTP method.
    #[arg(short = 'm', long = "method", default_value = "GET")]
    pub method: String,

    /// Request header "Name: value" (repeatable); replaces a default header of the same name.
    #[arg(short = 'H', long = "header", value_name = "HEADER", value_parser = values::header)]
    pub headers: Vec<(String, String)>,

    /// Request body.
    #[arg(
        short = 'd',
        long = "body",
        value_name = "BODY",
        conflicts_with = "body_file"
    )]
    pub body: Option<String>,

    /// Request body read from a file (once, before the run; at most 64 MiB).
    #[arg(short = 'D', long = "body-file", value_name = "FILE")]
    pub body_file: Option<PathBuf>,

    /// A wrk Lua script: what it sets in the wrk table (method, path, headers, body), in its
    /// body or in init(args), becomes the request. Words after -- are init's args.
    #[arg(short = 's', long = "script", value_name = "FILE.lua")]
    pub script: Option<PathBuf>,

    /// The words after --, for the script's init(args).
    #[arg(skip)]
    pub script_args: Vec<String>,

    /// The run is made elsewhere (`spate k8s-job`'s pods): the script is compiled to check it,
    /// never run here.
    #[arg(skip)]
    pub compile_script_only: bool,

    /// Content-Type header.
    #[arg(short = 'T', long = "content-type", value_name = "TYPE")]
    pub content_type: Option<String>,

    /// Accept header.
    #[arg(short = 'A', long = "accept", value_name = "TYPE")]
    pub accept: Option<String>,

    /// Basic authentication, user:pass.
    #[arg(short = 'a', long = "basic-auth", value_name = "USER:PASS", value_parser = values::basic_auth)]
    pub basic_auth: Option<(String, String)>,

    /// Send "Connection: close" and open a new connection for every request.
    #[arg(long = "disable-keepalive")]
    pub disable_keepalive: bool,

    /// Do not send "Accept-Encoding: gzip, deflate, br".
    #[arg(long = "disable-compression")]
    pub disable_compression: bool,

    /// Force HTTP/1.1 (on https://, offer only http/1.1 with ALPN).
    #[arg(long = "http1.1", conflicts_with_all = ["http2", "http3", "http_version"])]
    pub http1: bool,

    /// Force HTTP/2: ALPN h2 on https://, prior knowledge (h2c) on http://.
    #[arg(long = "http2", conflicts_with_all = ["http3", "http_version"])]
    pub http2: bool,

    /// HTTP/3 over QUIC (UDP) on an https:// URL: ALPN h3, TLS 1.3, -p streams per connection.
    #[arg(long = "http3", conflicts_with = "http_version")]
    pub http3: bool,

    /// HTTP/3 where the server says it is: one request over TCP (HTTP/2 or 1.1 by ALPN) before
    /// the run reads its Alt-Svc header, and the run goes over QUIC to its h3 alternative.
    #[arg(long = "alt-svc", conflicts_with_all = ["http1", "http2", "http3", "http_version"])]
    pub alt_svc: bool,

    /// The HTTP version to speak: 1.1, 2 or 3 (the same as --http1.1, --http2 or --http3).
    #[arg(long = "http-version", value_name = "VERSION", value_parser = values::http_version)]
    pub http_version: Option<crate::plan::Protocol>,

    /// Streams in flight per connection, HTTP/2 or HTTP/3 (never more than the server allows).
    #[arg(short = 'p', long = "streams", value_name = "N", default_value_t = 1)]
    pub streams: u32,

    /// HTTP/2 stream window we advertise [default: 2^30-1].
    #[arg(long = "h2-stream-window", value_name = "BYTES", value_parser = values::count)]
    pub h2_stream_window: Option<u64>,

    /// HTTP/2 connection window we advertise [default: 2^30-1].
    #[arg(long = "h2-conn-window", value_name = "BYTES", value_parser = values::count)]
    pub h2_conn_window: Option<u64>,

    /// Largest HTTP/2 frame we accept [default: 16384].
    #[arg(long = "h2-max-frame", value_name = "BYTES", value_parser = values::count)]
    pub h2_max_frame: Option<u64>,

    /// Do not verify the server's certificate (the report says so).
    #[arg(short = 'k', long = "insecure")]
    pub insecure: bool,

    /// Trust these PEM certificates too, besides the system's roots; one the server presents as
    /// its own (a self-signed certificate) is trusted as itself.
    #[arg(long = "cacert", value_name = "FILE")]
    pub cacert: Option<PathBuf>,

    /// Client certificate chain (PEM) for mTLS.
    #[arg(long = "cert", value_name = "FILE")]
    pub cert: Option<PathBuf>,

    /// Client private key (PEM) for mTLS.
    #[arg(long = "key", value_name = "FILE")]
    pub key: Option<PathBuf>,

    /// Connect to HOST2:PORT2 wherever the URL says HOST1:PORT1 (repeatable; the first match
    /// wins; an empty field matches any, or keeps the URL's). Host header and TLS name stay the
    /// URL's.
    #[arg(
        long = "connect-to",
        value_name = "HOST1:PORT1:HOST2:PORT2",
        value_parser = values::connect_to
    )]
    pub connect_to: Vec<ConnectTo>,

    /// Connect over IPv4 only.
    #[arg(short = '4', long = "ipv4", conflicts_with = "ipv6")]
    pub ipv4: bool,

    /// Connect over IPv6 only.
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,

    /// Connect to this Unix domain socket (HTTP/1.1 or h2c); the URL still gives the Host
    /// header and the path.
    #[arg(long = "unix-socket", value_name = "PATH")]
    pub unix_socket: Option<PathBuf>,

    /// Send everything through this HTTP proxy, http://[user:pass@]host[:port] (port 1080 if
    /// none): absolute-form requests for http:// over HTTP/1.1, a CONNECT tunnel for https://
    /// and HTTP/2. The credentials are never printed.
    // Parsed after clap: clap's own error would repeat the value, credentials and all.
    #[arg(short = 'x', long = "proxy", value_name = "URL")]
    pub proxy: Option<String>,

    /// Follow up to N redirects (301, 302, 303, 307, 308) per request, over any version; latency
    /// covers the whole chain. 303 (and 301/302 after a POST) becomes a GET; credentials go only
    /// to the URL's own origin. More than N in a row fail as "redirect" [default: 0, not followed].
    #[arg(long = "redirect", value_name = "N")]
    pub redirect: Option<u32>,

    /// Measure responses as streams: time to the first event and to the first data event,
    /// the gaps between events, events per response. auto: text/event-stream as SSE,
    /// NDJSON/JSON lines as lines, any other type not as a stream; sse, lines: every response
    /// so; chunks: each read of the body is a unit. --done, --usage, --max-events,
    /// --max-stream-time and --idle-timeout imply auto [default: off].
    #[arg(long = "stream", value_name = "MODE", value_parser = ["auto", "sse", "lines", "chunks", "off"])]
    pub stream: Option<String>,

    /// The data of the event (or line) that ends a stream as it should, e.g. '[DONE]'; a
    /// stream that ends without it fails as "stream_truncated".
    #[arg(long = "done", value_name = "TEXT")]
    pub done: Option<String>,

    /// Read output tokens from the stream's final usage object (openai: the
    /// `usage.completion_tokens` OpenAI-compatible servers send when asked with
    /// `stream_options.include_usage`); only chunks with content count as data events.
    #[arg(long = "usage", value_name = "FORMAT", value_parser = ["openai"])]
    pub usage: Option<String>,

    /// End each stream after N events (a completed response, ended by the cap).
    #[arg(long = "max-events", value_name = "N", value_parser = values::count)]
    pub max_events: Option<u64>,

    /// End each stream this long after its request started (checked as its bytes arrive; a
    /// completed response, ended by the cap).
    #[arg(long = "max-stream-time", value_name = "TIME", value_parser = values::duration)]
    pub max_stream_time: Option<Duration>,

    /// Fail a stream that receives no bytes for this long ("stream_idle"); once a response's
    /// first byte has arrived, this replaces the request timeout, which would end long streams.
    #[arg(long = "idle-timeout", value_name = "TIME", value_parser = values::duration)]
    pub idle_timeout: Option<Duration>,

    /// Load threads [default: the cores available to the process].
    #[arg(long = "threads", value_name = "N")]
    pub threads: Option<u32>,

    /// Accepted for wrk's command lines; spate always prints the latency percentiles.
    #[arg(long = "latency")]
    pub latency: bool,

    /// Before the load, send the run's first request (a list's first, a script's first
    /// request(), MCP's handshake and first call) on a connection of its own and show it and the
    /// answer on stderr as curl -v does (credentials masked); it is not counted.
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,

    /// Check the command line and print what the run would do and the first request it would
    /// send (as -v shows it), then exit without connecting.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
}

/// `-c`, shared by a load test and the demo.
#[derive(Debug, Clone, Args)]
pub struct ConnectionsArg {
    /// Concurrent connections [default: 50, or -n if that is fewer].
    #[arg(short = 'c', long = "connections", value_name = "N")]
    pub connections: Option<u32>,
}
