//! Before a run, and for `spate mcp --list`: one connection over the run's route (TCP or Unix
//! socket, proxy tunnel, TLS as the run's) that asks the server for its tools with the requests
//! the run will send, one at a time. Not on the load path; must not touch a run's statistics.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::call::{Call, Method};
use super::wire;
use crate::net::{self, Socket, Stream};
use crate::plan::Plan;
use crate::proto::h1::slow_lane::{self, Reached};
use crate::proto::h1::{Conn, ReadSpace};
use crate::proto::sse::{Item, Sse};
use crate::proto::{Events, Media};

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
    pub version: &'static str,
    /// `serverInfo`'s name and version, when it gave them.
    pub server: Option<String>,
}

/// Why the server's tools could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// No connection, or no answer in time.
    #[error("{0}")]
    Unreachable(String),
    /// The server answered, but not as an MCP server of the revision spate speaks.
    #[error("{0}")]
    NotMcp(String),
}

/// The most pages of `tools/list` followed.
const MAX_PAGES: u64 = 100;

/// The largest answer kept.
const MAX_BODY: usize = 16 << 20;

/// Lists the server's tools, following `nextCursor`.
pub fn list_tools(plan: &Plan) -> Result<Listing, ProbeError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ProbeError::Unreachable(format!("cannot start: {e}")))?;
    rt.block_on(async {
        let mut conn = None;
        let mut space = ReadSpace::new(64 << 10);
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        let mut server = None;
        for page in 1..=MAX_PAGES {
            let call = Call {
                method: Method::ListTools,
                weight: 1,
            };
            let (headers, body) = wire::request(&call, page, None, false);
            let body = match &cursor {
                None => body,
                Some(c) => with_cursor(&body, c),
            };
            let (result, keep) = ask(plan, &mut conn, &mut space, headers, body, page).await?;
            if !keep {
                conn = None;
            }
            if server.is_none() {
                server = server_info(&result);
            }
            let Some(list) = result.get("tools").and_then(Value::as_array) else {
                return Err(ProbeError::NotMcp(
                    "the answer to tools/list has no tools array".into(),
                ));
            };
            for t in list {
                let Some(name) = t.get("name").and_then(Value::as_str) else {
                    continue;
                };
                tools.push(Tool {
                    name: name.to_string(),
                    description: t
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    schema: t.get("inputSchema").cloned().unwrap_or(json!({})),
                });
            }
            match result.get("nextCursor") {
                Some(c) if !c.is_null() => cursor = Some(c.clone()),
                _ => break,
            }
        }
        Ok(Listing {
            tools,
            version: wire::MODERN,
            server,
        })
    })
}

fn with_cursor(body: &[u8], cursor: &Value) -> Vec<u8> {
    let mut v: Value = serde_json::from_slice(body).expect("spate's own request is JSON");
    v["params"]["cursor"] = cursor.clone();
    serde_json::to_vec(&v).expect("a JSON value serializes")
}

fn server_info(result: &Map<String, Value>) -> Option<String> {
    let info = result
        .get("_meta")
        .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))?;
    let name = info.get("name").and_then(Value::as_str)?;
    match info.get("version").and_then(Value::as_str) {
        Some(v) if !v.is_empty() => Some(format!("{name} {v}")),
        _ => Some(name.to_string()),
    }
}

/// Sends one request (opening the connection first when there is none) and returns the
/// result of the response with id `id`, and whether the connection may be used again.
async fn ask(
    plan: &Plan,
    conn: &mut Option<Conn>,
    space: &mut ReadSpace,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    id: u64,
) -> Result<(Map<String, Value>, bool), ProbeError> {
    let request = crate::request::h1_bytes(&request_plan(plan, headers, body));
    if conn.is_none() {
        let c = tokio::time::timeout(plan.connect_timeout, open(plan))
            .await
            .map_err(|_| {
                ProbeError::Unreachable(format!("no connection within {:?}", plan.connect_timeout))
            })??;
        *conn = Some(c);
    }
    let Some(c) = conn.as_mut() else {
        unreachable!("a connection was just opened");
    };
    let written = std::cell::Cell::new(None);
    let bytes_in = std::cell::Cell::new(0);
    let mut got = Capture::default();
    let exchange = slow_lane::exchange(
        c,
        &request,
        false,
        space,
        Reached {
            written: &written,
            bytes_in: &bytes_in,
        },
        &mut got,
    );
    let res = match tokio::time::timeout(plan.timeout.max(Duration::from_secs(1)), exchange).await {
        Err(_) => {
            return Err(ProbeError::Unreachable(format!(
                "no answer to tools/list within {:?}",
                plan.timeout.max(Duration::from_secs(1))
            )));
        }
        Ok(Err(f)) => return Err(ProbeError::Unreachable(format!("tools/list: {f}"))),
        Ok(Ok(r)) => r,
    };
    let message = got.message(id);
    if !(200..300).contains(&res.status) {
        let why = match message.as_ref().and_then(|m| m.get("error")) {
            Some(e) => format!(
                "it answered tools/list with {} and JSON-RPC error {} ({})",
                res.status,
                e.get("code").unwrap_or(&Value::Null),
                e.get("message").and_then(Value::as_str).unwrap_or("")
            ),
            None => format!("it answered tools/list with HTTP {}", res.status),
        };
        return Err(ProbeError::NotMcp(why));
    }
    let Some(message) = message else {
        return Err(ProbeError::NotMcp(
            "its answer to tools/list is not a JSON-RPC response to the request".into(),
        ));
    };
    match (message.get("result"), message.get("error")) {
        (Some(Value::Object(r)), _) => Ok((r.clone(), res.keep_alive)),
        (_, Some(e)) => Err(ProbeError::NotMcp(format!(
            "it answered tools/list with JSON-RPC error {} ({})",
            e.get("code").unwrap_or(&Value::Null),
            e.get("message").and_then(Value::as_str).unwrap_or("")
        ))),
        _ => Err(ProbeError::NotMcp(
            "its answer to tools/list has no result".into(),
        )),
    }
}

/// The run's plan for one probe request: a POST of `body` with `headers` after the user's.
fn request_plan(plan: &Plan, headers: Vec<(String, String)>, body: Vec<u8>) -> Plan {
    let mut all = plan.headers.clone();
    all.extend(headers);
    Plan {
        method: "POST".into(),
        headers: all,
        body,
        compression: false,
        keep_alive: true,
        list: None,
        ..plan.clone()
    }
}

/// A connection over the run's route.
async fn open(plan: &Plan) -> Result<Conn, ProbeError> {
    let unreachable = |e: String| {
        ProbeError::Unreachable(format!(
            "cannot connect to {}: {e}",
            crate::redact::url(&plan.target.url)
        ))
    };
    let endpoint = plan
        .route
        .resolve(&plan.target)
        .map_err(|e| unreachable(e.to_string()))?;
    let (socket, _) = net::open(&endpoint, 0)
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let stream = match socket {
        Socket::Unix(u) => Stream::unix(u),
        Socket::Tcp(mut tcp) => {
            if let Some(connect) = crate::request::tunnel_bytes(plan) {
                net::tunnel(&mut tcp, &connect).await.map_err(unreachable)?;
            }
            match crate::engine::tls_client(plan).map_err(|e| unreachable(e.to_string()))? {
                None => Stream::Tcp(tcp),
                Some(tls) => {
                    let (s, _) = tls.handshake(tcp).await.map_err(|e| {
                        unreachable(net::describe_tls_io(&e, true).unwrap_or_else(|| e.to_string()))
                    })?;
                    Stream::tls(s)
                }
            }
        }
    };
    Ok(Conn::new(stream))
}

/// A response's status, kind and body (bounded).
#[derive(Default)]
struct Capture {
    media: Media,
    body: Vec<u8>,
}

impl Events for Capture {
    fn head(&mut self, _status: u16, media: Media) {
        self.media = media;
    }

    fn data(&mut self, bytes: &[u8]) {
        let room = MAX_BODY.saturating_sub(self.body.len());
        self.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

impl Capture {
    /// The JSON-RPC response with id `id` (or an error without one) in the body, however it
    /// came: one JSON object, or an event of a stream.
    fn message(&self, id: u64) -> Option<Map<String, Value>> {
        let answers = |v: &Value| {
            v.get("result").is_some() && v.get("id").and_then(Value::as_u64) == Some(id)
                || v.get("error").is_some()
        };
        if self.media != Media::EventStream {
            return match serde_json::from_slice::<Value>(&self.body) {
                Ok(Value::Object(m)) if answers(&Value::Object(m.clone())) => Some(m),
                _ => None,
            };
        }
        let mut sse = Sse::new();
        let mut input = &self.body[..];
        while let Some(item) = sse.next(&mut input) {
            if let Item::Event { data, .. } = item
                && let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(data)
                && answers(&Value::Object(m.clone()))
            {
                return Some(m);
            }
        }
        None
    }
}
