//! spate: an HTTP load generator that must never be the bottleneck of the test it runs.
//!
//! ```text
//! argv --cli--> Plan (+ its script, loaded) --engine--> threads (current-thread tokio runtime each)
//!   --> one task set of connections per thread --> proto::h1 / proto::h2 lanes (write
//!   prepared bytes, parse the response sans-IO) --> per-thread Stats (HDR histograms, counters)
//! Stats merged once at the end --> stats::Summary --> analysis (typed findings)
//!   --> report (text | JSON | CSV | HTML)
//! ```
//!
//! Module map. The run: [`app`] (the command line's application: parse, signals, display,
//! engine, report, exit code), [`cli`] (the only module that knows clap), [`plan`] (validated
//! plain data), [`target`] (the URL), [`route`] (where connections go, resolved once),
//! [`request`] (bytes built once), [`request_list`] (several URLs, `--urls-from-file`),
//! [`script`] (wrk's Lua, loaded before the run and passed beside the plan), [`redirect`]
//! (--redirect's rules), [`grpc`] (a gRPC service's schema from its .proto files, and a call's
//! request message built from JSON), [`mcp`] (MCP's calls, requests and answers; [`calls`] holds what a request list carries of them), [`shard`] (a run as one
//! part of a job over several machines; [`merge`] adds the shards' results, [`k8s_job`] runs
//! them as a Kubernetes Job), [`alt_svc`] (--alt-svc: where a server says its HTTP/3 is),
//! [`reach`] (how a plan's connections reach its target: protocol choice, TLS and QUIC clients), [`net`] (TCP and Unix connect, proxies, TLS), [`proto`] (sans-IO HTTP/1.1, HTTP/2 and event-stream parsing, and the
//! lanes), [`engine`] (threads, their task sets, pacing, stopping), [`clock`] and [`timer`] (the
//! request path's time), [`stats`] (histograms, counters, `Summary`), [`analysis`] (typed
//! findings), [`report`] (every form of the result), [`ui`] (the live display, the terminal,
//! signals), [`verbose`] (-v), [`watch`] (what watches a run while it goes: --live-json's lines
//! and --metrics-listen's Prometheus endpoint). Commands of many runs: [`series`], [`compare`], [`sweep`].
//! Around them: [`serve`] (the built-in loopback target), [`demo`], [`redact`] (secrets masked), [`syntax`] (HTTP's tokens, targets and field values), [`escape`] (text from outside made safe
//! for a terminal), [`files`] (the files flags name, read with a limit),
//! [`units`] and [`numbers`] (numbers as people type and read them), [`exit`] (the exit codes),
//! and `scratch` (tests' temporary files). See docs/ARCHITECTURE.md for the invariants.

pub mod alt_svc;
pub mod analysis;
pub mod app;
pub mod calls;
pub mod cli;
pub mod clock;
pub mod compare;
pub mod demo;
pub mod engine;
pub mod escape;
pub mod exit;
pub mod files;
pub mod grpc;
pub mod k8s_job;
pub mod mcp;
pub mod merge;
pub mod net;
pub mod numbers;
pub mod plan;
pub mod proto;
pub mod reach;
pub mod redact;
pub mod redirect;
pub mod report;
pub mod request;
pub mod request_list;
pub mod route;
#[cfg(test)]
mod scratch;
pub mod script;
pub mod series;
pub mod serve;
pub mod shard;
pub mod stats;
pub mod sweep;
pub mod syntax;
pub mod target;
pub mod timer;
pub mod ui;
pub mod units;
pub mod verbose;
pub mod watch;
