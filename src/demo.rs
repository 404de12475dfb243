//! `spate demo`: the built-in target in-process on an ephemeral loopback port, and the plan of a
//! short load test against it, with the cores split between the two.

use std::io;
use std::time::Duration;

use crate::plan::{Plan, Protocol, Stop};
use crate::serve::{ServeConfig, Server};
use crate::target::Target;

/// Server threads and load threads for this machine: half the cores each, at least one.
pub fn split_cores() -> (usize, u32) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let server = (cores / 2).max(1);
    (server, (cores - server).max(1) as u32)
}

/// Starts the target and returns it with the plan to run against it.
/// `http2`: h2c with this many streams per connection.
pub fn start(
    duration: Duration,
    connections: u32,
    http2: Option<u32>,
) -> io::Result<(Server, Plan)> {
    let (server_threads, load_threads) = split_cores();
    let config = ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        threads: server_threads,
        h2c: http2.is_some(),
        ..ServeConfig::default()
    };
    let server = Server::start(&config).map_err(|e| io::Error::other(e.to_string()))?;
    let target = Target::parse(&server.url())
        .map_err(|e| io::Error::other(format!("built-in target URL: {e}")))?;
    let mut plan = Plan::new(target);
    plan.connections = connections;
    plan.threads = load_threads;
    plan.stop = Stop::Duration(duration);
    if let Some(streams) = http2 {
        plan.protocol = Protocol::Http2;
        plan.h2.streams = streams;
    }
    Ok((server, plan))
}
