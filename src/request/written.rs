//! A request written as HTTP/1.1 bytes (what a script's `request()` returns), read back into
//! the parts HTTP/2 and HTTP/3 carry: method, `:authority` from its Host, path, the fields an
//! HTTP/2 request may have, and the body its Content-Length frames. Runs once per scripted
//! request, off the static path; must not accept what it would have to guess (a chunked body,
//! bytes past the body, a second request).

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue};
use http::{Method, Uri};

use super::NOT_IN_H2;
use crate::proto::h2::Prepared;

/// Most header fields a written request may have.
const MAX_FIELDS: usize = 128;

/// One request, as HTTP/2 and HTTP/3 carry it.
#[derive(Debug, Clone)]
pub struct Written {
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// Reads the HTTP/1.1 request `raw` (one whole request) for a run on `scheme`, whose
/// authority is `authority` unless the request's Host says another. `Err` says what in it
/// HTTP/2 and HTTP/3 cannot carry.
pub fn read(raw: &[u8], scheme: &str, authority: &str) -> Result<Written, String> {
    let mut fields = [httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut req = httparse::Request::new(&mut fields);
    let head = match req.parse(raw) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Err("the request's head is incomplete".into()),
        Err(e) => return Err(format!("the request's head is not HTTP/1.1 ({e})")),
    };
    let method =
        Method::from_bytes(req.method.unwrap_or_default().as_bytes()).map_err(|e| e.to_string())?;
    let path = req.path.unwrap_or("/");
    let mut host = None;
    let mut length = None;
    let mut headers = HeaderMap::new();
    for f in req.headers.iter() {
        let name = f.name;
        if name.eq_ignore_ascii_case("host") {
            host = Some(std::str::from_utf8(f.value).map_err(|_| "a Host that is not text")?);
        }
        if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err("a Transfer-Encoding body; give it a Content-Length instead".into());
        }
        if name.eq_ignore_ascii_case("content-length") {
            let n = std::str::from_utf8(f.value)
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .ok_or("a Content-Length that is not a number")?;
            if length.is_some_and(|l| l != n) {
                return Err("two different Content-Lengths".into());
            }
            length = Some(n);
        }
        // TE is allowed in HTTP/2 with the value "trailers" only (RFC 9113, 8.2.2).
        let te = name.eq_ignore_ascii_case("te")
            && !f.value.trim_ascii().eq_ignore_ascii_case(b"trailers");
        if te || NOT_IN_H2.iter().any(|h| name.eq_ignore_ascii_case(h)) {
            continue;
        }
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| e.to_string())?;
        let value = HeaderValue::from_bytes(f.value).map_err(|e| e.to_string())?;
        headers.append(name, value);
    }
    let rest = &raw[head..];
    let body = match length {
        None | Some(0) if rest.is_empty() => Bytes::new(),
        None => return Err("bytes after the head without a Content-Length".into()),
        Some(n) if n == rest.len() => Bytes::copy_from_slice(rest),
        Some(n) if n < rest.len() => return Err("bytes after the body".into()),
        Some(_) => return Err("a body shorter than its Content-Length".into()),
    };
    let uri = Uri::builder()
        .scheme(scheme)
        .authority(host.unwrap_or(authority))
        .path_and_query(path)
        .build()
        .map_err(|e| format!("its target or Host: {e}"))?;
    Ok(Written {
        method,
        uri,
        headers,
        body,
    })
}

impl Written {
    /// The request as an HTTP/2 stream sends it.
    pub fn h2(&self) -> Prepared {
        let authority = self.uri.authority().map_or("", |a| a.as_str());
        let path = self.uri.path_and_query().map_or("/", |p| p.as_str());
        let scheme = self.uri.scheme_str().unwrap_or("http");
        let mut fields: Vec<(&[u8], &[u8])> = vec![
            (b":method", self.method.as_str().as_bytes()),
            (b":scheme", scheme.as_bytes()),
            (b":path", path.as_bytes()),
            (b":authority", authority.as_bytes()),
        ];
        fields.extend(
            self.headers
                .iter()
                .map(|(n, v)| (n.as_str().as_bytes(), v.as_bytes())),
        );
        Prepared::new(&fields, self.body.clone())
    }

    /// The request as HTTP/3 sends it.
    pub fn h3(self) -> crate::proto::h3::Request {
        crate::proto::h3::Request {
            method: self.method,
            uri: self.uri,
            headers: self.headers,
            body: self.body,
        }
    }
}

/// The fuzzed property (through `script::check_batch`): any one request is read or refused,
/// never a panic; one that is read keeps its method, target and body in its HTTP/2 fields and
/// its HTTP/3 parts, and carries none of the fields HTTP/2 forbids.
pub fn check(raw: &[u8]) {
    let Ok(w) = read(raw, "http", "h:1") else {
        return;
    };
    let fields = w.h2().field_pairs();
    let pseudo = |name: &str| {
        fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(pseudo(":method"), Some(w.method.as_str()));
    assert_eq!(pseudo(":path"), w.uri.path_and_query().map(|p| p.as_str()));
    for (n, _) in &fields {
        assert!(!NOT_IN_H2.contains(&n.as_str()), "{n} in HTTP/2's fields");
    }
    let body = w.body.clone();
    let h3 = w.h3();
    assert_eq!(h3.body, body);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(w: &Written) -> Vec<(String, String)> {
        w.h2().fields()
    }

    #[test]
    fn a_written_post_becomes_its_fields_and_body() {
        let raw =
            b"POST /api?x=1 HTTP/1.1\r\nHost: example.test:8443\r\nConnection: keep-alive\r\n\
                    X-Token: abc\r\nContent-Length: 5\r\nTE: gzip\r\n\r\nhello";
        let w = read(raw, "https", "127.0.0.1:1").unwrap();
        assert_eq!(w.body, Bytes::from_static(b"hello"));
        let f = fields(&w);
        let want = [
            (":method", "POST"),
            (":scheme", "https"),
            (":path", "/api?x=1"),
            (":authority", "example.test:8443"),
            ("x-token", "abc"),
            ("content-length", "5"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        assert_eq!(f, want);
        let h3 = w.h3();
        assert_eq!(h3.uri.authority().unwrap().as_str(), "example.test:8443");
        assert!(h3.headers.get("connection").is_none());
    }

    #[test]
    fn without_a_host_the_run_names_the_authority() {
        let w = read(b"GET / HTTP/1.1\r\n\r\n", "http", "127.0.0.1:8080").unwrap();
        assert_eq!(w.uri.to_string(), "http://127.0.0.1:8080/");
        assert!(w.body.is_empty());
    }

    #[test]
    fn what_cannot_be_carried_is_named_never_guessed() {
        for (raw, says) in [
            (&b"GET / HTTP/1.1\r\nHost: a\r\n"[..], "incomplete"),
            (
                b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                "Transfer-Encoding",
            ),
            (
                b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nabc",
                "shorter",
            ),
            (
                b"POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\nabc",
                "after the body",
            ),
            (
                b"GET / HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n",
                "without a Content-Length",
            ),
            (
                b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
                "not a number",
            ),
            (b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", "Host"),
            (b"\x00\x01", "not HTTP/1.1"),
        ] {
            let e = read(raw, "http", "h:1").unwrap_err();
            assert!(e.contains(says), "{raw:?}: {e}");
        }
    }

    #[test]
    fn any_bytes_are_read_or_refused_never_a_panic() {
        let raw = b"PUT /p HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc";
        for cut in 0..=raw.len() {
            let _ = read(&raw[..cut], "http", "h:1");
            let mut bent = raw.to_vec();
            if cut < bent.len() {
                bent[cut] ^= 0x55;
                let _ = read(&bent, "http", "h:1");
            }
        }
    }
}
