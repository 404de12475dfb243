//! TLS on rustls (ring provider): the client configuration built once per run (system roots plus
//! --cacert, or no verification with --insecure; mTLS; ALPN), the handshake and what it
//! negotiated, the cause of a TLS failure, and the server configuration of `spate serve`.

use std::io;
use std::sync::Arc;

use rustls::crypto::{CryptoProvider, ring};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, HandshakeKind, RootCertStore, ServerConfig};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use super::verify::{NoVerification, Refused, TrustPinned};

/// Why a TLS configuration could not be built. Each names the file or flag to fix.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    #[error("{what}: no PEM certificate found")]
    NoCertificate { what: &'static str },
    #[error("{what}: {source}")]
    Pem {
        what: &'static str,
        source: rustls::pki_types::pem::Error,
    },
    #[error("{what}: no PEM private key found")]
    NoKey { what: &'static str },
    #[error("the private key of {key} does not belong to the certificate of {cert}")]
    KeyMismatch {
        cert: &'static str,
        key: &'static str,
    },
    #[error("{}", super::tls_words::describe(.0))]
    Rustls(#[from] rustls::Error),
    #[error("no trusted root certificates found on this system; use --cacert FILE or --insecure")]
    NoRoots,
    #[error("{0:?} is not a valid TLS server name")]
    ServerName(String),
    #[error("cannot build the certificate verifier: {0}")]
    Verifier(String),
}

/// What the client offers and trusts.
#[derive(Debug, Clone, Default)]
pub struct ClientSettings<'a> {
    pub insecure: bool,
    pub cacert: Option<&'a [u8]>,
    pub cert: Option<&'a [u8]>,
    pub key: Option<&'a [u8]>,
    /// ALPN protocols in order of preference, e.g. [b"h2", b"http/1.1"].
    pub alpn: Vec<Vec<u8>>,
}

/// What a handshake settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    /// The server picked h2 with ALPN.
    pub h2: bool,
    /// An earlier session was resumed (no full handshake).
    pub resumed: bool,
}

/// The TLS client of one run: configuration and server name, shared by every connection (and
/// so by the session cache that makes resumption possible).
#[derive(Clone)]
pub struct TlsClient {
    connector: tokio_rustls::TlsConnector,
    server_name: ServerName<'static>,
}

impl std::fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsClient")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

pub(super) fn provider() -> Arc<CryptoProvider> {
    Arc::new(ring::default_provider())
}

fn certs(pem: &[u8], what: &'static str) -> Result<Vec<CertificateDer<'static>>, TlsSetupError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| TlsSetupError::Pem { what, source })?;
    if certs.is_empty() {
        return Err(TlsSetupError::NoCertificate { what });
    }
    Ok(certs)
}

fn key(pem: &[u8], what: &'static str) -> Result<PrivateKeyDer<'static>, TlsSetupError> {
    PrivateKeyDer::from_pem_slice(pem).map_err(|source| match source {
        rustls::pki_types::pem::Error::NoItemsFound => TlsSetupError::NoKey { what },
        source => TlsSetupError::Pem { what, source },
    })
}

/// A certificate and key that rustls refused together: most often a key of another certificate.
fn pair(e: rustls::Error, cert: &'static str, key: &'static str) -> TlsSetupError {
    match e {
        rustls::Error::InconsistentKeys(_) => TlsSetupError::KeyMismatch { cert, key },
        e => TlsSetupError::Rustls(e),
    }
}

/// The client configuration of `s`: over TCP any version rustls deems safe; over QUIC
/// (`quic`) TLS 1.3 only, which is all QUIC carries. The verifier keeps what it refused last in
/// `refused`.
pub(super) fn client_config(
    s: &ClientSettings<'_>,
    quic: bool,
    refused: Refused,
) -> Result<ClientConfig, TlsSetupError> {
    let builder = ClientConfig::builder_with_provider(provider());
    let builder = match quic {
        true => builder.with_protocol_versions(&[&rustls::version::TLS13])?,
        false => builder.with_safe_default_protocol_versions()?,
    };
    let builder = if s.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider())))
    } else {
        let mut roots = RootCertStore::empty();
        // The system's roots: where the private CAs of the services people load-test live.
        let native = rustls_native_certs::load_native_certs();
        roots.add_parsable_certificates(native.certs);
        let pinned = match s.cacert {
            Some(pem) => certs(pem, "--cacert")?,
            None => Vec::new(),
        };
        for cert in &pinned {
            roots.add(cert.clone())?;
        }
        if roots.is_empty() {
            return Err(TlsSetupError::NoRoots);
        }
        let verifier = TrustPinned::new(roots, pinned, provider(), refused)?;
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
    };
    let mut config = match (s.cert, s.key) {
        (Some(cert), Some(k)) => builder
            .with_client_auth_cert(certs(cert, "--cert")?, key(k, "--key")?)
            .map_err(|e| pair(e, "--cert", "--key"))?,
        _ => builder.with_no_client_auth(),
    };
    config.alpn_protocols = s.alpn.clone();
    Ok(config)
}

impl TlsClient {
    pub fn new(host: &str, s: &ClientSettings<'_>) -> Result<TlsClient, TlsSetupError> {
        let config = client_config(s, false, Refused::default())?;
        let server_name = ServerName::try_from(host.to_owned())
            .map_err(|_| TlsSetupError::ServerName(host.into()))?;
        Ok(TlsClient {
            connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
            server_name,
        })
    }

    /// The same configuration (and session cache) for another server name: an origin a
    /// redirect leads to.
    pub fn for_host(&self, host: &str) -> Result<TlsClient, TlsSetupError> {
        Ok(TlsClient {
            connector: self.connector.clone(),
            server_name: ServerName::try_from(host.to_owned())
                .map_err(|_| TlsSetupError::ServerName(host.into()))?,
        })
    }

    pub async fn handshake(
        &self,
        tcp: TcpStream,
    ) -> io::Result<(TlsStream<TcpStream>, Negotiated)> {
        let tls = self
            .connector
            .connect(self.server_name.clone(), tcp)
            .await
            .map_err(|e| self.hinted(e))?;
        let conn = tls.get_ref().1;
        let negotiated = Negotiated {
            h2: conn.alpn_protocol() == Some(b"h2"),
            resumed: conn.handshake_kind() == Some(HandshakeKind::Resumed),
        };
        Ok((tls, negotiated))
    }
}

impl TlsClient {
    /// `e` with the reason a server that alerted may have had: a connection to an IP address
    /// names no server (SNI), and a server that picks its certificate by name cannot answer.
    fn hinted(&self, e: io::Error) -> io::Error {
        let ServerName::IpAddress(ip) = &self.server_name else {
            return e;
        };
        let Some(alert @ rustls::Error::AlertReceived(_)) = tls_cause(&e) else {
            return e;
        };
        let ip = std::net::IpAddr::from(*ip).to_string();
        match super::tls_words::no_name_hint(&ip) {
            Some(hint) => {
                io::Error::other(format!("{}; {hint}", super::tls_words::describe(alert)))
            }
            None => e,
        }
    }
}

/// The rustls error behind an I/O error, if it is a TLS failure (a bad certificate, an alert,
/// a handshake the server refused).
pub fn tls_cause(e: &io::Error) -> Option<&rustls::Error> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
}

/// TLS for `spate serve`: certificate chain and key in PEM, ALPN in order of preference, and,
/// with `client_ca`, a required client certificate signed by it.
pub fn server_config(
    cert: &[u8],
    key_pem: &[u8],
    alpn: Vec<Vec<u8>>,
    client_ca: Option<&[u8]>,
) -> Result<Arc<ServerConfig>, TlsSetupError> {
    let builder =
        ServerConfig::builder_with_provider(provider()).with_safe_default_protocol_versions()?;
    let builder = match client_ca {
        Some(pem) => {
            let mut roots = RootCertStore::empty();
            for c in certs(pem, "--client-ca")? {
                roots.add(c)?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider(),
            )
            .build()
            .map_err(|e| TlsSetupError::Rustls(rustls::Error::General(e.to_string())))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(certs(cert, "--tls-cert")?, key(key_pem, "--tls-key")?)
        .map_err(|e| pair(e, "--tls-cert", "--tls-key"))?;
    config.alpn_protocols = alpn;
    Ok(Arc::new(config))
}
