//! Before a run, and for `spate mcp --list`: one connection over the run's route
//! (`client`) that asks the server for its tools with the requests the run will send, one at a
//! time, in the revision the server takes. Not on the load path; must not touch a run's
//! statistics.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::call::{Call, Method};
use super::client::{Asked, ask, connect};
use super::wire;
use crate::plan::Plan;
use crate::proto::h1::ReadSpace;

/// One tool the server lists.
#[derive(Debug, Clone)]
pub struct Tool {
    pub name: String,
    pub description: Option<String>,
    /// Its `inputSchema`.
    pub schema: Value,
}

/// What the server said about itself and its tools.
#[derive(Debug, Clone)]
pub struct Listing {
    pub tools: Vec<Tool>,
    /// The protocol revision the requests carried and the server accepted.
    pub version: String,
    /// The server's name and version, when it gave them.
    pub server: Option<String>,
    /// The server speaks a revision with a handshake: each connection opens a session.
    pub sessions: bool,
    /// The transport the server was reached with.
    pub transport: Transport,
}

/// Which transport to use: Streamable HTTP, the legacy HTTP+SSE one, or the first the server
/// takes (Streamable HTTP, then the legacy one, as the specification's compatibility rules say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Auto,
    Streamable,
    Sse,
}

/// Why the server's tools could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// No connection, or no answer in time.
    #[error("{0}")]
    Unreachable(String),
    /// The server answered, but not as an MCP server of a revision spate speaks.
    #[error("{0}")]
    NotMcp(String),
}

/// Which revision to speak: the stateless one, one with a handshake, or the first the server
/// takes (the stateless one, then a handshake, as the specification's compatibility rules say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    Auto,
    Stateless,
    /// A handshake that asks for this revision.
    Handshake(&'static str),
}

/// The most pages of `tools/list` followed.
pub(super) const MAX_PAGES: u64 = 100;

/// Lists the server's tools in the revision `era` asks for, over `transport`, following
/// `nextCursor`.
pub fn list_tools(plan: &Plan, era: Era, transport: Transport) -> Result<Listing, ProbeError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ProbeError::Unreachable(format!("cannot start: {e}")))?;
    rt.block_on(async {
        let legacy_asks = match era {
            Era::Handshake(v) => v,
            _ => super::legacy::VERSION,
        };
        if transport == Transport::Sse {
            return super::probe_sse::list_tools(plan, legacy_asks).await;
        }
        let mut refused = None;
        if !matches!(era, Era::Handshake(_)) {
            match stateless(plan).await {
                Ok(l) => return Ok(l),
                Err(Refusal::Other(e)) => return Err(e),
                Err(Refusal::Older(e)) if era == Era::Stateless => return Err(e),
                Err(Refusal::Older(e)) => refused = Some(e),
            }
        }
        let asked = match era {
            Era::Handshake(v) => v,
            _ => super::session::ASKED,
        };
        let then = match with_handshake(plan, asked).await {
            Ok(l) => return Ok(l),
            Err(ProbeError::NotMcp(then)) => then,
            Err(e) => return Err(e),
        };
        let last = match transport {
            Transport::Auto => match super::probe_sse::list_tools(plan, legacy_asks).await {
                Ok(l) => return Ok(l),
                Err(e) => Some(e),
            },
            _ => None,
        };
        // No transport or revision: say what each answered.
        let mut why: Vec<String> = refused.map(|e| e.to_string()).into_iter().collect();
        why.push(then);
        why.extend(last.map(|e| e.to_string()));
        let clauses: Vec<&str> = why
            .iter()
            .map(|w| {
                w.trim_start_matches("the server ")
                    .trim_start_matches("it ")
            })
            .collect();
        let tried = match transport {
            Transport::Auto => "Streamable HTTP or the legacy HTTP+SSE transport",
            _ => "Streamable HTTP",
        };
        Err(ProbeError::NotMcp(format!(
            "the server {}: not an MCP endpoint of a revision spate speaks over {tried}",
            clauses.join("; then ")
        )))
    })
}

/// Why the stateless probe failed: the server may speak an older revision, or not.
enum Refusal {
    /// A 400, 404 or 405 without a JSON-RPC error of the stateless revision.
    Older(ProbeError),
    Other(ProbeError),
}

async fn stateless(plan: &Plan) -> Result<Listing, Refusal> {
    let mut conn = None;
    let mut space = ReadSpace::new(64 << 10);
    let mut pages = Pages::default();
    for page in 1..=MAX_PAGES {
        let call = Call {
            method: Method::ListTools,
            weight: 1,
        };
        let (headers, body) = wire::request(&call, page, None, false);
        let body = with_cursor(&body, pages.cursor.as_ref());
        let request = super::session::post(plan, headers, body);
        let (result, keep) = match ask(plan, &mut conn, &mut space, &request, page).await {
            Ok(r) => r,
            Err(Asked::Failed(e)) => return Err(Refusal::Other(e)),
            Err(Asked::Status {
                status,
                modern,
                why,
            }) => {
                let e = ProbeError::NotMcp(why);
                return Err(match [400, 404, 405].contains(&status) && !modern {
                    true => Refusal::Older(e),
                    false => Refusal::Other(e),
                });
            }
        };
        if !keep {
            conn = None;
        }
        pages.server = pages.server.take().or_else(|| {
            result
                .get("_meta")
                .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
                .and_then(name_of)
        });
        if !pages.add(&result).map_err(Refusal::Other)? {
            break;
        }
    }
    Ok(Listing {
        tools: pages.tools,
        version: wire::MODERN.into(),
        server: pages.server,
        sessions: false,
        transport: Transport::Streamable,
    })
}

/// The revisions with a handshake: one session, its tools listed, then ended (DELETE).
async fn with_handshake(plan: &Plan, asked: &str) -> Result<Listing, ProbeError> {
    let mut space = ReadSpace::new(64 << 10);
    let mut conn = connect(plan).await?;
    let init = super::session::initialize_request(plan, asked);
    // The version of its header is the one asked for; a server that chose another keeps the
    // session all the same (the run's requests carry the chosen one).
    let initialized = super::session::initialized_request(plan, asked);
    let session = tokio::time::timeout(
        plan.timeout.max(Duration::from_secs(1)),
        super::session::handshake(&mut conn, &init, &initialized, &mut space),
    )
    .await
    .map_err(|_| ProbeError::Unreachable("no answer to initialize in time".into()))?
    .map_err(|f| ProbeError::NotMcp(f.to_string()))?;
    let headers = super::session::session_headers(&session);
    let mut conn = Some(conn);
    let mut pages = Pages::default();
    for page in 1..=MAX_PAGES {
        let mut body = json!({"jsonrpc": "2.0", "id": page, "method": "tools/list", "params": {}});
        if let Some(c) = &pages.cursor {
            body["params"]["cursor"] = c.clone();
        }
        let request = super::session::post(
            plan,
            headers.clone(),
            serde_json::to_vec(&body).expect("JSON serializes"),
        );
        let (result, keep) = match ask(plan, &mut conn, &mut space, &request, page).await {
            Ok(r) => r,
            Err(Asked::Failed(e)) => return Err(e),
            Err(Asked::Status { why, .. }) => return Err(ProbeError::NotMcp(why)),
        };
        if !keep {
            conn = None;
        }
        if !pages.add(&result)? {
            break;
        }
    }
    // The probe's session is not the run's: end it, as a client should. An answer is not
    // needed.
    if let Some(c) = conn.as_mut() {
        let delete = super::session::with_session(
            &super::session::delete_request(plan, &session.version),
            &session,
        );
        let _ = tokio::time::timeout(Duration::from_secs(1), super::session::end(c, &delete)).await;
    }
    Ok(Listing {
        tools: pages.tools,
        version: session.version,
        server: session.server,
        sessions: true,
        transport: Transport::Streamable,
    })
}

/// The tools of the pages so far, the cursor of the next and the server's name.
#[derive(Default)]
pub(super) struct Pages {
    pub tools: Vec<Tool>,
    pub cursor: Option<Value>,
    pub server: Option<String>,
}

impl Pages {
    /// Adds a page's tools; true if another page follows.
    pub fn add(&mut self, result: &Map<String, Value>) -> Result<bool, ProbeError> {
        let Some(list) = result.get("tools").and_then(Value::as_array) else {
            return Err(ProbeError::NotMcp(
                "the answer to tools/list has no tools array".into(),
            ));
        };
        for t in list {
            let Some(name) = t.get("name").and_then(Value::as_str) else {
                continue;
            };
            self.tools.push(Tool {
                name: name.to_string(),
                description: t
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                schema: t.get("inputSchema").cloned().unwrap_or(json!({})),
            });
        }
        self.cursor = result.get("nextCursor").filter(|c| !c.is_null()).cloned();
        Ok(self.cursor.is_some())
    }
}

fn with_cursor(body: &[u8], cursor: Option<&Value>) -> Vec<u8> {
    let Some(cursor) = cursor else {
        return body.to_vec();
    };
    let mut v: Value = serde_json::from_slice(body).expect("spate's own request is JSON");
    v["params"]["cursor"] = cursor.clone();
    serde_json::to_vec(&v).expect("a JSON value serializes")
}

/// "name version" of a `serverInfo` object.
pub(super) fn name_of(info: &Value) -> Option<String> {
    let name = info.get("name").and_then(Value::as_str)?;
    match info.get("version").and_then(Value::as_str) {
        Some(v) if !v.is_empty() => Some(format!("{name} {v}")),
        _ => Some(name.to_string()),
    }
}
