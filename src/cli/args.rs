//! The clap definition of spate's command line: `spate [OPTIONS] <URL>` and its subcommands;
//! the load, output, MCP and series flags are in files of their own. Letters follow hey and
//! vastar where they exist.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use super::load_args::{ConnectionsArg, LoadArgs};
pub use super::mcp_args::{McpArgs, McpCallArgs};
pub use super::output_args::{FormatArg, Forms, OutputArgs};
pub use super::series_args::{CompareArgs, CompareFormat, CompareOrder, SweepArgs};

use super::values;

pub(super) const EXAMPLES: &str = "\
Examples:
  spate demo                                     a 5 s test against the built-in target
  spate -c 200 -z 10s http://127.0.0.1:8080/     200 connections for 10 seconds
  spate -n 10k -c 50 http://127.0.0.1:8080/api   exactly 10,000 requests
  spate -m POST -T application/json -d '{\"a\":1}' http://127.0.0.1:8080/items
  spate -c 16 -p 16 --http2 -z 10s http://127.0.0.1:8080/     HTTP/2 (h2c), 16 x 16 streams
  spate -z 10s --cacert ca.pem https://127.0.0.1:8443/         HTTPS; ALPN picks h2 or 1.1
  spate -c 16 -p 8 --http3 -z 10s https://127.0.0.1:8443/     HTTP/3 over QUIC
  spate -c 200 -z 8s --format json --save a.json http://127.0.0.1:8080/   JSON for CI
  spate serve --port 8080 --body-size 1k         the built-in target, for your own tests

Comparing servers (two frameworks, two versions, a proxy and the server behind it):
  spate compare -c 200 -z 8s axum=http://127.0.0.1:8080/ actix=http://127.0.0.1:8081/
  spate sweep --conc 10..1000 -z 5s http://127.0.0.1:8080/     throughput and tail per level
  spate -z 8s --baseline main.json --max-regression p99=10% http://127.0.0.1:8080/

Beyond one machine (each machine one shard of the job, then their results merged):
  spate -c 400 -z 60s --shard 0/4 --start-at 2026-11-27T10:00:00Z --save shard-0.json http://10.0.0.5:8080/
  spate merge shard-*.json                       the job: histograms added, rate over its window
  spate k8s-job --shards 8 --image IMAGE -- -c 800 -z 5m http://api:8080/ > job.yaml

Shell completions and the manual page:
  spate completions bash > ~/.local/share/bash-completion/completions/spate
  spate man | man -l -

Live progress goes to stderr: a block redrawn in place on a terminal, a line every 10 s
otherwise (--no-progress: neither). Ctrl-C (or SIGTERM, or SIGHUP when the terminal closes)
stops sending, waits briefly for requests in flight, saves and prints the report; a second
Ctrl-C, half a second or more after the first, quits at once.

Exit codes: 0 the run completed with at least one response below 400; 1 the target was
unreachable or no response below 400 arrived; 2 usage or input error, -c beyond the open-file
limit (nothing sent), the report or --save could not be written, or a script's error stopped
the run (after its report); 3 an --slo threshold or a
--max-regression gate failed; 4 a shard's connections were ready later than --start-at
and --start-deadline allow (nothing sent); 130 interrupted by Ctrl-C, SIGTERM or SIGHUP (the
report is still printed and saved).";

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
    /// Run the built-in target server (HTTP/1.1, h2c, TLS) on loopback.
    ///
    /// Ctrl-C or SIGTERM stops it after printing how many requests it answered.
    Serve(ServeArgs),
    /// Start the built-in target in-process and run a short load test against it.
    Demo(DemoArgs),
    /// Print a shell completion script to stdout.
    ///
    /// bash: `spate completions bash > ~/.local/share/bash-completion/completions/spate`;
    /// zsh: into a directory on $fpath as `_spate`; fish: `~/.config/fish/completions/spate.fish`;
    /// PowerShell: `spate completions powershell | Out-String | Invoke-Expression` in $PROFILE.
    Completions {
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) to stdout: `spate man > spate.1`, or `spate man | man -l -`.
    Man,
    /// Show a saved result (--save, --format json) again: the text report as the run printed it
    /// (colours aside), or its JSON or CSV.
    Report(ReportArgs),
    /// Compare targets: each run in turn for --rounds rounds with the same load flags, then one
    /// table of medians, ranges, changes against the reference and verdicts.
    ///
    /// A target is a URL or NAME=URL. The statistical unit is one round: the verdict on each
    /// figure is the exact Mann-Whitney U test on the rounds at --alpha, and a change within
    /// --noise is no difference whatever the test says.
    ///
    /// With MCP calls (--tool, --args-file, --resource, --prompt, --tools-list), each target is
    /// an MCP server's endpoint, each run measured as `spate mcp` measures one.
    #[command(mut_arg("verbose", |a| a.hide(true)))]
    Compare(Box<CompareArgs>),
    /// Run as wrk runs: wrk's flags and defaults (-c 10, -d 10s, -t 2, --timeout 2s), its Lua
    /// scripts, and its text layout, for the scripts and jobs that parse wrk's output.
    ///
    /// --format json (or csv, --save, --html) gives spate's own report instead. Arguments after
    /// the URL (after `--` or not) go to the script's init(args).
    Wrk(Box<WrkArgs>),
    /// Run one URL at each of several concurrency levels: a table of throughput and tail per
    /// level, and the knee, the fewest connections that reach 95 % of the peak rate.
    ///
    /// With --vs, a reference URL (the server behind a proxy, say) runs at each level too, and
    /// the table shows the overhead at each.
    #[command(
        mut_arg("verbose", |a| a.hide(true)),
        mut_arg("connections", |a| a.hide(true)),
        mut_arg("requests", |a| a.help("Requests at each level (10k, 1m), at least the most connections; -z 5s a level when neither -n nor -z is given")),
        mut_arg("duration", |a| a.help("Run each level for this long (500ms, 10s, 1m30s) instead of a request count"))
    )]
    Sweep(Box<SweepArgs>),
    /// Benchmark an MCP server's tools over Streamable HTTP (or the legacy HTTP+SSE transport):
    /// each call timed to the JSON-RPC response with its id, judged (a tool's isError and a JSON-RPC error are failures, not
    /// successes), and reported per tool.
    ///
    /// Name the calls with --tool (and --args), --args-file, --resource, --prompt or
    /// --tools-list; spate does not guess. `spate mcp --list URL` prints the server's tools and
    /// their input schemas. The load flags are a run's (-c, -n, -z, -q, --slo, --format...).
    /// To compare servers, give the same calls to `spate compare`.
    #[command(
        mut_arg("method", |a| a.hide(true)),
        mut_arg("body", |a| a.hide(true)),
        mut_arg("body_file", |a| a.hide(true)),
        mut_arg("script", |a| a.hide(true)),
        mut_arg("content_type", |a| a.hide(true)),
        mut_arg("accept", |a| a.hide(true))
    )]
    Mcp(Box<McpArgs>),
    /// Call a gRPC method under load: unary and streaming calls over HTTP/2, each a
    /// success only with grpc-status 0; every other status is a failure class named by its
    /// code (grpc_not_found...), with its first message.
    ///
    /// The schema comes from --proto (compiled at start, no protoc) or, without it, from the
    /// server's reflection service; `spate grpc --list URL` prints its services and methods.
    /// -d (or -D FILE) is the request message as proto3's JSON, built once; -m adds metadata. The load flags are a
    /// run's (-c, -p streams per connection, -n, -z, -q, --stages, --slo, --save...).
    #[command(
        mut_arg("method", |a| a.short(None).hide(true)),
        mut_arg("body", |a| a.help("The request message as JSON (proto3's JSON mapping), e.g. -d '{\"key\":\"k\"}'; {} without. A JSON array is several messages, sent in turn (or, to a method that streams from the client, all in each call)")),
        mut_arg("body_file", |a| a.help("The request message as JSON, from this file; several (an array, or JSON lines) are sent in turn")),
        mut_arg("script", |a| a.hide(true)),
        mut_arg("content_type", |a| a.hide(true)),
        mut_arg("accept", |a| a.hide(true)),
        mut_arg("verbose", |a| a.help("Make one call before the run and show it on stderr: the fields, the messages as JSON, the trailers")),
        mut_arg("dry_run", |a| a.help("Print the call as it would be sent, and send nothing")),
        mut_arg("stream", |a| a.hide(true)),
        mut_arg("done", |a| a.hide(true)),
        mut_arg("usage", |a| a.hide(true)),
        mut_arg("max_events", |a| a.help("End each server-streaming call after N messages (spate cancels it; a success)")),
        mut_arg("max_stream_time", |a| a.help("End each server-streaming call this long after it started (spate cancels it; a success)")),
        mut_arg("idle_timeout", |a| a.help("Fail a server-streaming call that receives nothing for this long (\"stream_idle\")"))
    )]
    Grpc(Box<super::grpc::GrpcArgs>),
    /// Merge the results of a job's shards (--shard, their JSON) into the job's: latency
    /// histograms added exactly, counts summed, the rate over the job's window, the start skew
    /// and a row per shard.
    ///
    /// Refuses, with one line and exit 2, results of different jobs (URL, method, model, the
    /// job's connections, requests, duration or rate), a missing or repeated shard, a shard
    /// that did not run, and results that are not shards', unless --force.
    Merge(super::merge::MergeArgs),
    /// Print a Kubernetes Indexed Job whose pods are the shards of one run: each with its
    /// completion index as its shard, all starting at one instant, its result in its log.
    ///
    /// `kubectl apply -f` it; when it is complete, the comments at its top say how to collect
    /// the pods' logs for `spate merge`.
    #[command(name = "k8s-job")]
    K8sJob(Box<super::k8s::K8sJobArgs>),
}

/// wrk's command line (`wrk --help`), with its defaults.
#[derive(Debug, Args)]
pub struct WrkArgs {
    /// Connections to keep open.
    #[arg(short = 'c', long = "connections", value_name = "N", default_value = "10", value_parser = values::count)]
    pub connections: u64,

    /// Duration of test (2s, 2m, 2h; a bare number is seconds).
    #[arg(short = 'd', long = "duration", value_name = "T", default_value = "10s", value_parser = values::duration)]
    pub duration: Duration,

    /// Number of threads to use.
    #[arg(short = 't', long = "threads", value_name = "N", default_value = "2", value_parser = values::count)]
    pub threads: u64,

    /// Load Lua script file.
    #[arg(short = 's', long = "script", value_name = "S")]
    pub script: Option<PathBuf>,

    /// Add header to request.
    #[arg(short = 'H', long = "header", value_name = "H", value_parser = values::header)]
    pub headers: Vec<(String, String)>,

    /// Print latency statistics.
    #[arg(long = "latency")]
    pub latency: bool,

    /// Socket/request timeout.
    #[arg(long = "timeout", value_name = "T", default_value = "2s", value_parser = values::duration)]
    pub timeout: Duration,

    /// Print version details.
    #[arg(short = 'v', long = "version")]
    pub version: bool,

    #[command(flatten)]
    pub forms: Forms,

    /// The URL to load.
    #[arg(value_name = "URL")]
    pub url: Option<String>,

    /// Arguments for the script's init(args), after the URL.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result saved by --save or --format json.
    #[arg(value_name = "RESULT.json")]
    pub file: PathBuf,

    #[command(flatten)]
    pub forms: Forms,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// URL to load, e.g. http://127.0.0.1:8080/; several URLs on one origin are a request list,
    /// sent in turn (--order) and reported per URL.
    #[arg(value_name = "URL")]
    pub urls: Vec<String>,

    /// A request list from a file: a request a line, `URL` or `METHOD URL [BODY]` (# comments),
    /// all on one origin; sent in turn (--order) and reported per URL.
    #[arg(long = "urls-from-file", value_name = "FILE")]
    pub urls_from_file: Option<PathBuf>,

    /// The order of a request list's requests on each load thread.
    #[arg(long = "order", value_enum, value_name = "ORDER")]
    pub order: Option<ListOrder>,

    /// The seed of --order random, for the same sequence again.
    #[arg(long = "seed", value_name = "N")]
    pub seed: Option<u64>,

    /// Arguments for the --script's init(args), after --.
    #[arg(last = true, value_name = "ARGS")]
    pub script_args: Vec<String>,

    #[command(flatten)]
    pub load: LoadArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(
        flatten,
        next_help_heading = "Shards (one part of a run over several machines)"
    )]
    pub shard: ShardArgs,
}

/// A run as one part of a job over several processes or machines.
#[derive(Debug, Clone, Args)]
pub struct ShardArgs {
    /// Run part I (from 0) of a job split N ways: its share of -c and -n (the parts sum to
    /// them), and in the open model the job's every N-th request from the I-th.
    #[arg(long = "shard", value_name = "I/N", value_parser = crate::shard::parse)]
    pub shard: Option<(u32, u32)>,

    /// --shard from the environment: I from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job
    /// sets it), N from SPATE_SHARDS.
    #[arg(long = "shard-from-env", conflicts_with = "shard")]
    pub shard_from_env: bool,

    /// Open the connections, then start at this wall-clock instant: RFC 3339
    /// (2026-11-27T10:00:00Z), unix milliseconds, or +30s from now.
    #[arg(long = "start-at", value_name = "TIME")]
    pub start_at: Option<String>,

    /// With --start-at: connections ready later than the instant plus this (or a start already
    /// that late) send nothing, and the run exits 4.
    #[arg(long = "start-deadline", value_name = "T", value_parser = values::duration, requires = "start_at")]
    pub start_deadline: Option<std::time::Duration>,

    /// After the report, print the JSON result on stdout between marker lines, for a log that
    /// mixes in other lines (a Kubernetes pod's); spate merge finds results in such a log.
    #[arg(long = "log-result")]
    pub log_result: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListOrder {
    RoundRobin,
    Random,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address (or name, such as localhost) to listen on.
    #[arg(long = "host", default_value = "127.0.0.1")]
    pub host: String,

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

    /// Stop answering at every multiple of this since the server started (with --stall-for).
    #[arg(long = "stall-every", value_name = "TIME", value_parser = values::duration, requires = "stall_for")]
    pub stall_every: Option<Duration>,

    /// How long each stall lasts; what arrives meanwhile is answered when it ends.
    #[arg(long = "stall-for", value_name = "TIME", value_parser = values::duration, requires = "stall_every")]
    pub stall_for: Option<Duration>,

    /// Send bodies with Transfer-Encoding: chunked (HTTP/1.1).
    #[arg(long = "chunked")]
    pub chunked: bool,

    /// Plain connections speak HTTP/2 with prior knowledge (h2c).
    #[arg(long = "h2c")]
    pub h2c: bool,

    /// Serve TLS with this certificate chain (PEM); ALPN offers h2 and http/1.1.
    #[arg(long = "tls-cert", value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The private key of --tls-cert (PEM).
    #[arg(long = "tls-key", value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Require client certificates signed by this CA (PEM); needs --tls-cert.
    #[arg(long = "client-ca", value_name = "FILE", requires = "tls_cert")]
    pub client_ca: Option<PathBuf>,

    /// With TLS, offer only http/1.1 with ALPN.
    #[arg(long = "http1.1", requires = "tls_cert")]
    pub http1: bool,

    /// With TLS, serve HTTP/3 too, over QUIC on the UDP port of the same number.
    #[arg(long = "http3", requires = "tls_cert")]
    pub http3: bool,

    /// HTTP/2 MAX_CONCURRENT_STREAMS to announce.
    #[arg(long = "max-streams", value_name = "N")]
    pub max_streams: Option<u32>,
    /// Server threads.
    #[arg(long = "threads", value_name = "N", default_value_t = 1)]
    pub threads: u32,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Run the demo over HTTP/2 (h2c).
    #[arg(long = "http2")]
    pub http2: bool,

    /// HTTP/2 streams per connection (with --http2).
    #[arg(
        short = 'p',
        long = "streams",
        value_name = "N",
        default_value_t = 1,
        requires = "http2"
    )]
    pub streams: u32,
    /// How long the demo load test runs.
    #[arg(short = 'z', long = "duration", value_name = "TIME", default_value = "5s", value_parser = values::duration)]
    pub duration: Duration,

    #[command(flatten)]
    pub connections: ConnectionsArg,

    #[command(flatten)]
    pub output: OutputArgs,
}
