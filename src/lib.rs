//! spate: an HTTP load generator that must never be the bottleneck of the test it runs.
//!
//! ```text
//! argv --cli--> Plan --engine--> threads (current-thread tokio runtime each)
//!   --> one task set of connections per thread --> proto::h1 lane (write prepared
//!   bytes, parse the response sans-IO) --> per-thread Stats (HDR histograms, counters)
//! Stats merged once at the end --> Summary --> report::text | report::json
//! ```
//!
//! Module map: [`cli`] (the only module that knows clap), [`plan`] (validated plain data),
//! [`target`] (the URL), [`route`] (where connections go, resolved once), [`request`] (bytes
//! built once), [`net`] (TCP and Unix connect, TLS),
//! [`proto`] (sans-IO HTTP/1.1 parsing and the lane), [`engine`] (threads, their task sets, stopping),
//! [`stats`] (histograms, counters, `Summary`), [`report`] (text and JSON), [`serve`] (the
//! built-in loopback target) and [`demo`]. See docs/ARCHITECTURE.md for the invariants.

pub mod analysis;
pub mod app;
pub mod cli;
pub mod clock;
pub mod compare;
pub mod demo;
pub mod engine;
pub mod net;
pub mod numbers;
pub mod plan;
pub mod proto;
pub mod redact;
pub mod redirect;
pub mod report;
pub mod request;
pub mod route;
pub mod series;
pub mod serve;
pub mod stats;
pub mod sweep;
pub mod target;
pub mod timer;
pub mod ui;
pub mod units;
pub mod verbose;
