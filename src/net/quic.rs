//! QUIC for --http3: the client configuration built once per run from the TLS settings (TLS 1.3
//! only, ALPN h3, the same verification as over TCP), a connection on a UDP socket of its own,
//! and the words for how a QUIC connection ended. Must not speak HTTP: the lane does, on h3.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use quinn::{ConnectionError, Endpoint, TransportConfig, VarInt};

use super::tls::{ClientSettings, TlsSetupError, client_config};
use super::tls_words::describe as describe_tls;
use super::verify::Refused;

/// How long a QUIC connection may hear nothing from the server before it is dead: what servers
/// commonly allow an idle connection, and what a load test's connections never reach.
const IDLE: Duration = Duration::from_secs(30);

/// The HTTP/3 code for a close without an error (RFC 9114, 8.1).
pub const H3_NO_ERROR: u32 = 0x100;

/// The QUIC client of one run: configuration and server name, shared by every connection (and
/// so by the session cache that makes resumption possible).
#[derive(Clone)]
pub struct QuicClient {
    config: quinn::ClientConfig,
    server_name: String,
    /// The certificate refused last, for the words of a failed handshake.
    refused: Refused,
}

impl std::fmt::Debug for QuicClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuicClient")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

/// What opening a QUIC connection came to: the UDP socket's endpoint (kept for as long as the
/// connection is) and the connection.
pub struct Opened {
    pub endpoint: Endpoint,
    pub conn: quinn::Connection,
}

/// Why a QUIC connection did not open.
#[derive(Debug)]
pub enum OpenError {
    /// No UDP socket: the message of the bind.
    Socket(std::io::Error),
    /// The handshake failed; `tls` when TLS refused it (a certificate, an alert).
    Handshake { tls: bool, words: String },
}

impl QuicClient {
    /// The client for `host` with the TLS settings `s` (their ALPN is replaced by h3).
    pub fn new(host: &str, s: &ClientSettings<'_>) -> Result<QuicClient, TlsSetupError> {
        let settings = ClientSettings {
            alpn: vec![b"h3".to_vec()],
            ..s.clone()
        };
        let refused = Refused::default();
        let tls = client_config(&settings, true, refused.clone())?;
        let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(Arc::new(tls))
            .map_err(|e| TlsSetupError::Verifier(format!("QUIC: {e}")))?;
        let mut transport = TransportConfig::default();
        transport.max_idle_timeout(Some(
            IDLE.try_into().expect("30 s is a valid QUIC idle timeout"),
        ));
        let mut config = quinn::ClientConfig::new(Arc::new(crypto));
        config.transport_config(Arc::new(transport));
        // The name is checked as TCP's TLS checks it, so that a bad one fails before any load.
        rustls::pki_types::ServerName::try_from(host.to_owned())
            .map_err(|_| TlsSetupError::ServerName(host.into()))?;
        Ok(QuicClient {
            config,
            server_name: host.to_owned(),
            refused,
        })
    }

    /// Opens a connection to `addr` from a UDP socket of its own, as a browser's connection has:
    /// a server that spreads its load by address sees each connection apart. Must run inside a
    /// tokio runtime with a time driver (QUIC's timers are tokio's).
    pub async fn connect(&self, addr: SocketAddr) -> Result<Opened, OpenError> {
        let local: SocketAddr = match addr {
            SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
            SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let endpoint = Endpoint::client(local).map_err(OpenError::Socket)?;
        let connecting = endpoint
            .connect_with(self.config.clone(), addr, &self.server_name)
            .map_err(|e| OpenError::Handshake {
                tls: false,
                words: format!("cannot start a QUIC connection to {addr}: {e}"),
            })?;
        let e = match connecting.await {
            Ok(conn) => return Ok(Opened { endpoint, conn }),
            Err(e) => e,
        };
        let refused = match is_tls(&e) {
            true => self.refused.lock().ok().and_then(|mut r| r.take()),
            false => None,
        };
        let words = match (&e, refused) {
            (_, Some(why)) => describe_tls(&why),
            (ConnectionError::TimedOut, _) => format!(
                "no QUIC answer from {addr} (is an HTTP/3 server listening on UDP port {}?)",
                addr.port()
            ),
            (e, None) => format!("the QUIC handshake with {addr} failed: {}", ended(e)),
        };
        // The server ended the handshake: without a name to serve, some cannot (caddy).
        let alerted = matches!(&e, ConnectionError::ConnectionClosed(_)) && is_tls(&e);
        let words = match (alerted, super::tls_words::no_name_hint(&self.server_name)) {
            (true, Some(hint)) => format!("{words}; {hint}"),
            _ => words,
        };
        Err(OpenError::Handshake {
            tls: is_tls(&e),
            words,
        })
    }
}

/// Whether TLS ended the connection: a TLS alert is a QUIC CRYPTO_ERROR (0x100 to 0x1ff),
/// ours (a certificate we refused) or the server's.
pub fn is_tls(e: &ConnectionError) -> bool {
    let crypto = |code: quinn::TransportErrorCode| (0x100..0x200).contains(&u64::from(code));
    match e {
        ConnectionError::TransportError(t) => crypto(t.code),
        ConnectionError::ConnectionClosed(c) => crypto(c.error_code),
        _ => false,
    }
}

/// Whether the connection ended without an error: closed by either side with H3_NO_ERROR.
pub fn is_graceful(e: &ConnectionError) -> bool {
    match e {
        ConnectionError::ApplicationClosed(c) => c.error_code == VarInt::from_u32(H3_NO_ERROR),
        ConnectionError::LocallyClosed => true,
        _ => false,
    }
}

/// How a QUIC connection ended, in words for the report.
pub fn ended(e: &ConnectionError) -> String {
    let reason = |r: &[u8]| match r.is_empty() {
        true => String::new(),
        false => format!(" ({})", String::from_utf8_lossy(r)),
    };
    match e {
        ConnectionError::TransportError(t) if is_tls(e) => format!("TLS: {}", t.reason),
        ConnectionError::TransportError(t) => format!("QUIC error {}: {}", t.code, t.reason),
        // A CRYPTO_ERROR from the server carries a TLS alert: 0x100 plus its number.
        ConnectionError::ConnectionClosed(c) if is_tls(e) => {
            let alert = (u64::from(c.error_code) - 0x100) as u8;
            describe_tls(&rustls::Error::AlertReceived(alert.into()))
        }
        ConnectionError::ConnectionClosed(c)
            if c.error_code == quinn::TransportErrorCode::CONNECTION_REFUSED =>
        {
            "the server refused the QUIC connection (CONNECTION_REFUSED): it takes no more new \
             connections now"
                .into()
        }
        ConnectionError::ConnectionClosed(c) => format!(
            "the server closed the QUIC connection: {}{}",
            c.error_code,
            reason(&c.reason)
        ),
        ConnectionError::ApplicationClosed(c) => format!(
            "the server closed the connection with {}{}",
            h3::error::Code::from(c.error_code.into_inner()),
            reason(&c.reason)
        ),
        ConnectionError::TimedOut => format!(
            "the QUIC connection timed out: nothing from the server for {}s",
            IDLE.as_secs()
        ),
        ConnectionError::Reset => "the server reset the QUIC connection (stateless reset)".into(),
        ConnectionError::VersionMismatch => {
            "the server speaks no QUIC version spate speaks (version 1)".into()
        }
        ConnectionError::LocallyClosed => "closed by spate".into(),
        ConnectionError::CidsExhausted => "no QUIC connection ID was free".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use quinn::{ApplicationClose, ConnectionClose, TransportErrorCode};

    fn closed(code: TransportErrorCode, reason: &'static str) -> ConnectionError {
        ConnectionError::ConnectionClosed(ConnectionClose {
            error_code: code,
            frame_type: None,
            reason: Bytes::from_static(reason.as_bytes()),
        })
    }

    fn app(code: u32, reason: &'static str) -> ConnectionError {
        ConnectionError::ApplicationClosed(ApplicationClose {
            error_code: VarInt::from_u32(code),
            reason: Bytes::from_static(reason.as_bytes()),
        })
    }

    #[test]
    fn each_end_of_a_connection_is_a_sentence_in_its_class() {
        let alert = closed(TransportErrorCode::crypto(42), "");
        assert!(is_tls(&alert));
        assert!(
            ended(&alert).contains("refused spate's client certificate"),
            "{}",
            ended(&alert)
        );
        let refused = closed(TransportErrorCode::CONNECTION_REFUSED, "");
        assert!(!is_tls(&refused));
        assert!(ended(&refused).contains("CONNECTION_REFUSED"));
        let error = app(0x101, "bad");
        assert!(!is_graceful(&error));
        assert_eq!(
            ended(&error),
            "the server closed the connection with H3_GENERAL_PROTOCOL_ERROR (bad)"
        );
        assert!(is_graceful(&app(H3_NO_ERROR, "")));
        assert!(ended(&ConnectionError::TimedOut).contains("nothing from the server for 30s"));
    }
}
