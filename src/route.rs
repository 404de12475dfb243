//! Where the connections go, apart from what the requests say: the URL's host and port, rewritten
//! by `--connect-to` rules, narrowed to one address family (`--ipv4`, `--ipv6`), a Unix socket
//! (`--unix-socket`), or an HTTP proxy (`--proxy`). Resolved once per run. Never changes the Host
//! header or the TLS server name: those always come from the URL.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::target::Target;

/// One `--connect-to HOST1:PORT1:HOST2:PORT2` rule, as curl reads it: an empty HOST1 or PORT1
/// matches any, an empty HOST2 or PORT2 keeps the URL's. IPv6 addresses go in brackets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectTo {
    pub from_host: Option<String>,
    pub from_port: Option<u16>,
    pub to_host: Option<String>,
    pub to_port: Option<u16>,
}

/// An address family to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    V4,
    V6,
}

/// An HTTP proxy (`--proxy http://[user:pass@]host[:port]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proxy {
    pub host: String,
    /// 1080 when the URL gives none, as curl has it.
    pub port: u16,
    /// From the proxy URL, percent-decoded; sent as `Proxy-Authorization: Basic`, never shown.
    pub credentials: Option<(String, String)>,
}

impl Proxy {
    /// The proxy as it may be shown: credentials masked.
    pub fn shown(&self) -> String {
        let auth = match self.credentials {
            Some(_) => format!("{}@", crate::redact::MASK),
            None => String::new(),
        };
        match self.host.contains(':') {
            true => format!("http://{auth}[{}]:{}", self.host, self.port),
            false => format!("http://{auth}{}:{}", self.host, self.port),
        }
    }

    /// The `Proxy-Authorization` value, if the URL had credentials.
    pub fn authorization(&self) -> Option<String> {
        use base64::Engine as _;
        self.credentials.as_ref().map(|(u, p)| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
            )
        })
    }
}

/// Percent-decodes `s` (credentials in a URL); `None` for a broken escape or invalid UTF-8.
fn percent_decoded(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl FromStr for Proxy {
    type Err = String;

    /// "http://user:pass@host:port"; the error never shows the credentials.
    fn from_str(s: &str) -> Result<Proxy, String> {
        let shown = crate::redact::url(s);
        let rest = match s.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
            Some((scheme, _)) => {
                return Err(format!(
                    "{shown:?}: unsupported proxy scheme {scheme:?}; spate speaks to HTTP proxies (http://)"
                ));
            }
            // Without a scheme it is an HTTP proxy, as curl takes it.
            None => s,
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let (credentials, hostport) = match authority.rsplit_once('@') {
            Some((userinfo, hp)) => {
                let (u, p) = userinfo.split_once(':').unwrap_or((userinfo, ""));
                let decoded = percent_decoded(u).zip(percent_decoded(p)).ok_or_else(|| {
                    format!("{shown:?}: the proxy credentials have a broken %-escape")
                })?;
                (Some(decoded), hp)
            }
            None => (None, authority),
        };
        let [host, port] = match fields(hostport)?.as_slice() {
            [h] => [h.clone(), String::new()],
            [h, p] => [h.clone(), p.clone()],
            _ => return Err(format!("{shown:?} is not http://[user:pass@]host[:port]")),
        };
        if host.is_empty() {
            return Err(format!("{shown:?}: the proxy URL has no host"));
        }
        crate::target::check_host(&host).map_err(|e| {
            let start: String = shown.chars().take(40).collect();
            format!("\"{start}...\": {e}")
        })?;
        Ok(Proxy {
            host: host.to_ascii_lowercase(),
            port: port_of(&port, &shown)?.unwrap_or(1080),
            credentials,
        })
    }
}

/// How to reach the target.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    /// `--connect-to` rules; the first that matches the URL applies.
    pub connect_to: Vec<ConnectTo>,
    /// `--ipv4` / `--ipv6`: only addresses of this family.
    pub family: Option<Family>,
    /// `--unix-socket`: every connection goes to this socket; the URL only names the request.
    pub unix_socket: Option<PathBuf>,
    /// `--proxy`: every connection goes to this HTTP proxy.
    pub proxy: Option<Proxy>,
}

/// Where the connections of a run go, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// Tried in this order.
    Tcp(Vec<SocketAddr>),
    Unix(PathBuf),
}

impl Endpoint {
    /// The addresses as a person reads them, for messages.
    pub fn describe(&self) -> String {
        match self {
            Endpoint::Tcp(addrs) => addrs
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            Endpoint::Unix(path) => format!("unix:{}", path.display()),
        }
    }
}

/// Splits "[::1]:80:host:8080" style text into its colon-separated fields, keeping bracketed
/// IPv6 addresses whole (without their brackets).
fn fields(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        let (field, after) = if let Some(inner) = rest.strip_prefix('[') {
            let end = inner
                .find(']')
                .ok_or_else(|| format!("{s:?}: a '[' without its ']'"))?;
            let after = &inner[end + 1..];
            if !after.is_empty() && !after.starts_with(':') {
                return Err(format!("{s:?}: ':' must follow ']'"));
            }
            (inner[..end].to_string(), after)
        } else {
            let end = rest.find(':').unwrap_or(rest.len());
            (rest[..end].to_string(), &rest[end..])
        };
        out.push(field);
        match after.strip_prefix(':') {
            Some(next) => rest = next,
            None => return Ok(out),
        }
    }
}

fn port_of(s: &str, whole: &str) -> Result<Option<u16>, String> {
    if s.is_empty() {
        return Ok(None);
    }
    match s.parse::<u16>() {
        Ok(p) if p > 0 => Ok(Some(p)),
        _ => Err(format!("{whole:?}: {s:?} is not a port (1 to 65535)")),
    }
}

impl FromStr for ConnectTo {
    type Err = String;

    fn from_str(s: &str) -> Result<ConnectTo, String> {
        let f = fields(s)?;
        let [from_host, from_port, to_host, to_port] = f.as_slice() else {
            return Err(format!(
                "{s:?} is not HOST1:PORT1:HOST2:PORT2 (e.g. example.com:443:127.0.0.1:8443)"
            ));
        };
        let host = |h: &str| (!h.is_empty()).then(|| h.to_ascii_lowercase());
        if !to_host.is_empty() {
            crate::target::check_host(to_host)?;
        }
        Ok(ConnectTo {
            from_host: host(from_host),
            from_port: port_of(from_port, s)?,
            to_host: host(to_host),
            to_port: port_of(to_port, s)?,
        })
    }
}

impl ConnectTo {
    fn matches(&self, host: &str, port: u16) -> bool {
        self.from_host.as_deref().is_none_or(|h| h == host)
            && self.from_port.is_none_or(|p| p == port)
    }
}

impl Route {
    /// The host and port to connect to for `target`, after the first matching `--connect-to`.
    pub fn destination(&self, target: &Target) -> (String, u16) {
        match self
            .connect_to
            .iter()
            .find(|r| r.matches(&target.host, target.port))
        {
            Some(r) => (
                r.to_host.clone().unwrap_or_else(|| target.host.clone()),
                r.to_port.unwrap_or(target.port),
            ),
            None => (target.host.clone(), target.port),
        }
    }

    /// Resolves where `target`'s connections go, once. The error says what was looked up.
    pub fn resolve(&self, target: &Target) -> Result<Endpoint, RouteError> {
        if let Some(path) = &self.unix_socket {
            return Ok(Endpoint::Unix(path.clone()));
        }
        let (host, port) = match &self.proxy {
            Some(p) => (p.host.clone(), p.port),
            None => self.destination(target),
        };
        let all: Vec<SocketAddr> = (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|e| RouteError::Resolve {
                host: host.clone(),
                message: e.to_string(),
            })?
            .collect();
        let kept: Vec<SocketAddr> = all
            .iter()
            .copied()
            .filter(|a| match self.family {
                None => true,
                Some(Family::V4) => a.is_ipv4(),
                Some(Family::V6) => a.is_ipv6(),
            })
            .collect();
        if kept.is_empty() {
            return Err(match self.family {
                Some(f) if !all.is_empty() => RouteError::Family {
                    host,
                    family: f,
                    found: Endpoint::Tcp(all).describe(),
                },
                _ => RouteError::Resolve {
                    host,
                    message: "no addresses found".into(),
                },
            });
        }
        Ok(Endpoint::Tcp(kept))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("cannot resolve {host}: {message}")]
    Resolve { host: String, message: String },
    #[error("{host} has no {} address (it has {found})", match family { Family::V4 => "IPv4", Family::V6 => "IPv6" })]
    Family {
        host: String,
        family: Family,
        found: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(url: &str) -> Target {
        Target::parse(url).unwrap()
    }

    #[test]
    fn connect_to_reads_like_curl() {
        let r: ConnectTo = "example.com:443:127.0.0.1:8443".parse().unwrap();
        assert_eq!(r.from_host.as_deref(), Some("example.com"));
        assert_eq!((r.from_port, r.to_port), (Some(443), Some(8443)));
        let any: ConnectTo = "::[::1]:".parse().unwrap();
        assert_eq!(
            any,
            ConnectTo {
                from_host: None,
                from_port: None,
                to_host: Some("::1".into()),
                to_port: None
            }
        );
        let v6: ConnectTo = "[2001:db8::1]:80:LOCALHOST:81".parse().unwrap();
        assert_eq!(v6.from_host.as_deref(), Some("2001:db8::1"));
        assert_eq!(v6.to_host.as_deref(), Some("localhost"));
        for (bad, why) in [
            (
                "example.com:443:127.0.0.1",
                "is not HOST1:PORT1:HOST2:PORT2",
            ),
            ("a:1:b:2:c", "is not HOST1"),
            ("a:http:b:2", "\"http\" is not a port"),
            ("a:1:b:0", "\"0\" is not a port"),
            ("[::1:80:b:2", "without its ']'"),
            ("[::1]x:80:b:2", "':' must follow ']'"),
        ] {
            let e = bad.parse::<ConnectTo>().unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }

    #[test]
    fn the_first_matching_rule_rewrites_the_destination_only() {
        let route = Route {
            connect_to: vec![
                "other.test:80:127.0.0.9:1".parse().unwrap(),
                "example.com::127.0.0.2:".parse().unwrap(),
                ":443:127.0.0.3:9443".parse().unwrap(),
            ],
            ..Route::default()
        };
        let dest = |url: &str| route.destination(&target(url));
        assert_eq!(dest("http://example.com:8080/"), ("127.0.0.2".into(), 8080));
        assert_eq!(dest("https://api.test/"), ("127.0.0.3".into(), 9443));
        assert_eq!(dest("http://api.test/"), ("api.test".into(), 80), "no rule");
        assert_eq!(
            route.resolve(&target("http://example.com:8080/")).unwrap(),
            Endpoint::Tcp(vec!["127.0.0.2:8080".parse().unwrap()])
        );
    }

    #[test]
    fn proxy_urls_read_like_curls_and_never_show_credentials() {
        let p: Proxy = "http://al%40ce:s3cr%3At@Proxy.test:3128/".parse().unwrap();
        assert_eq!((p.host.as_str(), p.port), ("proxy.test", 3128));
        assert_eq!(
            p.credentials,
            Some(("al@ce".to_string(), "s3cr:t".to_string()))
        );
        assert_eq!(p.shown(), "http://***@proxy.test:3128");
        assert_eq!(
            p.authorization().unwrap(),
            "Basic YWxAY2U6czNjcjp0",
            "base64 of al@ce:s3cr:t"
        );
        let bare: Proxy = "127.0.0.1".parse().unwrap();
        assert_eq!((bare.port, bare.credentials), (1080, None));
        assert_eq!(
            "[::1]:8888".parse::<Proxy>().unwrap().shown(),
            "http://[::1]:8888"
        );
        for (bad, why) in [
            (
                "socks5://u:secret@h:1080",
                "unsupported proxy scheme \"socks5\"",
            ),
            ("https://h:443", "unsupported proxy scheme"),
            ("http://:8080", "no host"),
            ("http://h:99999", "is not a port"),
            ("http://u:%zz@h", "broken %-escape"),
        ] {
            let e = bad.parse::<Proxy>().unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
            assert!(!e.contains("secret"), "{e}");
        }
        // The proxy is where the connections go.
        let route = Route {
            proxy: Some("127.0.0.1:3128".parse().unwrap()),
            ..Route::default()
        };
        assert_eq!(
            route.resolve(&target("http://example.com/")).unwrap(),
            Endpoint::Tcp(vec!["127.0.0.1:3128".parse().unwrap()])
        );
    }

    #[test]
    fn a_family_keeps_its_addresses_or_says_what_there_was() {
        let t = target("http://127.0.0.1:8080/");
        let v4 = Route {
            family: Some(Family::V4),
            ..Route::default()
        };
        assert!(v4.resolve(&t).is_ok());
        let v6 = Route {
            family: Some(Family::V6),
            ..Route::default()
        };
        assert_eq!(
            v6.resolve(&t).unwrap_err().to_string(),
            "127.0.0.1 has no IPv6 address (it has 127.0.0.1:8080)"
        );
        let unix = Route {
            unix_socket: Some("/run/app.sock".into()),
            ..Route::default()
        };
        assert_eq!(unix.resolve(&t).unwrap().describe(), "unix:/run/app.sock");
    }
}
