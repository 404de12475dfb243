//! How spate checks a server's certificate: as rustls's WebPKI verifier does with the system's
//! roots and --cacert, except that a certificate passed with --cacert is also trusted as itself
//! when the server presents it as its own (curl does the same); or, with --insecure, not at all.
//! Must not weaken any other check: the name, the validity period and the handshake signature
//! are still verified for a pinned certificate.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{WebPkiServerVerifier, verify_server_name};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, RootCertStore};
use rustls::{Error, SignatureScheme};

use super::tls::TlsSetupError;

/// The last certificate the verifier refused, and why: QUIC hands on a refusal as text only,
/// and the report says more from the error itself (`describe_tls`).
pub type Refused = Arc<std::sync::Mutex<Option<Error>>>;

/// WebPKI over `roots`, and the --cacert certificates trusted as themselves.
#[derive(Debug)]
pub struct TrustPinned {
    webpki: Arc<WebPkiServerVerifier>,
    pinned: Vec<CertificateDer<'static>>,
    refused: Refused,
}

impl TrustPinned {
    pub fn new(
        roots: RootCertStore,
        pinned: Vec<CertificateDer<'static>>,
        provider: Arc<CryptoProvider>,
        refused: Refused,
    ) -> Result<TrustPinned, TlsSetupError> {
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| TlsSetupError::Verifier(e.to_string()))?;
        Ok(TrustPinned {
            webpki,
            pinned,
            refused,
        })
    }
}

/// The usual self-signed certificate (`openssl req -x509`) says CA:TRUE, which WebPKI refuses
/// for a server however it is trusted.
pub(super) fn ca_as_end_entity(e: &CertificateError) -> bool {
    match e {
        CertificateError::Other(other) => matches!(
            other.0.downcast_ref::<webpki::Error>(),
            Some(webpki::Error::CaUsedAsEndEntity)
        ),
        _ => false,
    }
}

impl TrustPinned {
    fn verify(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        match self
            .webpki
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            // WebPKI looks at the validity period before the basic constraints, so a pinned
            // certificate that got this far is in its period (tests/it/tls.rs holds it to that
            // with an expired one); its name is checked here.
            Err(Error::InvalidCertificate(e))
                if ca_as_end_entity(&e)
                    && self
                        .pinned
                        .iter()
                        .any(|p| p.as_ref() == end_entity.as_ref()) =>
            {
                verify_server_name(&ParsedCertificate::try_from(end_entity)?, server_name)?;
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }
}

impl ServerCertVerifier for TrustPinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let verdict = self.verify(end_entity, intermediates, server_name, ocsp, now);
        if let Err(e) = &verdict
            && let Ok(mut last) = self.refused.lock()
        {
            *last = Some(e.clone());
        }
        verdict
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }

    fn root_hint_subjects(&self) -> Option<&[DistinguishedName]> {
        self.webpki.root_hint_subjects()
    }
}

/// `--insecure`: accepts any certificate, still checks that signatures are well formed.
#[derive(Debug)]
pub struct NoVerification(pub Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
