//! The request, built once before the run: HTTP/1.1 wire bytes that every send writes as they
//! are, and the parts of the same request for HTTP/2 and HTTP/3. Defaults (Host, User-Agent,
//! Accept-Encoding) give way to user headers of the same name.

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue};
use http::{Method, Uri};

use crate::plan::Plan;
use crate::proto::h2::Prepared;

pub mod written;

/// Headers that belong to one HTTP/1.1 connection and are forbidden in HTTP/2 (RFC 9113
/// section 8.2.2); Host becomes the :authority pseudo-header.
const NOT_IN_H2: [&str; 6] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "host",
];

pub const USER_AGENT: &str = concat!("spate/", env!("CARGO_PKG_VERSION"));
pub const ACCEPT_ENCODING: &str = "gzip, deflate, br";

/// HTTP/1.1 request bytes for `plan`. The plan must be validated (tokens, no CR/LF in values).
pub fn h1_bytes(plan: &Plan) -> Bytes {
    let user_has = |name: &str| {
        plan.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    let mut out = Vec::with_capacity(256 + plan.body.len());
    out.extend_from_slice(plan.method.as_bytes());
    out.push(b' ');
    // A proxy that forwards is told the whole URL (RFC 9112 3.2.2, absolute form).
    if plan.proxy_forward() {
        out.extend_from_slice(plan.target.scheme().as_bytes());
        out.extend_from_slice(b"://");
        out.extend_from_slice(plan.target.authority().as_bytes());
    }
    out.extend_from_slice(plan.target.path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let mut line = |name: &str, value: &str| {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    };

    if !user_has("host") {
        line("Host", &plan.target.authority());
    }
    if !user_has("user-agent") {
        line("User-Agent", USER_AGENT);
    }
    if plan.compression && !user_has("accept-encoding") {
        line("Accept-Encoding", ACCEPT_ENCODING);
    }
    for (name, value) in &plan.headers {
        line(name, value);
    }
    // RFC 9110: a body, or a method that expects one, gets an explicit length.
    let expects_body = ["POST", "PUT", "PATCH"]
        .iter()
        .any(|m| plan.method.eq_ignore_ascii_case(m));
    if !plan.body.is_empty() || expects_body {
        line("Content-Length", &plan.body.len().to_string());
    }
    if plan.proxy_forward()
        && !user_has("proxy-authorization")
        && let Some(auth) = plan.route.proxy.as_ref().and_then(|p| p.authorization())
    {
        line("Proxy-Authorization", &auth);
    }
    if !plan.keep_alive && !user_has("connection") {
        line("Connection", "close");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&plan.body);
    Bytes::from(out)
}

/// The CONNECT request that asks `--proxy` for a tunnel to the target, when the plan tunnels.
pub fn tunnel_bytes(plan: &Plan) -> Option<Bytes> {
    let proxy = plan.route.proxy.as_ref().filter(|_| plan.proxy_tunnel())?;
    // Authority form always carries the port (RFC 9110 9.3.6).
    let t = &plan.target;
    let authority = match t.host.contains(':') {
        true => format!("[{}]:{}", t.host, t.port),
        false => format!("{}:{}", t.host, t.port),
    };
    let mut out = format!(
        "CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: {USER_AGENT}\r\n"
    );
    if let Some(auth) = proxy.authorization() {
        out.push_str(&format!("Proxy-Authorization: {auth}\r\n"));
    }
    out.push_str("\r\n");
    Some(Bytes::from(out))
}

/// The same request for HTTP/2: method, :authority (a user Host header wins), path, headers.
pub fn h2_prepared(plan: &Plan) -> Result<Prepared, String> {
    let (method, uri, headers) = parts(plan)?;
    let authority = uri.authority().map_or("", |a| a.as_str());
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut fields: Vec<(&[u8], &[u8])> = vec![
        (b":method", method.as_str().as_bytes()),
        (b":scheme", plan.target.scheme().as_bytes()),
        (b":path", path.as_bytes()),
        (b":authority", authority.as_bytes()),
    ];
    fields.extend(
        headers
            .iter()
            .map(|(n, v)| (n.as_str().as_bytes(), v.as_bytes())),
    );
    Ok(Prepared::new(&fields, Bytes::from(plan.body.clone())))
}

/// The same request for HTTP/3, whose fields are HTTP/2's (RFC 9114, 4.2).
pub fn h3_request(plan: &Plan) -> Result<crate::proto::h3::Request, String> {
    let (method, uri, headers) = parts(plan)?;
    Ok(crate::proto::h3::Request {
        method,
        uri,
        headers,
        body: Bytes::from(plan.body.clone()),
    })
}

/// The method, URI (with the Host header's authority, if one was given) and headers of the
/// request as HTTP/2 and HTTP/3 carry it.
fn parts(plan: &Plan) -> Result<(Method, Uri, HeaderMap), String> {
    let method = Method::from_bytes(plan.method.as_bytes()).map_err(|e| e.to_string())?;
    let user = |name: &str| {
        plan.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let authority = user("host").map_or_else(|| plan.target.authority(), str::to_owned);
    let uri = Uri::builder()
        .scheme(plan.target.scheme())
        .authority(authority.as_str())
        .path_and_query(plan.target.path.as_str())
        .build()
        .map_err(|e| e.to_string())?;
    let mut headers = HeaderMap::new();
    let mut put = |name: &str, value: &str| -> Result<(), String> {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| e.to_string())?;
        let value = HeaderValue::from_bytes(value.as_bytes()).map_err(|e| e.to_string())?;
        headers.append(name, value);
        Ok(())
    };
    if user("user-agent").is_none() {
        put("user-agent", USER_AGENT)?;
    }
    if plan.compression && user("accept-encoding").is_none() {
        put("accept-encoding", ACCEPT_ENCODING)?;
    }
    for (name, value) in &plan.headers {
        // TE is allowed in HTTP/2 with the value "trailers" only (RFC 9113, 8.2.2).
        let te = name.eq_ignore_ascii_case("te") && !value.trim().eq_ignore_ascii_case("trailers");
        if !te && !NOT_IN_H2.iter().any(|h| name.eq_ignore_ascii_case(h)) {
            put(name, value)?;
        }
    }
    let expects_body = ["POST", "PUT", "PATCH"]
        .iter()
        .any(|m| plan.method.eq_ignore_ascii_case(m));
    if !plan.body.is_empty() || expects_body {
        put("content-length", &plan.body.len().to_string())?;
    }
    Ok((method, uri, headers))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Target;

    fn plan(url: &str) -> Plan {
        Plan::new(Target::parse(url).unwrap())
    }

    fn text(p: &Plan) -> String {
        String::from_utf8(h1_bytes(p).to_vec()).unwrap()
    }

    #[test]
    fn default_get() {
        let p = plan("http://127.0.0.1:8080/a?b=c");
        assert_eq!(
            text(&p),
            format!(
                "GET /a?b=c HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: {USER_AGENT}\r\nAccept-Encoding: {ACCEPT_ENCODING}\r\n\r\n"
            )
        );
    }

    #[test]
    fn default_port_is_not_in_host() {
        let p = plan("http://localhost/");
        assert!(text(&p).contains("\r\nHost: localhost\r\n"));
    }

    #[test]
    fn user_headers_replace_defaults_case_insensitively() {
        let mut p = plan("http://localhost/");
        p.headers = vec![
            ("host".into(), "example.org".into()),
            ("USER-AGENT".into(), "me".into()),
        ];
        let t = text(&p);
        assert_eq!(t.matches("ost: ").count(), 1, "{t}");
        assert!(t.contains("\r\nhost: example.org\r\n"));
        assert!(t.contains("\r\nUSER-AGENT: me\r\n"));
        assert!(!t.contains("spate/"));
    }

    #[test]
    fn body_length_and_close() {
        let mut p = plan("http://localhost/");
        p.method = "POST".into();
        p.body = b"{\"a\":1}".to_vec();
        p.keep_alive = false;
        p.compression = false;
        let t = text(&p);
        assert!(t.starts_with("POST / HTTP/1.1\r\n"));
        assert!(t.contains("\r\nContent-Length: 7\r\n"));
        assert!(t.contains("\r\nConnection: close\r\n"));
        assert!(!t.contains("Accept-Encoding"));
        assert!(t.ends_with("\r\n\r\n{\"a\":1}"));
    }

    #[test]
    fn empty_post_says_zero_length() {
        let mut p = plan("http://localhost/");
        p.method = "POST".into();
        assert!(text(&p).contains("\r\nContent-Length: 0\r\n"));
        p.method = "GET".into();
        assert!(!text(&p).contains("Content-Length"));
    }

    #[test]
    fn h2_request_parts() {
        let mut p = plan("https://example.com:8443/a?b=1");
        p.method = "POST".into();
        p.body = b"xyz".to_vec();
        p.headers = vec![
            ("Host".into(), "virtual.test".into()),
            ("Connection".into(), "close".into()),
            ("X-Custom".into(), "1".into()),
            ("TE".into(), "gzip".into()),
        ];
        let r = h2_prepared(&p).unwrap();
        let fields = r.fields();
        let get = |name: &str| {
            fields
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names[..4], [":method", ":scheme", ":path", ":authority"]);
        assert_eq!(get(":method"), Some("POST"));
        assert_eq!(get(":scheme"), Some("https"));
        assert_eq!(get(":path"), Some("/a?b=1"));
        assert_eq!(get(":authority"), Some("virtual.test"));
        assert_eq!(get("x-custom"), Some("1"));
        assert_eq!(get("content-length"), Some("3"));
        assert_eq!(get("user-agent"), Some(USER_AGENT));
        assert!(get("connection").is_none() && get("host").is_none() && get("te").is_none());
        assert_eq!(&r.body[..], b"xyz");
        let plain = h2_prepared(&plan("http://127.0.0.1:8080/")).unwrap();
        let fields = plain.fields();
        assert!(fields.contains(&(":authority".into(), "127.0.0.1:8080".into())));
        assert!(fields.contains(&(":path".into(), "/".into())));
    }

    #[test]
    fn request_parses_as_http() {
        let mut p = plan("http://[::1]:81/x");
        p.headers = vec![("X-A".into(), "1".into())];
        p.body = b"abc".to_vec();
        let bytes = h1_bytes(&p);
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut req = httparse::Request::new(&mut headers);
        let n = req.parse(&bytes).unwrap().unwrap();
        assert_eq!(&bytes[n..], b"abc");
        assert_eq!(req.path, Some("/x"));
        assert!(
            req.headers
                .iter()
                .any(|h| h.name == "Host" && h.value == b"[::1]:81")
        );
    }
}
