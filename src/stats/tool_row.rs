//! `spate mcp`'s rows in the result: for each tool (or other measured call), its calls, what
//! became of them by class, the rate, the percentiles of the successful ones and the
//! notifications that came before the answers; and what the probe learnt of the server. Facts
//! only, from what the load threads recorded by row.

use serde::{Deserialize, Serialize};

use super::{EntryStats, Failure};
use crate::calls::Prepared;

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// The MCP section of a result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct McpSummary {
    /// The transport the calls went over (`streamable-http`).
    pub transport: String,
    /// The protocol revision the calls carried and the server accepted.
    pub protocol_version: String,
    /// The server's name and version, as it gave them.
    pub server: Option<String>,
    /// The calls went in sessions opened with a handshake (revisions before 2026-07-28).
    pub sessions: bool,
    /// How calls and sessions went together (`per-connection`, `shared`, `per-request`); none
    /// without sessions.
    pub session: Option<String>,
    /// Handshakes made (one per connection opened, and one after each expired session; one
    /// for the run with a shared session; one per call with a session per request), and
    /// how long they took, ms: `initialize` sent to `notifications/initialized` answered.
    pub handshakes: u64,
    pub handshake_p50_ms: Option<f64>,
    pub handshake_p99_ms: Option<f64>,
    pub handshake_max_ms: Option<f64>,
    /// `--session per-request`: sessions the server ended when asked (DELETE answered 2xx).
    pub sessions_ended: u64,
    pub tools: Vec<ToolRow>,
}

/// One tool's calls (or another method's: `tools/list`, `resources/read URI`, `prompts/get
/// NAME`), or "other" for rows past the first `request_list::MAX_TRACKED`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolRow {
    pub tool: String,
    /// Calls accounted for: answered, failed or with an error status.
    pub calls: u64,
    /// A result without `isError` (and a status below 400).
    pub succeeded: u64,
    /// The tool reported an error (`isError: true`) or asked for input.
    pub tool_errors: u64,
    /// A JSON-RPC error object.
    pub jsonrpc_errors: u64,
    /// Not JSON-RPC, another id, or no answer in the response.
    pub protocol_errors: u64,
    /// A response with a status of 400 or above.
    pub http_errors: u64,
    /// The server no longer knew the call's session (404); a new one was opened.
    pub sessions_expired: u64,
    /// Failures of any other class (timeouts, closes, connects).
    pub other_failures: u64,
    /// Calls per second over the measured window.
    pub calls_per_s: f64,
    /// Latency of every answered call, ms (succeeded, a tool's or JSON-RPC error, an answer
    /// spate cannot read, an error status): from the request's start to the read that brought
    /// its response. A failing tool's calls have a latency too.
    pub p50_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub p999_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// Notifications (progress, log messages) before the answer, per answered call.
    pub notifications_per_call: Option<f64>,
    /// Of those, progress notifications, per answered call.
    pub progress_per_call: Option<f64>,
}

impl McpSummary {
    pub(super) fn of(
        m: &Prepared,
        per_entry: &[EntryStats],
        handshakes: Option<&EntryStats>,
        sessions_ended: u64,
        elapsed_s: f64,
    ) -> McpSummary {
        use crate::request_list::MAX_TRACKED;
        let none = EntryStats::default();
        let shown = m.labels.len().min(MAX_TRACKED);
        let mut tools: Vec<ToolRow> = (0..shown)
            .map(|i| {
                ToolRow::of(
                    m.labels[i].clone(),
                    per_entry.get(i).unwrap_or(&none),
                    elapsed_s,
                )
            })
            .collect();
        if m.labels.len() > MAX_TRACKED {
            let label = format!("other ({} calls)", m.labels.len() - MAX_TRACKED);
            tools.push(ToolRow::of(
                label,
                per_entry.get(MAX_TRACKED).unwrap_or(&none),
                elapsed_s,
            ));
        }
        let mut h = handshakes.cloned().unwrap_or_default();
        if let Some(ns) = m.shared_handshake_ns {
            h.completed(200, ns);
        }
        let q = |p: f64| (!h.latency.is_empty()).then(|| ms(h.latency.value_at_quantile(p)));
        let sessions = m.handshake.is_some() || m.shared_handshake_ns.is_some();
        McpSummary {
            transport: m.transport.clone(),
            protocol_version: m.version.clone(),
            server: m.server.clone(),
            sessions,
            session: sessions.then(|| m.session.name().to_string()),
            handshakes: h.completed,
            handshake_p50_ms: q(0.5),
            handshake_p99_ms: q(0.99),
            handshake_max_ms: (!h.latency.is_empty()).then(|| ms(h.latency.max())),
            sessions_ended,
            tools,
        }
    }
}

impl ToolRow {
    fn of(tool: String, e: &EntryStats, elapsed_s: f64) -> ToolRow {
        let class = |c: Failure| {
            e.failures
                .iter()
                .find(|(k, _)| *k == c)
                .map_or(0, |(_, n)| *n)
        };
        let http_errors: u64 = e
            .status
            .iter()
            .filter(|(c, _)| *c >= 400)
            .map(|(_, n)| n)
            .sum();
        let (tool_errors, jsonrpc_errors, protocol_errors, sessions_expired) = (
            class(Failure::ToolError),
            class(Failure::JsonRpc),
            class(Failure::Protocol),
            class(Failure::SessionExpired),
        );
        let calls = e.completed + e.failed;
        let answered = e.completed + tool_errors + jsonrpc_errors + protocol_errors;
        let q = |p: f64| (!e.latency.is_empty()).then(|| ms(e.latency.value_at_quantile(p)));
        let per_call = |n: u64| (answered > 0).then(|| n as f64 / answered as f64);
        ToolRow {
            tool,
            calls,
            succeeded: e.completed - http_errors,
            tool_errors,
            jsonrpc_errors,
            protocol_errors,
            http_errors,
            sessions_expired,
            other_failures: e.failed
                - tool_errors
                - jsonrpc_errors
                - protocol_errors
                - sessions_expired,
            calls_per_s: match elapsed_s > 0.0 {
                true => calls as f64 / elapsed_s,
                false => 0.0,
            },
            p50_ms: q(0.5),
            p90_ms: q(0.9),
            p99_ms: q(0.99),
            p999_ms: q(0.999),
            max_ms: (!e.latency.is_empty()).then(|| ms(e.latency.max())),
            notifications_per_call: per_call(e.notifications),
            progress_per_call: per_call(e.progress),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_splits_its_calls_by_what_became_of_them() {
        let mut e = EntryStats::default();
        e.completed(200, 2_000_000);
        e.completed(200, 4_000_000);
        e.completed(503, 1_000_000);
        e.failed(Failure::ToolError);
        e.failed(Failure::JsonRpc);
        e.failed(Failure::Timeout);
        e.noted(3, 2);
        let m = Prepared {
            labels: vec!["add".into()],
            ..Default::default()
        };
        let s = McpSummary::of(&m, &[e], None, 0, 2.0);
        let r = &s.tools[0];
        assert_eq!(r.tool, "add");
        assert_eq!((r.calls, r.succeeded, r.http_errors), (6, 2, 1));
        assert_eq!(
            (r.tool_errors, r.jsonrpc_errors, r.other_failures),
            (1, 1, 1)
        );
        assert_eq!(r.calls_per_s, 3.0);
        // Answered: three responses and the two judged failures.
        assert_eq!(r.notifications_per_call, Some(0.6));
        assert!(r.p50_ms.is_some());
    }
}
