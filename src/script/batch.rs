//! What a script's `request()` returned: one HTTP/1.1 request, or several back to back (a
//! pipelined batch, sent in one write). Finds where each request ends and whether it is a HEAD
//! (its response has no body), so that the lane reads one response per request. Must not
//! change the bytes: they go to the server as the script wrote them.

use std::fmt;

/// A batch longer than this is refused: a script that returns a runaway string must not fill
/// memory once per connection.
pub const MAX_BATCH_BYTES: usize = 16 << 20;

/// Most requests in one batch: each is a response the lane waits for.
pub const MAX_BATCH_REQUESTS: usize = 1024;

/// The requests of one `request()` result.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Batch {
    pub bytes: Vec<u8>,
    /// Per request: where it ends in `bytes`, and whether it is a HEAD.
    pub requests: Vec<(usize, bool)>,
}

/// Why the bytes are not requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotRequests(pub String);

impl fmt::Display for NotRequests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Batch {
    /// Takes `bytes` as the batch (reusing this one's memory), finding its requests; refused,
    /// it is left empty.
    pub fn fill(&mut self, bytes: &[u8]) -> Result<(), NotRequests> {
        let r = self.split(bytes);
        if r.is_err() {
            self.bytes.clear();
            self.requests.clear();
        }
        r
    }

    fn split(&mut self, bytes: &[u8]) -> Result<(), NotRequests> {
        self.bytes.clear();
        self.requests.clear();
        if bytes.len() > MAX_BATCH_BYTES {
            return Err(NotRequests(format!(
                "request() returned {} bytes, more than the {} MiB a batch may have",
                bytes.len(),
                MAX_BATCH_BYTES >> 20
            )));
        }
        let mut at = 0;
        while at < bytes.len() {
            if self.requests.len() == MAX_BATCH_REQUESTS {
                return Err(NotRequests(format!(
                    "request() returned more than {MAX_BATCH_REQUESTS} requests in one string"
                )));
            }
            let (len, head) = one(&bytes[at..]).map_err(|why| {
                NotRequests(match self.requests.len() {
                    0 => format!("request() did not return an HTTP request: {why}"),
                    n => format!(
                        "request() returned {n} requests and then bytes that are not one: {why}"
                    ),
                })
            })?;
            at += len;
            self.requests.push((at, head));
        }
        if self.requests.is_empty() {
            return Err(NotRequests(
                "request() returned an empty string, not an HTTP request".into(),
            ));
        }
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }

    /// Takes `bytes`, already known to be one request (a HEAD if `head`), without parsing.
    pub fn one(&mut self, bytes: &[u8], head: bool) {
        self.bytes.clear();
        self.bytes.extend_from_slice(bytes);
        self.requests.clear();
        self.requests.push((bytes.len(), head));
    }

    /// Requests in the batch.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// The bytes of the first `n` requests.
    pub fn first(&self, n: usize) -> &[u8] {
        match n {
            0 => &[],
            n => &self.bytes[..self.requests[n - 1].0],
        }
    }
}

/// The fuzzed property (fuzz/fuzz_targets/batch.rs; it checks each request's HTTP/2 and HTTP/3
/// form too, `request::written::check`): any bytes either are refused with a reason
/// or split into requests that end where the next begins, the last at the end; each request
/// alone is a batch of one, and any prefix that ends between two requests is a batch of the
/// requests before it.
pub fn check_batch(data: &[u8]) {
    let mut b = Batch::default();
    let Ok(()) = b.fill(data) else {
        assert!(b.is_empty(), "a refused batch keeps requests");
        return;
    };
    assert_eq!(b.bytes, data);
    assert_eq!(b.requests.last().map(|r| r.0), Some(data.len()));
    let mut from = 0;
    let mut one = Batch::default();
    for (k, &(end, head)) in b.requests.iter().enumerate() {
        assert!(end > from, "an empty request");
        one.fill(&data[from..end])
            .expect("a request of the batch alone");
        assert_eq!(one.requests, [(end - from, head)]);
        let mut prefix = Batch::default();
        prefix
            .fill(&data[..end])
            .expect("a prefix that ends between requests");
        assert_eq!(prefix.requests, b.requests[..=k]);
        // Each request, read back for HTTP/2 and HTTP/3, is carried whole or refused.
        crate::request::written::check(&data[from..end]);
        from = end;
    }
}

/// The length of the request at the start of `b`, and whether it is a HEAD.
fn one(b: &[u8]) -> Result<(usize, bool), String> {
    // Uninitialised: zeroing the array would cost more than parsing a short head.
    let mut headers = [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; 100];
    let mut req = httparse::Request::new(&mut []);
    let head = match req.parse_with_uninit_headers(b, &mut headers) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return Err("it ends before the blank line that ends a request head".into());
        }
        Err(e) => return Err(format!("{e} in {:?}", first_line(b))),
    };
    let mut length = 0usize;
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err("a chunked request body is not supported; give a Content-Length".into());
        }
        if h.name.eq_ignore_ascii_case("content-length") {
            length = std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .ok_or_else(|| {
                    format!(
                        "Content-Length {:?} is not a number",
                        h.value.escape_ascii().to_string()
                    )
                })?;
        }
    }
    if b.len() - head < length {
        return Err(format!(
            "its Content-Length is {length} but only {} bytes of body follow",
            b.len() - head
        ));
    }
    Ok((head + length, req.method == Some("HEAD")))
}

/// The first line of `b`, short, for a message.
fn first_line(b: &[u8]) -> String {
    let line = b.split(|&c| c == b'\n').next().unwrap_or_default();
    let line = &line[..line.len().min(60)];
    String::from_utf8_lossy(line).trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GET: &[u8] = b"GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
    const POST: &[u8] = b"POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc";
    const HEAD: &[u8] = b"HEAD /h HTTP/1.1\r\nHost: h\r\n\r\n";

    #[test]
    fn finds_each_request_of_a_pipelined_batch() {
        let all = [GET, POST, HEAD].concat();
        let mut b = Batch::default();
        b.fill(&all).unwrap();
        assert_eq!(
            b.requests,
            [
                (GET.len(), false),
                (GET.len() + POST.len(), false),
                (all.len(), true)
            ]
        );
        assert_eq!(b.first(2), [GET, POST].concat());
        assert_eq!(b.first(0), b"");
        assert_eq!(b.bytes, all);
    }

    #[test]
    fn refuses_what_is_not_a_request_with_a_reason() {
        let mut b = Batch::default();
        for (bytes, want) in [
            (&b""[..], "empty string"),
            (b"hello", "ends before the blank line"),
            (
                b"GET / HTTP/1.1\r\nHost h\r\n\r\n",
                "did not return an HTTP request",
            ),
            (
                b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nab",
                "only 2 bytes of body",
            ),
            (
                b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
                "is not a number",
            ),
            (
                b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                "chunked",
            ),
            (&[GET, b"junk"].concat()[..], "returned 1 requests and then"),
        ] {
            let e = b.fill(bytes).unwrap_err().to_string();
            assert!(e.contains(want), "{bytes:?}: {e}");
        }
    }

    #[test]
    fn a_runaway_string_is_refused_by_its_size_or_its_count() {
        let mut b = Batch::default();
        let big = vec![b'x'; MAX_BATCH_BYTES + 1];
        assert!(b.fill(&big).unwrap_err().0.contains("16 MiB"));
        let many = GET.repeat(MAX_BATCH_REQUESTS + 1);
        assert!(
            b.fill(&many)
                .unwrap_err()
                .0
                .contains("more than 1024 requests")
        );
        b.fill(&GET.repeat(MAX_BATCH_REQUESTS)).unwrap();
        assert_eq!(b.len(), MAX_BATCH_REQUESTS);
    }

    #[test]
    fn the_fuzzed_property_holds_for_batches_and_junk() {
        for data in [
            &[GET, POST, HEAD].concat()[..],
            POST,
            b"",
            b"GET / HTTP/1.1\r\n\r\nGET",
            b"\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n",
        ] {
            check_batch(data);
        }
    }

    #[test]
    fn a_batch_is_the_same_however_its_requests_are_cut() {
        // The boundaries are found in the whole string, so every prefix that ends inside a
        // request is refused and every one that ends between requests is accepted.
        let all = [POST, GET, POST].concat();
        let ends = [POST.len(), POST.len() + GET.len(), all.len()];
        let mut b = Batch::default();
        for cut in 1..=all.len() {
            let ok = b.fill(&all[..cut]).is_ok();
            assert_eq!(ok, ends.contains(&cut), "cut at {cut}");
        }
    }
}
