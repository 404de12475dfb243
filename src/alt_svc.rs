//! --alt-svc: where a server says its HTTP/3 is. One exchange over TCP before the run (ALPN
//! offers h2 and http/1.1, as a browser's first visit does) reads the response's Alt-Svc header
//! (RFC 7838), and the run's QUIC connections go where its first `h3` alternative points. The
//! header's parser is here too. Must not be on the run's path: it runs once, before the threads.

use std::net::{SocketAddr, ToSocketAddrs};

use crate::net::{self, Stream};
use crate::plan::{Plan, Protocol};
use crate::route::Endpoint;

/// An `h3` alternative: another host (`None`: the same server) and its UDP port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alternative {
    pub host: Option<String>,
    pub port: u16,
}

impl Alternative {
    /// As a header writes it, for the report: `h3=":443"` (`h3` of it gives it back).
    pub fn describe(&self) -> String {
        let host = self.host.as_deref().unwrap_or("");
        let host = match host.contains(':') || host.starts_with('[') {
            true => format!("[{host}]"),
            false => host.to_owned(),
        };
        let quoted = host.replace('\\', "\\\\").replace('"', "\\\"");
        format!("h3=\"{quoted}:{}\"", self.port)
    }
}

/// The first `h3` alternative in an Alt-Svc field value (several header lines joined with
/// commas), or `None` when it has none (or says `clear`). Draft versions (`h3-29`) are not
/// HTTP/3 and are skipped, as are alternatives that do not parse.
pub fn h3(value: &str) -> Option<Alternative> {
    split_outside_quotes(value, ',').find_map(|alt| {
        let first = split_outside_quotes(alt, ';').next()?;
        let (protocol, authority) = first.split_once('=')?;
        if protocol.trim() != "h3" {
            return None;
        }
        authority_of(&unquote(authority.trim())?)
    })
}

/// `s` split at `sep` where it is not inside a quoted string.
fn split_outside_quotes(s: &str, sep: char) -> impl Iterator<Item = &str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                parts.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts.into_iter()
}

/// A quoted-string's content (backslash escapes undone), or a bare token as it is.
fn unquote(s: &str) -> Option<String> {
    let Some(inner) = s.strip_prefix('"') else {
        return Some(s.to_owned());
    };
    let inner = inner.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        out.push(match c {
            '\\' => chars.next()?,
            c => c,
        });
    }
    Some(out)
}

/// `[host]:port`, `host:port` or `:port`.
fn authority_of(s: &str) -> Option<Alternative> {
    let (host, port) = s.rsplit_once(':')?;
    let port: u16 = port.parse().ok().filter(|&p| p > 0)?;
    let host = host
        .strip_prefix('[')
        .map_or(Some(host), |h| h.strip_suffix(']'))?;
    Some(Alternative {
        host: (!host.is_empty()).then(|| host.to_owned()),
        port,
    })
}

/// What following the server's Alt-Svc came to: where the QUIC connections go, and the
/// alternative, for the report.
pub struct Followed {
    pub endpoint: Endpoint,
    pub alternative: Alternative,
}

/// Asks the URL's server (at `endpoint`, the run's route) over TCP for its Alt-Svc and resolves
/// its `h3` alternative, on a runtime of its own. The error is one sentence for the report.
pub fn follow(plan: &Plan, endpoint: &Endpoint) -> Result<Followed, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?
        .block_on(follow_async(plan, endpoint))
}

/// [`follow`] inside a runtime (`-v`'s).
pub async fn follow_async(plan: &Plan, endpoint: &Endpoint) -> Result<Followed, String> {
    let tcp = Plan {
        protocol: Protocol::Auto,
        ..plan.clone()
    };
    let limit = plan.connect_timeout + plan.timeout;
    let (value, server) = tokio::time::timeout(limit, ask(&tcp, endpoint))
        .await
        .unwrap_or_else(|_| Err(format!("no answer over TCP within {limit:?}")))?;
    let Some(alternative) = value.as_deref().and_then(h3) else {
        return Err(format!(
            "--alt-svc: the server advertised no HTTP/3 (Alt-Svc: {})",
            value.as_deref().unwrap_or("none")
        ));
    };
    let addrs: Vec<SocketAddr> = match &alternative.host {
        None => vec![SocketAddr::new(server.ip(), alternative.port)],
        Some(host) => (host.as_str(), alternative.port)
            .to_socket_addrs()
            .map_err(|e| format!("--alt-svc: cannot resolve {host}: {e}"))?
            .collect(),
    };
    Ok(Followed {
        endpoint: Endpoint::Tcp(addrs),
        alternative,
    })
}

/// One request over TCP and TLS: the response's Alt-Svc values joined, and the address that
/// answered.
async fn ask(plan: &Plan, endpoint: &Endpoint) -> Result<(Option<String>, SocketAddr), String> {
    let Endpoint::Tcp(addrs) = endpoint else {
        unreachable!("--alt-svc over a Unix socket: the plan refuses it");
    };
    let Some(tls) = crate::reach::tls_client(plan).map_err(|e| e.to_string())? else {
        unreachable!("--alt-svc without TLS: the plan refuses it");
    };
    let dialed = match net::dial(endpoint, 0, None, Some(&tls), &mut ()).await {
        Ok(d) => d,
        Err(e @ net::DialError::Connect(_)) => {
            return Err(format!("cannot connect to {}: {e}", endpoint.describe()));
        }
        Err(e) => return Err(e.to_string()),
    };
    let value = match dialed.h2 {
        true => over_h2(plan, dialed.stream).await?,
        false => over_h1(plan, dialed.stream).await?,
    };
    Ok((value, addrs[dialed.index]))
}

fn joined<'a>(values: impl Iterator<Item = &'a [u8]>) -> Option<String> {
    let all: Vec<String> = values
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    (!all.is_empty()).then(|| all.join(", "))
}

async fn over_h2(plan: &Plan, stream: Stream) -> Result<Option<String>, String> {
    let r = crate::request::h3_request(plan)?;
    let (mut client, connection) = h2::client::handshake(stream)
        .await
        .map_err(|e| format!("the HTTP/2 handshake failed: {e}"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let (response, mut send) = client
        .send_request(r.message(), r.body.is_empty())
        .map_err(|e| format!("sending the request: {e}"))?;
    if !r.body.is_empty() {
        send.send_data(r.body, true)
            .map_err(|e| format!("sending the body: {e}"))?;
    }
    let response = response
        .await
        .map_err(|e| format!("reading the response: {e}"))?;
    Ok(joined(
        response
            .headers()
            .get_all("alt-svc")
            .iter()
            .map(|v| v.as_bytes()),
    ))
}

async fn over_h1(plan: &Plan, mut stream: Stream) -> Result<Option<String>, String> {
    let request = crate::request::h1_bytes(plan);
    let answered = crate::proto::h1::look::answer_head(&mut stream, &request).await?;
    let values = answered.values("alt-svc");
    Ok(joined(values.iter().map(|v| v.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alt(host: Option<&str>, port: u16) -> Option<Alternative> {
        Some(Alternative {
            host: host.map(str::to_owned),
            port,
        })
    }

    #[test]
    fn the_first_h3_alternative_is_taken() {
        assert_eq!(h3(r#"h3=":443"; ma=86400"#), alt(None, 443));
        assert_eq!(
            h3(r#"h3-29=":8443", h3="cdn.test:9443"; ma=60; persist=1"#),
            alt(Some("cdn.test"), 9443)
        );
        assert_eq!(h3(r#"h2=":443", h3="[::1]:4433""#), alt(Some("::1"), 4433));
        assert_eq!(h3(r#"h3=:443"#), alt(None, 443), "a token, not quoted");
        assert_eq!(
            h3(r#" h3 = ":443" "#),
            alt(None, 443),
            "spaces around = forgiven"
        );
        assert_eq!(h3(r#"h3="a\"b;c,d:7""#), alt(Some("a\"b;c,d"), 7));
    }

    #[test]
    fn no_h3_means_none() {
        for v in [
            "clear",
            "",
            r#"h2=":443""#,
            r#"h3-29=":443""#,
            r#"h3=":0""#,
            r#"h3=":99999""#,
            r#"h3="host""#,
            r#"h3=""#,
            r#"h3="[::1:443""#,
        ] {
            assert_eq!(h3(v), None, "{v}");
        }
    }

    #[test]
    fn what_describe_writes_parses_back() {
        for a in [
            alt(None, 443),
            alt(Some("::1"), 4433),
            alt(Some("[x]"), 1),
            alt(Some("a\"b\\c"), 2),
        ] {
            let a = a.unwrap();
            assert_eq!(h3(&a.describe()), Some(a.clone()), "{}", a.describe());
        }
    }

    #[test]
    fn any_text_parses_without_a_panic() {
        let samples = ["h3=\"", "h3=\"\\", ",;=\"\\", "h3=\"é:1\"", "h3=\":1\\\""];
        for s in samples {
            for end in 0..=s.len() {
                if s.is_char_boundary(end) {
                    let _ = h3(&s[..end]);
                }
            }
        }
    }
}
