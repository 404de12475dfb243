//! TLS failures in words: each rustls error, and the I/O errors around a handshake, as one
//! sentence that says what happened and what to do about it. Never a Rust debug string: where
//! rustls names a thing in CamelCase (an alert), it is written as the TLS specification spells it.

use std::io;
use std::time::{Duration, SystemTime};

use rustls::pki_types::{ServerName, UnixTime};
use rustls::{AlertDescription, CertificateError, Error, PeerIncompatible};

use super::verify::ca_as_end_entity;

const INSECURE: &str = "(--insecure skips the check)";

/// `HandshakeFailure` -> `handshake_failure`, as RFC 8446 names alerts.
fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn date(t: &UnixTime) -> String {
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(t.as_secs());
    humantime::format_rfc3339_seconds(at).to_string()
}

/// rustls lists the names a certificate presents as `DnsName("a.test")` or `IpAddress(1.2.3.4)`:
/// the name alone.
fn presented(p: &str) -> &str {
    let inner = p
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .unwrap_or(p);
    inner.trim_matches('"')
}

fn name(n: &ServerName<'_>) -> String {
    match n {
        ServerName::DnsName(d) => d.as_ref().to_owned(),
        ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
        _ => "the name spate connected with".to_owned(),
    }
}

fn certificate(e: &CertificateError) -> String {
    use CertificateError as C;
    match e {
        C::UnknownIssuer => format!(
            "the server's certificate is not signed by a CA spate trusts: pass its CA (or the \
             certificate itself) with --cacert FILE {INSECURE}"
        ),
        C::NotValidForName => format!(
            "the server's certificate is not valid for the name spate connected with: use a name \
             it was issued for {INSECURE}"
        ),
        C::NotValidForNameContext {
            expected,
            presented: presented_names,
        } => format!(
            "the server's certificate is not valid for {} (it is for {}): use a name it was \
             issued for {INSECURE}",
            name(expected),
            match presented_names.is_empty() {
                true => "no name at all".to_owned(),
                false => presented_names
                    .iter()
                    .map(|p| presented(p))
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        ),
        C::Expired => format!("the server's certificate has expired {INSECURE}"),
        C::ExpiredContext { not_after, .. } => format!(
            "the server's certificate expired at {} {INSECURE}",
            date(not_after)
        ),
        C::NotValidYet => {
            format!("the server's certificate is not valid yet: are the clocks right? {INSECURE}")
        }
        C::NotValidYetContext { not_before, .. } => format!(
            "the server's certificate is valid only from {}: are the clocks right? {INSECURE}",
            date(not_before)
        ),
        C::Revoked => "the server's certificate has been revoked".to_owned(),
        C::BadEncoding => "the server's certificate cannot be parsed".to_owned(),
        C::BadSignature => "the server's certificate has a signature that does not verify".into(),
        C::InvalidPurpose | C::InvalidPurposeContext { .. } => format!(
            "the server's certificate is not for server authentication (its extended key \
             usage) {INSECURE}"
        ),
        C::UnsupportedSignatureAlgorithmContext { .. }
        | C::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
            "the server's certificate is signed with an algorithm spate does not support".into()
        }
        c if ca_as_end_entity(c) => {
            format!(
                "the server presents a CA certificate as its own (CA:TRUE, as `openssl req -x509` \
             makes by default): pass that very certificate with --cacert FILE to trust it as \
             itself {INSECURE}"
            )
        }
        other => format!("the server's certificate was refused ({other})"),
    }
}

fn alert(a: &AlertDescription) -> String {
    use AlertDescription as A;
    match a {
        A::CertificateRequired => {
            "the server requires a client certificate: pass --cert FILE --key FILE".into()
        }
        A::HandshakeFailure => "the server refused the TLS handshake (alert handshake_failure): \
             it may require a client certificate (--cert FILE --key FILE), or share no cipher \
             suite with spate"
            .into(),
        A::ProtocolVersion => "the server refused TLS 1.2 and 1.3 (alert protocol_version): it \
             speaks only older versions, which spate does not"
            .into(),
        A::BadCertificate
        | A::UnsupportedCertificate
        | A::CertificateUnknown
        | A::UnknownCA
        | A::AccessDenied
        | A::CertificateExpired
        | A::CertificateRevoked => format!(
            "the server refused spate's client certificate (alert {}); check --cert and --key",
            snake(&format!("{a:?}"))
        ),
        A::UnrecognisedName => {
            "the server does not serve the name spate asked for (alert unrecognized_name)".into()
        }
        A::NoApplicationProtocol => "the server does not speak the protocol asked for with ALPN \
             (alert no_application_protocol); drop --http2 or --http1.1"
            .into(),
        other => format!(
            "the server ended the TLS handshake with alert {}",
            snake(&format!("{other:?}"))
        ),
    }
}

fn incompatible(p: &PeerIncompatible) -> String {
    use PeerIncompatible as P;
    match p {
        P::ServerDoesNotSupportTls12Or13
        | P::ServerTlsVersionIsDisabledByOurConfig
        | P::SupportedVersionsExtensionRequired => {
            "the server speaks only TLS versions older than 1.2, which spate does not".into()
        }
        P::NoCipherSuitesInCommon => "the server shares no cipher suite with spate".into(),
        P::NoKxGroupsInCommon => "the server shares no key exchange group with spate".into(),
        P::NoSignatureSchemesInCommon | P::NoCertificateRequestSignatureSchemesInCommon => {
            "the server shares no signature scheme with spate".into()
        }
        other => format!(
            "the server's TLS is incompatible with spate's ({})",
            snake(&format!("{other:?}")).replace('_', " ")
        ),
    }
}

/// One sentence for a TLS error.
pub fn describe(e: &Error) -> String {
    match e {
        Error::InvalidCertificate(c) => certificate(c),
        Error::AlertReceived(a) => alert(a),
        Error::PeerIncompatible(p) => incompatible(p),
        Error::NoApplicationProtocol => "the server agreed to no protocol spate offered with \
             ALPN; drop --http2 or --http1.1"
            .into(),
        Error::PeerMisbehaved(p) => format!(
            "the server broke the TLS protocol ({})",
            snake(&format!("{p:?}")).replace('_', " ")
        ),
        Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType) => "the server did not \
             answer in TLS: if the port speaks plain HTTP, use http://"
            .into(),
        Error::General(m) => format!("TLS: {m}"),
        other => format!("TLS: {other}"),
    }
}

/// What to say when a server ended the handshake of a connection to `host` that sent no server
/// name: an IP address is not sent as one (SNI), and a server that picks its certificate by
/// name (caddy does) has none for a client that names none.
pub fn no_name_hint(host: &str) -> Option<String> {
    let ip = host
        .trim_matches(['[', ']'])
        .parse::<std::net::IpAddr>()
        .ok()?;
    Some(format!(
        "the URL's host is an IP address ({ip}), so no server name was sent (SNI), and a server \
         that chooses its certificate by name cannot answer: use the name in the URL, with \
         --connect-to NAME:PORT:{ip}:PORT where it does not resolve"
    ))
}

/// The sentence for an I/O error during or right after a TLS handshake that rustls did not
/// explain, if there is one to say.
pub fn describe_io(e: &io::Error, during_handshake: bool) -> Option<String> {
    use io::ErrorKind as K;
    let closed = matches!(e.kind(), K::ConnectionReset | K::ConnectionAborted);
    if e.kind() != K::UnexpectedEof && !(closed && during_handshake) {
        return None;
    }
    if during_handshake {
        return Some(
            "the server closed the connection during the TLS handshake: it may speak only TLS \
             1.0 or 1.1 (spate speaks 1.2 and 1.3), or no TLS at all on this port"
                .into(),
        );
    }
    // rustls says so when a TLS connection ends without its closing alert.
    e.to_string().contains("close_notify").then(|| {
        "the server closed the TLS connection before the response was complete, without \
         close_notify; a server that requires a client certificate does this (--cert FILE \
         --key FILE)"
            .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_address_gets_the_hint_about_names() {
        assert!(no_name_hint("localhost").is_none());
        assert!(no_name_hint("api.example.com").is_none());
        assert!(no_name_hint("127.0.0.1").unwrap().contains("(127.0.0.1)"));
        assert!(no_name_hint("[::1]").unwrap().contains("(::1)"));
    }

    fn no_debug_strings(s: &str) {
        // A CamelCase word is rustls's name for something, not a word for a person.
        for w in s.split(|c: char| !c.is_ascii_alphanumeric()) {
            let upper_inside = w.chars().skip(1).any(|c| c.is_ascii_uppercase());
            let lower = w.chars().any(|c| c.is_ascii_lowercase());
            assert!(!(upper_inside && lower), "{w:?} in {s:?}");
        }
    }

    #[test]
    fn every_common_failure_is_a_sentence_with_a_hint() {
        let cases: Vec<(Error, &str)> = vec![
            (CertificateError::UnknownIssuer.into(), "--cacert FILE"),
            (CertificateError::Expired.into(), "--insecure"),
            (
                CertificateError::NotValidForNameContext {
                    expected: ServerName::try_from("example.com").unwrap(),
                    presented: vec![
                        "DnsName(\"localhost\")".into(),
                        "IpAddress(10.0.0.1)".into(),
                    ],
                }
                .into(),
                "not valid for example.com (it is for localhost, 10.0.0.1)",
            ),
            (
                Error::AlertReceived(AlertDescription::CertificateRequired),
                "--cert FILE --key FILE",
            ),
            (
                Error::AlertReceived(AlertDescription::ProtocolVersion),
                "only older versions",
            ),
            (
                Error::AlertReceived(AlertDescription::DecodeError),
                "alert decode_error",
            ),
            (
                Error::PeerIncompatible(PeerIncompatible::ServerDoesNotSupportTls12Or13),
                "older than 1.2",
            ),
            (Error::NoApplicationProtocol, "drop --http2"),
            (
                Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType),
                "use http://",
            ),
        ];
        for (e, want) in cases {
            let s = describe(&e);
            assert!(s.contains(want), "{e:?}: {s}");
            no_debug_strings(&s);
        }
    }

    #[test]
    fn an_eof_says_what_it_likely_means() {
        let eof = io::Error::new(io::ErrorKind::UnexpectedEof, "tls handshake eof");
        assert!(describe_io(&eof, true).unwrap().contains("TLS 1.0 or 1.1"));
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert!(
            describe_io(&reset, true)
                .unwrap()
                .contains("during the TLS handshake")
        );
        assert!(
            describe_io(&reset, false).is_none(),
            "a reset mid-run says so itself"
        );
        let notify = io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "peer closed connection without sending TLS close_notify: https://docs.rs/rustls",
        );
        let s = describe_io(&notify, false).unwrap();
        assert!(s.contains("--cert FILE") && !s.contains("https://"), "{s}");
        assert!(describe_io(&io::Error::other("x"), true).is_none());
    }
}
