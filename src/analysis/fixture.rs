//! A healthy run's facts for the rules' tests, changed one figure at a time by each test (here
//! and in `report::insight`, which checks the words).

use super::{Facts, Finding, insight};
use crate::stats::{
    Connections, ErrorRow, Generator, Percentiles, Phase, Phases, Requests, StatusRow,
};

pub fn phase(p99: Option<f64>) -> Phase {
    Phase {
        count: 1,
        mean_ms: p99,
        p50_ms: p99,
        p99_ms: p99,
        max_ms: p99,
        hdr_base64: String::new(),
    }
}

/// The connection figures of a healthy run, for the rules' tests.
pub fn connections() -> Connections {
    Connections {
        requested: 50,
        established: 50,
        reconnects: 0,
        connect_failures: 0,
        connect_error: None,
        dns_ms: 0.1,
        setup_ms: 2.0,
        not_opened: Default::default(),
        connect: phase(Some(0.2)),
        tls: Phase {
            count: 0,
            mean_ms: None,
            p50_ms: None,
            p99_ms: None,
            max_ms: None,
            hdr_base64: String::new(),
        },
        proxy: Phase {
            count: 0,
            ..phase(None)
        },
        tls_resumed: 0,
        http1: 50,
        http2: 0,
        http3: 0,
        quic: None,
        server_max_streams: None,
        goaways: 0,
        requests_per_connection: None,
        requests_per_client: None,
    }
}

pub struct F {
    pub requests: Requests,
    pub percentiles: Percentiles,
    pub count: u64,
    pub statuses: Vec<StatusRow>,
    pub errors: Vec<ErrorRow>,
    pub phases: Phases,
    pub connections: Connections,
    pub generator: Generator,
    pub gap: Option<(f64, f64)>,
    pub redirect_limit: u32,
    pub streaming: Option<crate::stats::Streaming>,
}

impl F {
    pub fn new() -> F {
        F {
            requests: Requests {
                attempted: 10_000,
                completed: 10_000,
                successful: 10_000,
                error_status: 0,
                failed: 0,
                interrupted: 0,
                retried: 0,
                redirects_followed: 0,
            },
            percentiles: Percentiles {
                p10: Some(1.0),
                p25: Some(1.0),
                p50: Some(1.0),
                p75: Some(1.1),
                p90: Some(1.2),
                p95: Some(1.3),
                p99: Some(1.5),
                p99_9: Some(2.0),
                p99_99: Some(3.0),
            },
            count: 10_000,
            statuses: vec![StatusRow {
                code: 200,
                count: 10_000,
            }],
            errors: vec![],
            phases: Phases {
                connect: phase(None),
                write: phase(Some(0.01)),
                wait: phase(Some(1.4)),
                read: phase(Some(0.05)),
            },
            connections: connections(),
            generator: Generator {
                threads: 2,
                cpu_s: Some(1.0),
                cpu_busy_percent: Some(40.0),
                busy_connections_ratio: Some(0.998),
                busy_streams: Some(1),
                nofile_limit: Some(1024),
                cores: Some(8),
                fd_exhausted: 0,
                stopped_by_signal: false,
                busy_poll: false,
                longest_stall_ms: Some(1.2),
                longest_stall_at_s: Some(3.0),
                script_us_per_request: None,
                script_cpu_percent: None,
                script_error: None,
                script_interrupted: false,
                script_stopped: false,
            },
            gap: None,
            redirect_limit: 0,
            streaming: None,
        }
    }

    pub fn run(&self) -> Vec<Finding> {
        insight(&Facts {
            requests: &self.requests,
            percentiles: &self.percentiles,
            latency_count: self.count,
            status_codes: &self.statuses,
            errors: &self.errors,
            phases: &self.phases,
            connections: &self.connections,
            generator: &self.generator,
            elapsed_s: 10.0,
            open: None,
            longest_gap: self.gap,
            redirect_limit: self.redirect_limit,
            streaming: self.streaming.as_ref(),
            tools: 0,
        })
    }
}
