//! `-v`: the run's first request sent once before the run, on a connection of its own made as
//! the run's are (route, proxy, TLS, protocol; QUIC for --http3), shown on stderr as curl -v
//! shows it: the request head, the response head and the first bytes of the body, credentials
//! masked. The first request is the run's own: a list's first entry, a script's first
//! `request()`, an MCP server's handshake and first call (`mcp`). Never part of the run's
//! numbers.

use std::fmt::Write as _;

use tokio::io::AsyncReadExt;

use crate::escape::term;
use crate::net::{self, Stream};
use crate::plan::Plan;
use crate::reach::{LaneChoice, lane_choice, tls_client};
use crate::redact::{MASK, is_sensitive};
use crate::request;
use crate::route::Endpoint;
use crate::script::Loaded;

mod first;
pub mod grpc;
mod mcp;
mod versions;

use crate::proto::h1::look::Answered;
pub use first::dry_run;
use first::{First, Sent};
use versions::{H3Stream, h2, h2_open, h3, h3_open};

/// How much of the response body is shown.
const BODY_SHOWN: usize = 256;
/// How long the first bytes of a body that did not come with its head are waited for.
const BODY_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The exchange as text, what the server sent escaped (each line prefixed as curl does: `*` spate, `>` sent, `<` received), or
/// why it failed, as far as it came.
pub fn exchange(plan: &Plan, script: Option<&Loaded>) -> Result<String, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut out = String::new();
    let first = First::of(plan, script).map_err(|e| format!("* {}\n", term(&e)))?;
    // Each step of an MCP handshake within the limit of one request.
    let steps = match &first {
        First::Mcp(..) => 4,
        _ => 1,
    };
    let limit = (plan.connect_timeout + plan.timeout) * steps;
    let r = rt.block_on(async {
        match tokio::time::timeout(limit, run(plan, first, &mut out)).await {
            Ok(r) => r,
            Err(_) => Err(format!("no complete answer within {limit:?}")),
        }
    });
    match r {
        Ok(()) => Ok(out),
        Err(e) => Err(format!("{out}* {}\n", term(&e))),
    }
}

async fn run(plan: &Plan, first: First, out: &mut String) -> Result<(), String> {
    let endpoint = plan
        .route
        .resolve(&plan.target)
        .map_err(|e| e.to_string())?;
    let entry;
    let (plan, sent) = match first {
        First::Plan => (plan, Sent::Plan),
        First::Entry(e, what) => {
            let _ = writeln!(out, "{what}");
            entry = e;
            (&*entry, Sent::Plan)
        }
        First::Bytes(bytes, what) => {
            let _ = writeln!(out, "{what}");
            (plan, Sent::Written(bytes))
        }
        // A call of the stateless revision over HTTP/2 or HTTP/3 goes as the run's do.
        First::Mcp(prepared, call)
            if !prepared.has_sessions() && lane_choice(plan) != LaneChoice::Http1 =>
        {
            let _ = writeln!(
                out,
                "* MCP {} ({}): the first call",
                prepared.transport, prepared.version
            );
            entry = call;
            (&*entry, Sent::Plan)
        }
        First::Mcp(prepared, call) => {
            let call = request::h1_bytes(&call).to_vec();
            return mcp::show(plan, &endpoint, &prepared, &call, out).await;
        }
    };
    if lane_choice(plan) == LaneChoice::Http3 {
        let request = sent.h3(plan)?;
        if plan.alt_svc {
            let followed = crate::alt_svc::follow_async(plan, &endpoint).await?;
            let _ = writeln!(
                out,
                "* Alt-Svc over TCP: {}",
                followed.alternative.describe()
            );
            return h3(plan, &followed.endpoint, request, out).await.map(drop);
        }
        return h3(plan, &endpoint, request, out).await.map(drop);
    }
    let (stream, alpn_h2) = connect(plan, &endpoint, out).await?;
    match lane_choice(plan) {
        LaneChoice::Http2 => h2(plan, sent.h2(plan)?, stream, out).await.map(drop),
        LaneChoice::Alpn if alpn_h2 => h2(plan, sent.h2(plan)?, stream, out).await.map(drop),
        _ => h1(stream, &sent.h1(plan), out).await.map(drop),
    }
}

/// What `-v` read of an HTTP/2 or HTTP/3 answer: its status and fields.
struct Fields {
    status: u16,
    fields: Vec<(String, String)>,
}

impl Fields {
    fn of(status: u16, headers: &http::HeaderMap) -> Fields {
        let fields = headers
            .iter()
            .map(|(n, v)| (n.to_string(), String::from_utf8_lossy(v.as_bytes()).into()))
            .collect();
        Fields { status, fields }
    }

    /// The value of field `name` (lower case), if the answer has it.
    fn header(&self, name: &str) -> Option<String> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }
}

/// A connection made as the run's are (a proxy's tunnel, TLS), said on `out`; with TLS, whether
/// ALPN chose HTTP/2.
async fn connect(
    plan: &Plan,
    endpoint: &Endpoint,
    out: &mut String,
) -> Result<(Stream, bool), String> {
    let tls = tls_client(plan).map_err(|e| e.to_string())?;
    let tunnel = request::tunnel_bytes(plan);
    let mut said = Said {
        out,
        plan,
        endpoint,
    };
    match net::dial(endpoint, 0, tunnel.as_deref(), tls.as_ref(), &mut said).await {
        Ok(d) => Ok((d.stream, d.h2)),
        Err(e @ net::DialError::Connect(_)) => {
            Err(format!("cannot connect to {}: {e}", endpoint.describe()))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// `-v`'s watch over a dial: a line for each step done.
struct Said<'a> {
    out: &'a mut String,
    plan: &'a Plan,
    endpoint: &'a Endpoint,
}

impl net::Watch for Said<'_> {
    fn done(&mut self, step: net::Step, _: std::time::Duration) {
        let _ = match step {
            net::Step::Connect => writeln!(self.out, "* connected to {}", self.endpoint.describe()),
            net::Step::Tunnel => writeln!(
                self.out,
                "* the proxy opened a tunnel to {}",
                self.plan.target.authority()
            ),
            net::Step::Tls => writeln!(
                self.out,
                "* TLS handshake done (certificate {})",
                match self.plan.tls.insecure {
                    true => "NOT verified: --insecure",
                    false => "verified",
                }
            ),
        };
    }
}

/// A received body's first bytes, as `shown_body` shows them.
fn printable(bytes: &[u8]) -> String {
    shown_body(bytes, "< ")
}

/// `bytes` with bytes that are not printable ASCII as `\xNN`, at most `BODY_SHOWN` of them,
/// each line after the first starting with `prefix`.
fn shown_body(bytes: &[u8], prefix: &str) -> String {
    let mut s = String::new();
    let bytes = &bytes[..bytes.len().min(BODY_SHOWN)];
    let end = bytes
        .iter()
        .rposition(|&b| b != b'\n' && b != b'\r')
        .map_or(0, |i| i + 1);
    let bytes = &bytes[..end];
    let mut it = bytes.iter().peekable();
    while let Some(&b) = it.next() {
        match b {
            b'\r' if it.peek() == Some(&&b'\n') => {}
            b'\n' => {
                s.push('\n');
                s.push_str(prefix);
            }
            b' '..=b'~' => s.push(char::from(b)),
            _ => {
                let _ = write!(s, "\\x{b:02x}");
            }
        }
    }
    s
}

/// One header line as shown: a secret's value masked, the rest escaped for the terminal.
fn shown(name: &str, value: &str) -> String {
    match is_sensitive(name) {
        true => format!("{}: {MASK}", term(name)),
        false => format!("{}: {}", term(name), term(value)),
    }
}

/// A message head's lines, each after `prefix`, secrets masked, ending with the bare prefix
/// for the blank line that ends a head.
fn head_lines(head: &[u8], prefix: &str, out: &mut String) {
    let text = String::from_utf8_lossy(head);
    for line in text.trim_end_matches("\r\n").split("\r\n") {
        let line = match line.split_once(": ") {
            Some((n, v)) => shown(n, v),
            None => term(line).to_string(),
        };
        let _ = writeln!(out, "{prefix}{line}");
    }
    let _ = writeln!(out, "{}", prefix.trim_end());
}

/// An HTTP/1.1 response's head and the bytes that came after it in the same reads.
struct Heard {
    /// The head, and the bytes read after it.
    answered: Answered,
    /// The connection, for what the server sends next on it.
    stream: Stream,
}

impl Heard {
    /// The value of header `name`, if the head has it.
    fn header(&self, name: &str) -> Option<String> {
        self.answered.values(name).into_iter().next()
    }

    fn status(&self) -> Option<u16> {
        self.answered.status()
    }

    fn rest(&self) -> &[u8] {
        &self.answered.rest
    }

    /// The body's first bytes as they came, their chunked framing (if any) undone as far as it
    /// came.
    fn body_shown(&self) -> Vec<u8> {
        if !self.chunked() {
            return self.rest().to_vec();
        }
        let mut body = Payload(Vec::new());
        // A framing error ends what is shown where it began.
        let _ = crate::proto::h1::Chunked::new().decode_to(self.rest(), &mut body);
        body.0
    }

    fn chunked(&self) -> bool {
        self.header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    }

    /// Whether a body follows the head, for the request `sent`.
    fn has_body(&self, sent: &[u8]) -> bool {
        let no_body = sent.starts_with(b"HEAD ")
            || matches!(self.status(), Some(100..=199 | 204 | 304))
            || self.header("content-length").as_deref() == Some("0");
        !no_body
    }
}

/// A body's payload, collected from a chunked decoder.
struct Payload(Vec<u8>);

impl crate::proto::Events for Payload {
    fn data(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
}

/// Sends `bytes` (one HTTP/1.1 request) on `stream` and reads the response's head, each shown.
async fn h1(mut stream: Stream, bytes: &[u8], out: &mut String) -> Result<Heard, String> {
    let head_end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(bytes.len(), |i| i + 4);
    head_lines(&bytes[..head_end], "> ", out);
    if head_end < bytes.len() {
        let body = &bytes[head_end..];
        let _ = writeln!(out, "> ({} bytes of body)", body.len());
        let _ = writeln!(out, "> {}", shown_body(body, "> "));
    }
    let answered = crate::proto::h1::look::answer_head(&mut stream, bytes).await?;
    head_lines(&answered.head, "< ", out);
    let mut heard = Heard { answered, stream };
    // A body that did not come with the head: its first bytes, if they come soon.
    if heard.rest().is_empty() && heard.has_body(bytes) {
        let mut buf = [0u8; 4096];
        if let Ok(Ok(n)) = tokio::time::timeout(BODY_WAIT, heard.stream.read(&mut buf)).await {
            heard.answered.rest.extend_from_slice(&buf[..n]);
        }
    }
    let body = heard.body_shown();
    if !body.is_empty() {
        let _ = writeln!(out, "< {}", printable(&body));
    }
    Ok(heard)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_and_bytes_escaped() {
        assert_eq!(shown("Authorization", "Basic dTpw"), "Authorization: ***");
        assert_eq!(shown("x-api", "v"), "x-api: v");
        assert_eq!(printable(b"ok\n\x00\xff"), "ok\n< \\x00\\xff");
        assert_eq!(printable(&[b'a'; 1000]).len(), BODY_SHOWN);
        assert_eq!(
            printable(b"hello\n"),
            "hello",
            "a last line break is not a line"
        );
        assert_eq!(
            printable(b"event: m\r\ndata: 1\r\n\r\n"),
            "event: m\n< data: 1"
        );
        let mut out = String::new();
        head_lines(b"GET / HTTP/1.1\r\nCookie: a=b\r\n\r\n", "> ", &mut out);
        assert_eq!(out, "> GET / HTTP/1.1\n> Cookie: ***\n>\n");
    }
}
