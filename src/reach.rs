//! How a plan's connections reach its target, decided once before they open: the protocol
//! they speak or how they choose it (`LaneChoice`), and the TLS and QUIC clients made of its
//! settings. Shared by the run, `-v`, `--alt-svc` and MCP's probe, so that each reaches the
//! target as the run does. Must not connect: `net::dial` does.

use crate::net::quic::QuicClient;
use crate::net::{ClientSettings, TlsClient, TlsSetupError};
use crate::plan::{Plan, Protocol};

/// Which protocol a new connection speaks, or how it chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneChoice {
    Http1,
    /// HTTP/2 with prior knowledge (h2c) on plain TCP, or required through ALPN on TLS.
    Http2,
    /// TLS: whatever the server picks with ALPN.
    Alpn,
    /// HTTP/3 over QUIC.
    Http3,
}

/// Which protocol the connections of `plan` speak, or how they choose it.
pub fn lane_choice(plan: &Plan) -> LaneChoice {
    match (plan.protocol, plan.target.tls) {
        (Protocol::Http3, _) => LaneChoice::Http3,
        (Protocol::Http1, _) | (Protocol::Auto, false) => LaneChoice::Http1,
        (Protocol::Http2, _) => LaneChoice::Http2,
        (Protocol::Auto, true) => LaneChoice::Alpn,
    }
}

/// The TLS client of `plan`'s TCP connections (ALPN as the lane choice says); `None` without
/// TLS or over QUIC.
pub fn tls_client(plan: &Plan) -> Result<Option<TlsClient>, TlsSetupError> {
    let alpn: Vec<Vec<u8>> = match lane_choice(plan) {
        _ if !plan.target.tls => return Ok(None),
        LaneChoice::Http3 => return Ok(None),
        LaneChoice::Http1 => vec![b"http/1.1".to_vec()],
        LaneChoice::Http2 => vec![b"h2".to_vec()],
        LaneChoice::Alpn => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
    };
    Ok(Some(TlsClient::new(
        &plan.target.host,
        &tls_settings(plan, alpn),
    )?))
}

/// The TLS client of a look before the run over HTTP/1.1 (MCP's probe and shared session),
/// whatever the run speaks: ALPN offers only `http/1.1`. `None` without TLS.
pub fn look_tls_client(plan: &Plan) -> Result<Option<TlsClient>, TlsSetupError> {
    if !plan.target.tls {
        return Ok(None);
    }
    let settings = tls_settings(plan, vec![b"http/1.1".to_vec()]);
    Ok(Some(TlsClient::new(&plan.target.host, &settings)?))
}

/// The QUIC client of `plan`'s connections with --http3; `None` otherwise.
pub fn quic_client(plan: &Plan) -> Result<Option<QuicClient>, TlsSetupError> {
    if lane_choice(plan) != LaneChoice::Http3 {
        return Ok(None);
    }
    let settings = tls_settings(plan, vec![b"h3".to_vec()]);
    Ok(Some(QuicClient::new(&plan.target.host, &settings)?))
}

fn tls_settings(plan: &Plan, alpn: Vec<Vec<u8>>) -> ClientSettings<'_> {
    ClientSettings {
        insecure: plan.tls.insecure,
        cacert: plan.tls.cacert.as_deref(),
        cert: plan.tls.cert.as_deref(),
        key: plan.tls.key.as_deref(),
        alpn,
    }
}
