//! From the calls the user named and the tools the server listed to the request list the engine
//! sends: each call's request built once (headers and body), its row in the report, and the
//! order that gives each call its weight. Refuses a tool the server does not have, and one whose
//! definition the transport's rules exclude. Must not know sockets.

use std::sync::Arc;

use serde_json::json;

use super::call::{self, Call, Method};
use super::legacy;
use super::probe::{Listing, Transport};
use super::{Prepared, SessionMode, id_of, wire};
use crate::escape::{term, term_str};
use crate::request_list::{Entry, Order, RequestList};

/// The name of the transport the requests use, as the report gives it.
pub const STREAMABLE_HTTP: &str = "streamable-http";

/// How a run's calls go with sessions: the mode, and with `--session shared` the run's session.
#[derive(Debug, Clone, Default)]
pub struct Sessions {
    pub mode: SessionMode,
    pub shared: Option<super::shared::Opened>,
}

/// The request list of `calls` against the server `listing` describes, at `target`;
/// `progress`: each call asks for progress notifications.
pub fn list(
    calls: &[Call],
    listing: &Listing,
    plan: &crate::plan::Plan,
    order: Order,
    progress: bool,
    sessions: &Sessions,
) -> Result<RequestList, String> {
    super::shared::check(sessions.mode, listing)?;
    // Several slots' calls in one session need ids of their own.
    let multiplexed =
        listing.sessions && sessions.mode == SessionMode::PerConnection && plan.multiplexes();
    let slot_ids = sessions.shared.is_some() || multiplexed;
    let target = &plan.target;
    let mut entries = Vec::with_capacity(calls.len());
    let mut headers = Vec::with_capacity(calls.len());
    let mut rows = Vec::with_capacity(calls.len());
    let mut labels: Vec<String> = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let schema = match &c.method {
            Method::Tool { name, .. } => {
                let Some(tool) = listing.tools.iter().find(|t| t.name == *name) else {
                    return Err(no_such_tool(name, listing));
                };
                if let Err(why) = wire::mirrored(&tool.schema) {
                    return Err(format!(
                        "the server's definition of tool {name} breaks the transport's rules \
                         ({why}), so a client must not call it"
                    ));
                }
                Some(&tool.schema)
            }
            _ => None,
        };
        let id = match slot_ids {
            true => super::SHARED_IDS + i as u64,
            false => id_of(i),
        };
        let (mut h, body) = match listing.sessions {
            false => wire::request(c, id, schema, progress),
            true => wire::with_handshake(c, id, &listing.version, progress),
        };
        if listing.version == legacy::VERSION {
            // The header came with Streamable HTTP.
            h.retain(|(n, _)| n != "MCP-Protocol-Version");
        }
        if let Some(id) = sessions.shared.as_ref().and_then(|s| s.session.id.clone()) {
            h.push(("Mcp-Session-Id".into(), id));
        }
        let label = c.label();
        let row = match labels.iter().position(|l| *l == label) {
            Some(r) => r,
            None => {
                labels.push(label);
                labels.len() - 1
            }
        };
        rows.push(row as u16);
        headers.push(h);
        entries.push(Entry {
            method: Some("POST".into()),
            target: target.clone(),
            body: Some(body),
        });
    }
    let weights: Vec<u32> = calls.iter().map(|c| c.weight).collect();
    let schedule = call::schedule(&weights)?;
    let mut list = RequestList::new(entries, order).map_err(|e| e.0)?;
    list.mcp = Some(Arc::new(Prepared {
        headers,
        rows,
        labels,
        schedule: schedule.into(),
        transport: match listing.transport {
            Transport::Sse => legacy::TRANSPORT,
            _ => STREAMABLE_HTTP,
        }
        .into(),
        version: listing.version.clone(),
        server: listing.server.clone(),
        handshake: (listing.sessions && sessions.shared.is_none())
            .then(|| handshake(listing, plan)),
        session: sessions.mode,
        shared_handshake_ns: sessions.shared.as_ref().map(|s| s.took_ns),
        slot_ids,
    }));
    Ok(list)
}

/// The requests of each connection's handshake in the revision and over the transport the
/// server took.
fn handshake(listing: &Listing, plan: &crate::plan::Plan) -> super::Handshake {
    let initialize = super::session::initialize_request(plan, &listing.version);
    match listing.transport {
        Transport::Sse => super::Handshake {
            initialize,
            initialized: legacy::initialized_request(plan),
            listen: Some(legacy::listen_request(plan)),
            url: plan.target.url.clone(),
            delete: bytes::Bytes::new(),
        },
        _ => super::Handshake {
            initialize,
            initialized: super::session::initialized_request(plan, &listing.version),
            listen: None,
            url: plan.target.url.clone(),
            delete: super::session::delete_request(plan, &listing.version),
        },
    }
}

fn no_such_tool(name: &str, listing: &Listing) -> String {
    if let Some(why) = listing
        .unreadable
        .iter()
        .find(|u| u.starts_with(&format!("{name}: ")))
    {
        return format!("the server lists tool {name:?}, but spate cannot read it ({why})");
    }
    let names: Vec<&str> = listing
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .chain(listing.others.iter().map(String::as_str))
        .collect();
    let more = match listing.listed.saturating_sub(names.len()) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    match names.is_empty() {
        true => format!("the server has no tool named {name:?}: it lists no tools"),
        false => format!(
            "the server has no tool named {name:?} (it has: {}{more})",
            term(&names.join(", "))
        ),
    }
}

/// `spate mcp --list` as text: the server, then each tool with its description and input
/// schema, what the server wrote escaped for the terminal.
pub fn tools_text(listing: &Listing, url: &str) -> String {
    let mut o = format!(
        "{} at {url} (MCP {}, {}): {} tool{}\n",
        term(listing.server.as_deref().unwrap_or("MCP server")),
        term(&listing.version),
        match listing.transport {
            Transport::Sse => "HTTP+SSE",
            _ => "Streamable HTTP",
        },
        listing.listed,
        if listing.listed == 1 { "" } else { "s" }
    );
    for t in &listing.tools {
        o.push('\n');
        o.push_str(&term_str(&t.name));
        if let Some(d) = t
            .description
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
        {
            o.push_str("  ");
            o.push_str(&term_str(d.lines().next().unwrap_or_default()));
        }
        o.push_str("\n  input: ");
        o.push_str(&term_str(&t.schema.to_string()));
        o.push('\n');
    }
    for u in &listing.unreadable {
        o.push_str(&format!("\nnot shown, spate cannot read it: {}\n", term(u)));
    }
    o
}

/// `spate mcp --list --format json`: the same as one JSON object.
pub fn tools_json(listing: &Listing, url: &str) -> String {
    let tools: Vec<_> = listing
        .tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.schema}))
        .collect();
    let doc = json!({
        "url": url,
        "server": listing.server,
        "transport": match listing.transport {
            Transport::Sse => legacy::TRANSPORT,
            _ => STREAMABLE_HTTP,
        },
        "protocol_version": listing.version,
        "tools": tools,
        "unreadable": listing.unreadable,
    });
    format!(
        "{}\n",
        serde_json::to_string_pretty(&doc).expect("JSON serializes")
    )
}

#[cfg(test)]
mod tests {
    use super::super::probe::Tool;
    use super::*;

    fn listing() -> Listing {
        Listing {
            tools: vec![
                Tool {
                    name: "add".into(),
                    description: Some("Add.".into()),
                    schema: json!({"type": "object"}),
                },
                Tool {
                    name: "bad".into(),
                    description: None,
                    schema: json!({"properties": {"x": {"type": "number", "x-mcp-header": "X"}}}),
                },
            ],
            listed: 2,
            others: Vec::new(),
            unreadable: Vec::new(),
            version: wire::MODERN.into(),
            server: Some("s 1".into()),
            sessions: false,
            transport: Transport::Streamable,
        }
    }

    fn tool(name: &str, weight: u32) -> Call {
        Call {
            method: Method::Tool {
                name: name.into(),
                arguments: Default::default(),
            },
            weight,
        }
    }

    #[test]
    fn calls_become_requests_with_rows_and_a_schedule() {
        let target =
            crate::plan::Plan::new(crate::target::Target::parse("http://127.0.0.1:9/mcp").unwrap());
        let calls = [
            tool("add", 3),
            Call {
                method: Method::ListTools,
                weight: 1,
            },
            tool("add", 1),
        ];
        let none = Sessions::default();
        let l = list(&calls, &listing(), &target, Order::RoundRobin, false, &none).unwrap();
        let m = l.mcp.as_ref().unwrap();
        assert_eq!(l.entries.len(), 3);
        assert_eq!(m.rows, [0, 1, 0]);
        assert_eq!(m.labels, ["add", "tools/list"]);
        assert_eq!(m.schedule.len(), 5);
        let body: serde_json::Value =
            serde_json::from_slice(l.entries[2].body.as_ref().unwrap()).unwrap();
        assert_eq!(body["id"], id_of(2));
    }

    #[test]
    fn unknown_and_invalid_tools_are_refused_by_name() {
        let target =
            crate::plan::Plan::new(crate::target::Target::parse("http://127.0.0.1:9/mcp").unwrap());
        let e = list(
            &[tool("sub", 1)],
            &listing(),
            &target,
            Order::RoundRobin,
            false,
            &Sessions::default(),
        )
        .unwrap_err();
        assert!(
            e.contains("no tool named \"sub\" (it has: add, bad)"),
            "{e}"
        );
        let e = list(
            &[tool("bad", 1)],
            &listing(),
            &target,
            Order::RoundRobin,
            false,
            &Sessions::default(),
        )
        .unwrap_err();
        assert!(e.contains("breaks the transport's rules"), "{e}");
        // The stateless revision has no sessions to share.
        let shared = Sessions {
            mode: SessionMode::Shared,
            shared: None,
        };
        let e = list(
            &[tool("add", 1)],
            &listing(),
            &target,
            Order::RoundRobin,
            false,
            &shared,
        )
        .unwrap_err();
        assert!(e.contains("stateless revision"), "{e}");
    }

    #[test]
    fn the_tool_list_reads_as_text_and_json() {
        let t = tools_text(&listing(), "http://h/mcp");
        assert!(t.starts_with("s 1 at http://h/mcp (MCP 2026-07-28, Streamable HTTP): 2 tools\n"));
        assert!(t.contains("\nadd  Add.\n  input: {\"type\":\"object\"}\n"));
        let j: serde_json::Value = serde_json::from_str(&tools_json(&listing(), "u")).unwrap();
        assert_eq!(j["tools"][0]["name"], "add");
        assert_eq!(j["protocol_version"], "2026-07-28");
    }
}
