//! The URL under test: scheme, host, port, path and the Host header value. Where connections go
//! (resolution, --connect-to, Unix sockets) is `route`'s business.

use serde::{Deserialize, Serialize};

use crate::redact;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The URL as the user gave it (shown in the report).
    pub url: String,
    /// Host as written in the URL, without brackets for IPv6 literals.
    pub host: String,
    pub port: u16,
    /// Path and query, as sent in the request line.
    pub path: String,
    /// https: TLS on every connection.
    pub tls: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("invalid URL {0:?}: {1}")]
    Malformed(String, String),
    #[error("unsupported scheme {0:?}: use http:// or https://")]
    Scheme(String),
    #[error("invalid URL {0:?}: it must start with http:// or https://")]
    NoScheme(String),
    #[error("invalid URL {0:?}: it has no host")]
    NoHost(String),
    /// The URL is shown with its credentials masked.
    #[error("invalid URL {0:?}: credentials in URLs are not supported; use -a user:pass")]
    Credentials(String),
    #[error("invalid URL: {0}")]
    Host(String),
}

/// Whether `host` can be looked up or connected to: an IP address, or a DNS name of at most
/// 253 characters in labels of 1 to 63 (RFC 1035). Anything longer is a mistake, never sent to
/// the resolver; the error shows its start only.
pub fn check_host(host: &str) -> Result<(), String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare.parse::<std::net::IpAddr>().is_ok() {
        return Ok(());
    }
    let name = host.strip_suffix('.').unwrap_or(host);
    let shown = || match name.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &name[..i]),
        None => name.to_string(),
    };
    if name.len() > 253 {
        return Err(format!(
            "the host {:?} is {} characters long; a DNS name has at most 253",
            shown(),
            name.len()
        ));
    }
    match name.split('.').find(|l| l.is_empty() || l.len() > 63) {
        Some(label) => Err(format!(
            "the host {:?} has a label of {} characters; a DNS name's labels have 1 to 63",
            shown(),
            label.len()
        )),
        None => Ok(()),
    }
}

/// `url` with every non-ASCII byte after the authority percent-encoded (`/ü` is `/%C3%BC`), as
/// browsers and curl send them: raw bytes above 0x7F are not allowed in a request target.
fn encode_non_ascii(url: &str) -> std::borrow::Cow<'_, str> {
    if url.is_ascii() {
        return std::borrow::Cow::Borrowed(url);
    }
    let start = url.find("://").map_or(0, |i| i + 3);
    let rest = start
        + url[start..]
            .find(['/', '?', '#'])
            .unwrap_or(url.len() - start);
    let mut out = String::with_capacity(url.len() + 16);
    out.push_str(&url[..rest]);
    for b in url[rest..].bytes() {
        match b {
            0x80.. => out.push_str(&format!("%{b:02X}")),
            _ => out.push(char::from(b)),
        }
    }
    std::borrow::Cow::Owned(out)
}

impl Target {
    pub fn parse(url: &str) -> Result<Target, TargetError> {
        if !url.contains("://") {
            return Err(TargetError::NoScheme(redact::url(url).into()));
        }
        let uri: http::Uri =
            encode_non_ascii(url)
                .parse()
                .map_err(|e: http::uri::InvalidUri| {
                    TargetError::Malformed(redact::url(url).into(), e.to_string())
                })?;
        let tls = match uri.scheme_str() {
            Some(s) if s.eq_ignore_ascii_case("http") => false,
            Some(s) if s.eq_ignore_ascii_case("https") => true,
            Some(s) => return Err(TargetError::Scheme(s.into())),
            None => return Err(TargetError::NoScheme(redact::url(url).into())),
        };
        let authority = uri
            .authority()
            .ok_or_else(|| TargetError::NoHost(redact::url(url).into()))?;
        if authority.as_str().contains('@') {
            return Err(TargetError::Credentials(redact::url(url).into()));
        }
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']');
        if host.is_empty() {
            return Err(TargetError::NoHost(redact::url(url).into()));
        }
        check_host(host).map_err(TargetError::Host)?;
        // Read from the text: the http crate reports a port that is not a u16 as no port at
        // all, which must not become the scheme's default.
        let text = authority.as_str();
        let after_host = &text[text.rfind(']').map_or(0, |i| i + 1)..];
        let port = match after_host.rsplit_once(':').filter(|(_, p)| !p.is_empty()) {
            None if tls => 443,
            None => 80,
            Some((_, p)) => match p.parse::<u16>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(TargetError::Malformed(
                        redact::url(url).into(),
                        "the port must be 1 to 65535".into(),
                    ));
                }
            },
        };
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        Ok(Target {
            url: url.into(),
            host: host.to_ascii_lowercase(),
            port,
            path: if path.is_empty() {
                "/".into()
            } else {
                path.into()
            },
            tls,
        })
    }

    /// Value of the Host header: the port only when it is not the scheme's default.
    pub fn authority(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let default = if self.tls { 443 } else { 80 };
        if self.port == default {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }

    pub fn scheme(&self) -> &'static str {
        if self.tls { "https" } else { "http" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_names_or_addresses_within_dns_bounds() {
        for ok in [
            "127.0.0.1",
            "[::1]",
            "::1",
            "localhost",
            "localhost.",
            "a-b.example",
            &format!("{}.{}", "a".repeat(63), "b".repeat(63)),
            &vec!["x".repeat(61); 4].join("."),
        ] {
            assert_eq!(check_host(ok), Ok(()), "{ok}");
        }
        for (bad, says) in [
            (&"h".repeat(10_000)[..], "is 10000 characters long"),
            (&vec!["x".repeat(62); 5].join(".")[..], "at most 253"),
            (
                &format!("{}.com", "a".repeat(64))[..],
                "a label of 64 characters",
            ),
            ("a..b", "a label of 0 characters"),
            (".a", "a label of 0 characters"),
        ] {
            let e = check_host(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(e.len() < 200, "{e}");
        }
    }

    #[test]
    fn parts_of_a_url() {
        let t = Target::parse("http://Example.com:8080/a/b?q=1").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("example.com", 8080, "/a/b?q=1")
        );
        assert_eq!(t.authority(), "example.com:8080");
    }

    #[test]
    fn defaults() {
        let t = Target::parse("http://localhost").unwrap();
        assert_eq!(
            (t.port, t.path.as_str(), t.authority().as_str()),
            (80, "/", "localhost")
        );
    }

    #[test]
    fn https_defaults_to_443() {
        let t = Target::parse("https://example.com/x").unwrap();
        assert!(t.tls);
        assert_eq!(
            (t.port, t.authority().as_str(), t.scheme()),
            (443, "example.com", "https")
        );
        assert_eq!(
            Target::parse("https://example.com:8443/")
                .unwrap()
                .authority(),
            "example.com:8443"
        );
        assert_eq!(
            Target::parse("http://example.com:443/")
                .unwrap()
                .authority(),
            "example.com:443"
        );
    }

    #[test]
    fn ipv6_literal() {
        let t = Target::parse("http://[::1]:9000/x").unwrap();
        assert_eq!(t.host, "::1");
        assert_eq!(t.authority(), "[::1]:9000");
        assert_eq!(
            crate::route::Route::default().resolve(&t).unwrap(),
            crate::route::Endpoint::Tcp(vec!["[::1]:9000".parse().unwrap()])
        );
    }

    #[test]
    fn rejects() {
        assert!(matches!(
            Target::parse("ftp://x/"),
            Err(TargetError::Scheme(_))
        ));
        assert!(matches!(
            Target::parse("127.0.0.1:80/"),
            Err(TargetError::NoScheme(_) | TargetError::Malformed(..))
        ));
        assert!(matches!(
            Target::parse("/just/a/path"),
            Err(TargetError::NoScheme(_))
        ));
        assert!(matches!(
            Target::parse("http://u:p@host/"),
            Err(TargetError::Credentials(_))
        ));
        assert!(matches!(
            Target::parse("http://exa mple/"),
            Err(TargetError::Malformed(..))
        ));
        assert!(matches!(
            Target::parse(""),
            Err(TargetError::Malformed(..) | TargetError::NoScheme(_))
        ));
        for bad in ["http://h:99999/", "http://h:65536/", "http://h:0/"] {
            assert!(
                matches!(Target::parse(bad), Err(TargetError::Malformed(..))),
                "{bad}"
            );
        }
        assert_eq!(Target::parse("http://h:65535/").unwrap().port, 65535);
        assert_eq!(Target::parse("http://h:/").unwrap().port, 80);
        assert_eq!(Target::parse("https://[::1]/").unwrap().port, 443);
        assert_eq!(Target::parse("http://[::1]:8080/").unwrap().port, 8080);
        assert!(matches!(
            Target::parse("http://:80/"),
            Err(TargetError::NoHost(_) | TargetError::Malformed(..))
        ));
    }

    #[test]
    fn non_ascii_in_the_path_and_query_is_percent_encoded() {
        let t = Target::parse("http://h/ünï?q=é").unwrap();
        assert_eq!(t.path, "/%C3%BCn%C3%AF?q=%C3%A9");
        assert_eq!(
            t.url, "http://h/ünï?q=é",
            "the report shows the URL as given"
        );
        assert_eq!(Target::parse("http://h/%C3%BC").unwrap().path, "/%C3%BC");
    }

    #[test]
    fn resolves_loopback_by_address() {
        let t = Target::parse("http://127.0.0.1:1/").unwrap();
        assert_eq!(
            crate::route::Route::default().resolve(&t).unwrap(),
            crate::route::Endpoint::Tcp(vec!["127.0.0.1:1".parse().unwrap()])
        );
    }
}
