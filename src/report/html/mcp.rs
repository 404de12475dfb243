//! The page's Per tool section (`spate mcp`): the server and protocol, then a row per tool with
//! its calls by outcome, its rate, its percentiles and the notifications per answer. Every figure
//! names its field of the embedded JSON, as the other tables' do.

use super::tables::{Table, count_val, ms_val, val};
use crate::numbers::per_second;
use crate::report::Report;

/// The section's title note and body, if the run called an MCP server.
pub fn section(r: &Report) -> Option<(String, String)> {
    let m = r.run.mcp.as_ref()?;
    let mut tb = Table::new(
        "num",
        &[
            "tool",
            "calls",
            "succeeded",
            "tool errors",
            "JSON-RPC errors",
            "protocol",
            "status >= 400",
            "sessions expired",
            "other failures",
            "calls/s",
            "p50",
            "p90",
            "p99",
            "p99.9",
            "notifications per answer",
        ],
    );
    for (i, t) in m.tools.iter().enumerate() {
        let k = |field: &str| format!("mcp.tools.{i}.{field}");
        tb.row(
            &t.tool,
            &[
                count_val(&k("calls"), t.calls),
                count_val(&k("succeeded"), t.succeeded),
                count_val(&k("tool_errors"), t.tool_errors),
                count_val(&k("jsonrpc_errors"), t.jsonrpc_errors),
                count_val(&k("protocol_errors"), t.protocol_errors),
                count_val(&k("http_errors"), t.http_errors),
                count_val(&k("sessions_expired"), t.sessions_expired),
                count_val(&k("other_failures"), t.other_failures),
                val(&k("calls_per_s"), per_second(t.calls_per_s)),
                ms_val(&k("p50_ms"), t.p50_ms),
                ms_val(&k("p90_ms"), t.p90_ms),
                ms_val(&k("p99_ms"), t.p99_ms),
                ms_val(&k("p999_ms"), t.p999_ms),
                val(
                    &k("notifications_per_call"),
                    t.notifications_per_call
                        .map_or_else(|| "-".into(), |n| format!("{n:.2}")),
                ),
            ],
        );
    }
    let opened = match m.session.as_deref() {
        Some("shared") => "Every connection used one session, opened before the run",
        Some("per-request") => "Each call opened a session of its own",
        _ => "Each connection opened a session",
    };
    let sessions = match m.sessions {
        true => format!(
            " {opened}: {} handshakes, p50 {}.",
            m.handshakes,
            m.handshake_p50_ms
                .map_or_else(|| "-".into(), crate::numbers::millis)
        ),
        false => String::new(),
    };
    let note = format!(
        "MCP {} over {}{}.{sessions} A call succeeds with a result without isError; its latency ends at \
         the read that brought its JSON-RPC response. A row's percentiles are of every answered \
         call, those that failed (isError, a JSON-RPC error) too. Percentiles come from a histogram with two \
         significant digits.",
        m.protocol_version,
        m.transport,
        m.server
            .as_deref()
            .map_or_else(String::new, |s| format!(", server {s}"))
    );
    Some((note, tb.finish()))
}
