//! The clap definition of spate's command line: `spate [OPTIONS] <URL>`, `spate serve`,
//! `spate demo`. Letters follow hey and vastar where they exist.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::values;
use crate::analysis::SloSpec;

fn slo(s: &str) -> Result<SloSpec, String> {
    s.parse()
}

const EXAMPLES: &str = "\
Examples:
  spate demo                                     a 5 s test against the built-in target
  spate -c 200 -z 10s http://127.0.0.1:8080/     200 connections for 10 seconds
  spate -n 10k -c 50 http://127.0.0.1:8080/api   exactly 10,000 requests
  spate -m POST -T application/json -d '{\"a\":1}' http://127.0.0.1:8080/items
  spate -c 200 -z 8s --format json --save a.json http://127.0.0.1:8080/   JSON for CI
  spate serve --port 8080 --body-size 1k         the built-in target, for your own tests

Comparing servers: run `spate -c 200 -z 8s URL` once per server, same machine, same flags,
and compare requests/sec and the latency percentiles.

Live progress goes to stderr: a block redrawn in place on a terminal, a line every 10 s
otherwise (--no-progress: neither). Ctrl-C stops sending, waits briefly for requests in
flight and prints the report; a second Ctrl-C quits at once.

Exit codes: 0 the run completed with at least one response below 400; 1 the target was
unreachable or no response below 400 arrived; 2 usage or input error; 3 an --slo threshold
failed; 130 interrupted by Ctrl-C or SIGTERM (the report is still printed).";

#[derive(Debug, Parser)]
#[command(
    name = "spate",
    version,
    about = "HTTP load generator: raw-TCP HTTP/1.1, HDR latency, honest reports",
    after_help = EXAMPLES,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Sub>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Run the built-in HTTP/1.1 target server on loopback.
    Serve(ServeArgs),
    /// Start the built-in target in-process and run a short load test against it.
    Demo(DemoArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// URL to load, e.g. http://127.0.0.1:8080/
    #[arg(value_name = "URL")]
    pub url: Option<String>,

    /// Number of requests in total (10k, 1m). Ignored when --duration is given.
    #[arg(short = 'n', long = "requests", value_name = "N", value_parser = values::count)]
    pub requests: Option<u64>,

    #[command(flatten)]
    pub connections: ConnectionsArg,

    /// Run for this long (500ms, 10s, 1m30s) instead of a request count.
    #[arg(short = 'z', long = "duration", value_name = "TIME", value_parser = values::duration)]
    pub duration: Option<Duration>,

    /// Timeout per request, from its start to the last byte of the response.
    #[arg(short = 't', long = "timeout", value_name = "TIME", default_value = "20s", value_parser = values::duration)]
    pub timeout: Duration,

    /// Timeout per connection attempt.
    #[arg(long = "connect-timeout", value_name = "TIME", default_value = "10s", value_parser = values::duration)]
    pub connect_timeout: Duration,

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

    /// Request body read from a file (once, before the run).
    #[arg(short = 'D', long = "body-file", value_name = "FILE")]
    pub body_file: Option<PathBuf>,

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

    /// Load threads [default: the cores available to the process].
    #[arg(long = "threads", value_name = "N")]
    pub threads: Option<u32>,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// `-c`, shared by a load test and the demo.
#[derive(Debug, Args)]
pub struct ConnectionsArg {
    /// Concurrent connections.
    #[arg(
        short = 'c',
        long = "connections",
        value_name = "N",
        default_value_t = 50
    )]
    pub connections: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Latency targets and CI thresholds, e.g. p50=20ms,p99=250ms,errors=1%,rps=5000. Latency
    /// targets set the colour levels; every target is checked after the report (exit code 3
    /// when one fails).
    #[arg(long = "slo", value_name = "TARGETS", value_parser = slo)]
    pub slo: Option<SloSpec>,

    /// Bars in the latency histogram.
    #[arg(long = "hist-bins", value_name = "N", default_value_t = 11, value_parser = clap::value_parser!(u16).range(1..=200))]
    pub hist_bins: u16,

    /// Never colour the report (NO_COLOR is honoured too).
    #[arg(long = "no-color")]
    pub no_color: bool,

    /// No live progress on stderr.
    #[arg(long = "no-progress")]
    pub no_progress: bool,

    /// Report format on stdout.
    #[arg(long = "format", value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// Also write the JSON result to this file (atomically).
    #[arg(long = "save", value_name = "FILE")]
    pub save: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long = "host", default_value = "127.0.0.1")]
    pub host: IpAddr,

    /// Port to listen on (0: any free port, printed at start).
    #[arg(short = 'p', long = "port", default_value_t = 8080)]
    pub port: u16,

    /// Response body size in bytes (1k = 1000).
    #[arg(long = "body-size", value_name = "BYTES", default_value = "12", value_parser = values::count)]
    pub body_size: u64,

    /// Response status code.
    #[arg(long = "status", default_value_t = 200, value_parser = clap::value_parser!(u16).range(200..=999))]
    pub status: u16,

    /// Delay before each response (e.g. 5ms).
    #[arg(long = "delay", value_name = "TIME", default_value = "0s", value_parser = values::duration)]
    pub delay: Duration,

    /// Send bodies with Transfer-Encoding: chunked.
    #[arg(long = "chunked")]
    pub chunked: bool,

    /// Server threads.
    #[arg(long = "threads", value_name = "N", default_value_t = 1)]
    pub threads: u32,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// How long the demo load test runs.
    #[arg(short = 'z', long = "duration", value_name = "TIME", default_value = "5s", value_parser = values::duration)]
    pub duration: Duration,

    #[command(flatten)]
    pub connections: ConnectionsArg,

    #[command(flatten)]
    pub output: OutputArgs,
}
