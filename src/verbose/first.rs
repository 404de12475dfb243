//! What a run sends first, as far as it is known before connecting (a request list's first
//! entry, a script's first `request()`, an MCP call after its handshake, or the plan's one
//! request), in the form of the protocol `-v` speaks (`Sent`), and `--dry-run`, which shows it
//! without a connection.

use std::fmt::Write as _;

use super::{head_lines, shown_body};
use crate::escape::term;
use crate::plan::Plan;
use crate::request;
use crate::script::Loaded;

/// What the run sends first, as far as it is known before connecting.
pub(super) enum First {
    /// The plan's one request.
    Plan,
    /// A request list's first entry: the plan of its request, sent as the run's would be (in
    /// the protocol the run speaks), with a line that says which.
    Entry(Box<Plan>, String),
    /// A script's first `request()`: these bytes, with a line that says which.
    Bytes(Vec<u8>, String),
    /// `spate mcp`: the first call (its plan), after the handshake the server's revision needs.
    Mcp(std::sync::Arc<crate::mcp::Prepared>, Box<Plan>),
}

impl First {
    pub(super) fn of(plan: &Plan, script: Option<&Loaded>) -> Result<First, String> {
        if let Some(l) = &plan.list {
            let i = l.first();
            let entry = plan.for_entry(l, i);
            return Ok(match &l.mcp {
                Some(m) => First::Mcp(m.clone(), Box::new(entry)),
                None => First::Entry(
                    Box::new(entry),
                    format!(
                        "* the list's first request ({} of {})",
                        i + 1,
                        l.entries.len()
                    ),
                ),
            });
        }
        match script {
            Some(s) if s.defines.request => {
                let bytes = crate::script::first_request(plan, s, plan.timeout)
                    .map_err(|e| format!("--script {}: {e}", s.name))?;
                Ok(First::Bytes(
                    bytes,
                    "* the script's first request(), made in a state of its own".into(),
                ))
            }
            _ => Ok(First::Plan),
        }
    }
}

/// What `-v` sends: the plan's request, or the bytes a script's `request()` wrote, in the
/// form of the protocol the connection speaks (as the run reads them back).
pub(super) enum Sent {
    Plan,
    Written(Vec<u8>),
}

impl Sent {
    pub(super) fn h1(&self, plan: &Plan) -> Vec<u8> {
        match self {
            Sent::Plan => request::h1_bytes(plan).to_vec(),
            Sent::Written(bytes) => bytes.clone(),
        }
    }

    fn written(bytes: &[u8], plan: &Plan) -> Result<request::written::Written, String> {
        let t = &plan.target;
        request::written::read(bytes, t.scheme(), &t.authority()).map_err(|e| {
            format!("--script: request() made a request that HTTP/2 and HTTP/3 cannot carry: {e}")
        })
    }

    pub(super) fn h2(&self, plan: &Plan) -> Result<crate::proto::h2::Prepared, String> {
        match self {
            Sent::Plan => request::h2_prepared(plan),
            Sent::Written(bytes) => Ok(Sent::written(bytes, plan)?.h2()),
        }
    }

    pub(super) fn h3(&self, plan: &Plan) -> Result<crate::proto::h3::Request, String> {
        match self {
            Sent::Plan => request::h3_request(plan),
            Sent::Written(bytes) => Ok(Sent::written(bytes, plan)?.h3()),
        }
    }
}

/// `--dry-run`: what `plan` would run, in the report header's words, and the first request it
/// would send as `-v` shows it (secrets masked), with no connection made. `Err`: why there is
/// none (a script's `request()` failed).
pub fn dry_run(plan: &Plan, script: Option<&Loaded>) -> Result<String, String> {
    let mut out = String::from("spate --dry-run: the command line is valid; nothing was sent\n");
    for line in crate::report::plan_words(plan) {
        let _ = writeln!(out, "  {}", term(&line));
    }
    let bytes = match First::of(plan, script)? {
        First::Plan => {
            let _ = writeln!(out, "The request, as HTTP/1.1 writes it:");
            request::h1_bytes(plan).to_vec()
        }
        First::Entry(entry, what) => {
            let _ = writeln!(out, "{}, as HTTP/1.1 writes it:", sentence(&what));
            request::h1_bytes(&entry).to_vec()
        }
        First::Bytes(bytes, what) => {
            let _ = writeln!(out, "{}:", sentence(&what));
            bytes
        }
        First::Mcp(_, call) => {
            let call = request::h1_bytes(&call).to_vec();
            let _ = writeln!(
                out,
                "The first call, before the server's revision is known:"
            );
            call
        }
    };
    let head_end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(bytes.len(), |i| i + 4);
    head_lines(&bytes[..head_end], "> ", &mut out);
    if head_end < bytes.len() {
        let body = &bytes[head_end..];
        let _ = writeln!(out, "> ({} bytes of body)", body.len());
        let _ = writeln!(out, "> {}", shown_body(body, "> "));
    }
    Ok(out)
}

/// `-v`'s line as the start of a sentence: without its `* `, capitalised.
fn sentence(line: &str) -> String {
    let line = line.trim_start_matches("* ");
    let mut c = line.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}
