//! `Plan::validate`: why a plan cannot run, checked before anything is resolved or sent; each
//! refusal is a `PlanError` that names the flag to change. Must not touch the network.

use std::time::Duration;

use super::{
    H2, H2_MAX_WINDOW, MIN_TIMEOUT, Plan, PlanError, Protocol, Stop, is_field_value,
    is_request_target, is_token,
};
use crate::units::MAX_DURATION;

impl Plan {
    pub fn validate(&self) -> Result<(), PlanError> {
        if self.connections == 0 {
            return Err(PlanError::NoConnections);
        }
        if self.threads == 0 {
            return Err(PlanError::NoThreads);
        }
        match self.stop {
            Stop::Requests(n) if n < u64::from(self.connections) => {
                return Err(PlanError::FewerRequestsThanConnections {
                    requests: n,
                    connections: self.connections,
                });
            }
            Stop::Duration(d) if d.is_zero() => return Err(PlanError::ZeroDuration),
            _ => {}
        }
        if self.timeout < MIN_TIMEOUT {
            return Err(PlanError::ShortTimeout);
        }
        if self.connect_timeout < MIN_TIMEOUT {
            return Err(PlanError::ShortConnectTimeout);
        }
        if self.setup_timeout < MIN_TIMEOUT {
            return Err(PlanError::ShortSetupTimeout);
        }
        let duration = match self.stop {
            Stop::Duration(d) => d,
            Stop::Requests(_) => Duration::ZERO,
        };
        for (flag, d) in [
            ("--duration", duration),
            ("--warmup", self.warmup),
            ("--timeout", self.timeout),
            ("--connect-timeout", self.connect_timeout),
            ("--setup-timeout", self.setup_timeout),
            ("--max-lag", self.max_lag.unwrap_or_default()),
        ] {
            if d > MAX_DURATION {
                return Err(PlanError::TooLong(flag));
            }
        }
        if !is_token(&self.method) {
            return Err(PlanError::Method(self.method.clone()));
        }
        if !is_request_target(self.target.path.as_bytes()) {
            return Err(PlanError::Path(self.target.path.clone()));
        }
        if self.h2.streams == 0 {
            return Err(PlanError::NoStreams);
        }
        if self.list.is_some() {
            for (on, flag) in [
                (
                    self.script.is_some(),
                    "--script: the script makes the requests",
                ),
                (self.redirects > 0, "--redirect"),
                // A list of gRPC messages to a server-streaming method times each call's.
                (self.stream.is_some() && self.grpc.is_none(), "--stream"),
            ] {
                if on {
                    return Err(PlanError::ListWith(flag));
                }
            }
        }
        if self
            .script
            .as_ref()
            .is_some_and(|s| s.defines.per_request())
        {
            for (on, flag) in [
                (self.redirects > 0, "--redirect"),
                (self.stream.is_some(), "--stream"),
            ] {
                if on {
                    return Err(PlanError::ScriptWith(flag));
                }
            }
        }
        if let Some(st) = &self.stream {
            if self.redirects > 0 {
                return Err(PlanError::StreamRedirect);
            }
            if st.max_events == Some(0) {
                return Err(PlanError::ZeroMaxEvents);
            }
            if [st.max_time, st.idle].contains(&Some(Duration::ZERO)) {
                return Err(PlanError::ZeroStreamTime);
            }
        }
        if self.protocol == Protocol::Http3 {
            self.validate_h3()?;
        }
        if self.h2.streams > 1 && !self.multiplexes() {
            return Err(PlanError::StreamsNeedH2(self.h2.streams));
        }
        if self.rpc == Some(0) {
            return Err(PlanError::ZeroRpc);
        }
        if !self.keep_alive && self.rpc.is_some_and(|n| n != 1) {
            return Err(PlanError::RpcWithoutKeepAlive);
        }
        if self.h2.streams > 1
            && self
                .requests_per_connection()
                .is_some_and(|n| n < u64::from(self.h2.streams))
        {
            return Err(PlanError::StreamsWithoutKeepAlive);
        }
        if self.grpc.is_some() {
            if self.protocol != super::Protocol::Http2 {
                return Err(PlanError::GrpcOf("gRPC runs over HTTP/2 only"));
            }
            for (given, what) in [
                (
                    self.list.as_ref().is_some_and(|l| {
                        l.mcp.is_some() || l.entries.iter().any(|e| e.target != self.target)
                    }),
                    "a request list is not a call: give one --call",
                ),
                (
                    self.script.is_some(),
                    "--script does not apply to gRPC calls",
                ),
                (
                    self.stream.as_ref().is_some_and(|s| {
                        s.mode != super::StreamMode::Grpc
                            || !self.grpc.as_ref().is_some_and(|g| g.server_streaming)
                    }),
                    "only a server-streaming call's messages are measured as a stream",
                ),
                (
                    self.redirects > 0,
                    "--redirect does not apply to gRPC calls",
                ),
            ] {
                if given {
                    return Err(PlanError::GrpcOf(what));
                }
            }
        }
        if self.max_lag.is_some() && !self.is_open() {
            return Err(PlanError::MaxLagWithoutRate);
        }
        if let Some(s) = &self.stages {
            let job_connections = self.shard.map_or(self.connections, |s| s.job_connections);
            if s.kind == super::StageKind::Connections && u64::from(job_connections) != s.peak() {
                return Err(PlanError::StagesOf(
                    "-c: the stages give the connections (their highest target)",
                ));
            }
            if self.rate.is_some() {
                return Err(PlanError::StagesOf("-q: the stages give the rates"));
            }
            if self.stop != Stop::Duration(s.duration()) {
                return Err(PlanError::StagesOf("-n and -z: the run lasts its stages"));
            }
        }
        if self.max_lag.is_some_and(|d| d.is_zero()) {
            return Err(PlanError::ZeroMaxLag);
        }
        if self.rate.is_some_and(|r| r.num == 0 || r.den == 0) {
            return Err(PlanError::ZeroRate);
        }
        let window = 65_535..=H2_MAX_WINDOW;
        if !window.contains(&self.h2.stream_window) || !window.contains(&self.h2.conn_window) {
            return Err(PlanError::H2Window);
        }
        if !(16_384..=16_777_215).contains(&self.h2.max_frame) {
            return Err(PlanError::H2Frame);
        }
        if self.tls.cert.is_some() != self.tls.key.is_some() {
            return Err(PlanError::CertWithoutKey);
        }
        let t = &self.tls;
        if !self.target.tls
            && self.redirects == 0
            && (t.insecure || t.cacert.is_some() || t.cert.is_some())
        {
            return Err(PlanError::TlsWithoutHttps);
        }
        if self.route.unix_socket.is_some() {
            if self.target.tls {
                return Err(PlanError::UnixSocketTls);
            }
            if !self.route.connect_to.is_empty() {
                return Err(PlanError::UnixSocketWith("--connect-to"));
            }
            if self.route.family.is_some() {
                return Err(PlanError::UnixSocketWith("--ipv4 or --ipv6"));
            }
            if self.route.proxy.is_some() {
                return Err(PlanError::UnixSocketWith("--proxy"));
            }
        }
        if self.route.proxy.is_some() && !self.route.connect_to.is_empty() {
            return Err(PlanError::ProxyWithConnectTo);
        }
        for (name, value) in &self.headers {
            if !is_token(name) {
                return Err(PlanError::HeaderName(name.clone()));
            }
            if !is_field_value(value.as_bytes()) {
                return Err(PlanError::HeaderValue(name.clone()));
            }
            if name.eq_ignore_ascii_case("content-length")
                || name.eq_ignore_ascii_case("transfer-encoding")
            {
                return Err(PlanError::ManagedHeader(name.clone()));
            }
        }
        Ok(())
    }

    /// What HTTP/3 cannot be combined with: plain http://, the ways to reach a server that are
    /// TCP's (a proxy's tunnel, a Unix socket), and the --h2-* windows.
    fn validate_h3(&self) -> Result<(), PlanError> {
        if !self.target.tls {
            return Err(PlanError::Http3NeedsHttps);
        }
        let d = H2::default();
        for (on, flag) in [
            (self.route.proxy.is_some(), "--proxy (a proxy tunnels TCP)"),
            (self.route.unix_socket.is_some(), "--unix-socket"),
            (
                (
                    self.h2.stream_window,
                    self.h2.conn_window,
                    self.h2.max_frame,
                ) != (d.stream_window, d.conn_window, d.max_frame),
                "--h2-stream-window, --h2-conn-window or --h2-max-frame",
            ),
        ] {
            if on {
                return Err(PlanError::Http3With(flag));
            }
        }
        Ok(())
    }
}
