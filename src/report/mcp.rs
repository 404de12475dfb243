//! The MCP section of the text report (`spate mcp`): the transport, the protocol revision and
//! the server, then a row per tool: its calls by outcome, its rate, the percentiles of its
//! answered calls and the notifications before each answer. Rendered from a `Summary` like the
//! rest of the report.

use std::fmt::Write as _;

use crate::numbers::{count, per_second as rate};
use crate::stats::Summary;

pub(super) fn section(o: &mut String, s: &Summary) -> std::fmt::Result {
    let Some(m) = &s.mcp else {
        return Ok(());
    };
    let server = m
        .server
        .as_deref()
        .map_or_else(String::new, |n| format!(", server {n}"));
    writeln!(
        o,
        "\nPer tool (MCP {}, {}{server})",
        m.protocol_version, m.transport
    )?;
    if m.sessions {
        let t = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |x| format!("{x:.2} ms"));
        let expired: u64 = m.tools.iter().map(|r| r.sessions_expired).sum();
        let mode = m.session.as_deref().unwrap_or("per-connection");
        let ended = match mode {
            "per-request" => format!(", {} ended with DELETE", count(m.sessions_ended)),
            _ => String::new(),
        };
        writeln!(
            o,
            "  sessions ({mode}): {} handshakes (p50 {}, p99 {}, max {}), {} expired{ended}",
            count(m.handshakes),
            t(m.handshake_p50_ms),
            t(m.handshake_p99_ms),
            t(m.handshake_max_ms),
            count(expired)
        )?;
    }
    writeln!(
        o,
        "  {:>8} {:>8} {:>6} {:>6} {:>6} {:>6} {:>6} {:>9} {:>10} {:>10} {:>10} {:>10} {:>6}  tool",
        "calls",
        "ok",
        "isErr",
        "rpc",
        "proto",
        "http",
        "other",
        "calls/s",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "notes"
    )?;
    for r in &m.tools {
        let t = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |x| format!("{x:.2} ms"));
        writeln!(
            o,
            "  {:>8} {:>8} {:>6} {:>6} {:>6} {:>6} {:>6} {:>9} {:>10} {:>10} {:>10} {:>10} {:>6}  {}",
            count(r.calls),
            count(r.succeeded),
            count(r.tool_errors),
            count(r.jsonrpc_errors),
            count(r.protocol_errors),
            count(r.http_errors),
            count(r.other_failures),
            rate(r.calls_per_s),
            t(r.p50_ms),
            t(r.p90_ms),
            t(r.p99_ms),
            t(r.p999_ms),
            r.notifications_per_call
                .map_or_else(|| "-".to_owned(), |n| format!("{n:.1}")),
            r.tool
        )?;
    }
    writeln!(
        o,
        "  ok: a result without isError; isErr: isError (or input asked for); rpc: a JSON-RPC\n  \
         error; proto: no valid answer with the call's id; notes: notifications per answer.\n  \
         p50 .. p99.9: every answered call, failed ones too."
    )
}
