//! `Connections`: the report's connection figures (opened, reconnected, failed, setup times,
//! protocols, requests per connection and per client), derived from the merged stats. Facts only.

use serde::{Deserialize, Serialize};

use super::summary::Phase;
use super::{Fairness, NotOpened, PerConnection, Quic, RunOutput};
use crate::plan::Plan;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Connections {
    pub requested: u32,
    /// Open when the clock started.
    pub established: u64,
    /// Opened during the run to replace a closed connection (inside request latency).
    pub reconnects: u64,
    pub connect_failures: u64,
    /// The first connect failure's message.
    pub connect_error: Option<String>,
    pub dns_ms: f64,
    /// How long the connections took to open before the clock started (at most
    /// --setup-timeout).
    pub setup_ms: f64,
    /// The requested connections that were not open when the clock started, by what became of
    /// them (all zero when every one opened).
    pub not_opened: NotOpened,
    /// Every successful TCP connect, before and during the run.
    pub connect: Phase,
    /// Every successful TLS handshake (count 0 without TLS); over HTTP/3, every QUIC handshake,
    /// which carries TLS's.
    pub tls: Phase,
    /// Every CONNECT tunnel through --proxy, from the request to the proxy's 2xx (count 0
    /// without one).
    pub proxy: Phase,
    /// TLS handshakes that resumed an earlier session.
    pub tls_resumed: u64,
    /// Connections opened speaking HTTP/1.1, HTTP/2 and HTTP/3.
    pub http1: u64,
    pub http2: u64,
    #[serde(default)]
    pub http3: u64,
    /// QUIC's own figures of the HTTP/3 connections; null without HTTP/3.
    #[serde(default)]
    pub quic: Option<Quic>,
    /// The lowest MAX_CONCURRENT_STREAMS an HTTP/2 server announced; null without HTTP/2 or when
    /// the server announced no limit.
    pub server_max_streams: Option<u64>,
    /// HTTP/2 connections the server ended with GOAWAY.
    pub goaways: u64,
    /// Responses per TCP connection (every connection of the run, warm-up included); null when
    /// none opened.
    pub requests_per_connection: Option<PerConnection>,
    /// Recorded requests per client (one of the requested connections with its reconnects);
    /// null without clients.
    pub requests_per_client: Option<Fairness>,
}

/// The connection figures of a finished run.
pub fn connections(plan: &Plan, run: &RunOutput) -> Connections {
    let s = &run.stats;
    Connections {
        requested: plan.connections,
        established: s.conns.established,
        reconnects: s.conns.reconnects,
        connect_failures: s.conns.connect_failures,
        connect_error: s.connect_error.clone(),
        dns_ms: run.dns.as_secs_f64() * 1e3,
        setup_ms: run.setup.as_secs_f64() * 1e3,
        not_opened: s.not_opened,
        connect: Phase::of(&s.connect),
        tls: Phase::of(&s.tls),
        proxy: Phase::of(&s.proxy),
        tls_resumed: s.conns.tls_resumed,
        http1: s.conns.h1,
        http2: s.conns.h2,
        http3: s.conns.h3,
        quic: (s.conns.h3 > 0).then_some(s.quic),
        // HTTP/2 allows at most 2^31-1; more means the server announced no limit.
        server_max_streams: s.conns.server_streams.filter(|&n| n <= i32::MAX as u64),
        goaways: s.conns.goaways,
        requests_per_connection: PerConnection::of(&s.per_connection),
        requests_per_client: Fairness::of(&s.per_client),
    }
}
