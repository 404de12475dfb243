//! Before a run, and for `spate mcp --list`: one connection over the run's route
//! (`client`) that asks the server for its tools with the requests the run will send, one at a
//! time, in the revision the server takes. Not on the load path; must not touch a run's
//! statistics.

use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

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
    /// The tools a run calls, or every tool for `--list`.
    pub tools: Vec<Tool>,
    /// How many tools the server listed.
    pub listed: usize,
    /// Names of some of the tools listed and not kept (a run keeps only those it calls).
    pub others: Vec<String>,
    /// Tools that could not be read, each with its name (or place) and why.
    pub unreadable: Vec<String>,
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
/// `nextCursor`: those named `want`, or every tool (`None`).
pub fn list_tools(
    plan: &Plan,
    era: Era,
    transport: Transport,
    want: Option<Vec<String>>,
) -> Result<Listing, ProbeError> {
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
            return super::probe_sse::list_tools(plan, legacy_asks, &want).await;
        }
        let mut refused = None;
        if !matches!(era, Era::Handshake(_)) {
            match stateless(plan, &want).await {
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
        let then = match with_handshake(plan, asked, &want).await {
            Ok(l) => return Ok(l),
            Err(ProbeError::NotMcp(then)) => then,
            Err(e) => return Err(e),
        };
        let last = match transport {
            Transport::Auto => match super::probe_sse::list_tools(plan, legacy_asks, &want).await {
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

async fn stateless(plan: &Plan, want: &Option<Vec<String>>) -> Result<Listing, Refusal> {
    let mut conn = None;
    let mut space = ReadSpace::new(64 << 10);
    let mut pages = Pages::new(want.clone());
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
        if !pages.add(&result).map_err(Refusal::Other)? {
            break;
        }
    }
    Ok(pages.listing(wire::MODERN.into(), None, false, Transport::Streamable))
}

/// The revisions with a handshake: one session, its tools listed, then ended (DELETE).
async fn with_handshake(
    plan: &Plan,
    asked: &str,
    want: &Option<Vec<String>>,
) -> Result<Listing, ProbeError> {
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
    let mut pages = Pages::new(want.clone());
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
    Ok(pages.listing(session.version, session.server, true, Transport::Streamable))
}

/// Most tools `spate mcp --list` shows: beyond, the listing is refused.
pub(super) const MAX_LISTED: usize = 10_000;

/// Most bytes of `tools/list` results read, all pages together.
pub(super) const MAX_LISTING: usize = 64 << 20;

/// Most names of tools the run does not call kept, to name them when a called one is missing.
const MAX_NAMED: usize = 100;

/// The tools of the pages so far, the cursor of the next and the server's name. A run keeps
/// only the tools it calls (and stops asking once it has them all); `--list` keeps every tool,
/// up to `MAX_LISTED`.
#[derive(Default)]
pub(super) struct Pages {
    pub tools: Vec<Tool>,
    /// Tools listed, whether kept or not.
    pub listed: usize,
    /// Names of some tools listed and not kept.
    pub others: Vec<String>,
    /// Tools that could not be read (a schema nested deeper than JSON is read here), each as
    /// its name (or place) and why.
    pub unreadable: Vec<String>,
    pub cursor: Option<Value>,
    pub server: Option<String>,
    /// Bytes of results read so far.
    bytes: usize,
    /// The tools the run calls; `None`: every tool (`--list`).
    want: Option<Vec<String>>,
}

/// One page of `tools/list`, each tool kept as raw JSON until it is read on its own.
#[derive(Deserialize)]
struct Page<'a> {
    #[serde(borrow)]
    tools: Option<Vec<&'a RawValue>>,
    #[serde(rename = "nextCursor", default)]
    next: Option<Value>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<Meta<'a>>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(rename = "io.modelcontextprotocol/serverInfo", borrow, default)]
    server: Option<&'a RawValue>,
}

/// One tool as the listing reads it.
#[derive(Deserialize)]
struct Listed {
    name: Value,
    #[serde(default)]
    description: Option<Value>,
    #[serde(rename = "inputSchema", default)]
    schema: Option<Value>,
}

/// A tool that could not be read whole, for its name.
#[derive(Deserialize)]
struct Named {
    name: String,
}

impl Pages {
    /// Pages that keep the tools named `want` (`None`: every tool).
    pub fn new(want: Option<Vec<String>>) -> Pages {
        Pages {
            want,
            ..Pages::default()
        }
    }

    /// Adds a page's tools; true if another page is to be asked for.
    pub fn add(&mut self, result: &RawValue) -> Result<bool, ProbeError> {
        self.bytes += result.get().len();
        if self.bytes > MAX_LISTING {
            return Err(ProbeError::NotMcp(format!(
                "its answers to tools/list hold more than {} MiB together, more than spate reads",
                MAX_LISTING >> 20
            )));
        }
        let Ok(Page {
            tools: Some(list),
            next,
            meta,
        }) = serde_json::from_str::<Page<'_>>(result.get())
        else {
            return Err(ProbeError::NotMcp(
                "the answer to tools/list has no tools array".into(),
            ));
        };
        if self.server.is_none()
            && let Some(info) = meta.and_then(|m| m.server)
        {
            self.server = serde_json::from_str(info.get())
                .ok()
                .and_then(|v: Value| name_of(&v));
        }
        for raw in list {
            self.listed += 1;
            let tool = match serde_json::from_str::<Listed>(raw.get()) {
                Ok(Listed {
                    name: Value::String(name),
                    description,
                    schema,
                }) => Tool {
                    name,
                    description: description.and_then(|d| d.as_str().map(str::to_string)),
                    schema: schema.unwrap_or(json!({})),
                },
                // A tool without a name is no tool a call can name.
                Ok(_) => continue,
                Err(e) => {
                    let name = serde_json::from_str::<Named>(raw.get())
                        .map_or_else(|_| format!("tool {}", self.listed), |n| n.name);
                    self.unreadable.push(format!("{name}: {e}"));
                    continue;
                }
            };
            match &self.want {
                None if self.tools.len() == MAX_LISTED => {
                    return Err(ProbeError::NotMcp(format!(
                        "it lists more than {MAX_LISTED} tools, more than spate lists"
                    )));
                }
                None => self.tools.push(tool),
                Some(want) if want.contains(&tool.name) => self.tools.push(tool),
                Some(_) if self.others.len() < MAX_NAMED => self.others.push(tool.name),
                Some(_) => {}
            }
        }
        self.cursor = next.filter(|c| !c.is_null());
        // A run stops asking once it has every tool it calls.
        let complete = self
            .want
            .as_ref()
            .is_some_and(|w| w.iter().all(|n| self.tools.iter().any(|t| t.name == *n)));
        Ok(self.cursor.is_some() && !complete)
    }

    /// The listing these pages make.
    pub fn listing(
        self,
        version: String,
        server: Option<String>,
        sessions: bool,
        transport: Transport,
    ) -> Listing {
        Listing {
            tools: self.tools,
            listed: self.listed,
            others: self.others,
            unreadable: self.unreadable,
            version,
            server: server.or(self.server),
            sessions,
            transport,
        }
    }
}

/// The fuzzed property (fuzz/fuzz_targets/outside.rs): whatever a `tools/list` result holds,
/// reading it never panics, keeps no more than the bounds allow, and a run keeps only the tools
/// it calls.
pub fn check_listing(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(raw) = serde_json::from_str::<Box<RawValue>>(text) else {
        return;
    };
    let mut all = Pages::new(None);
    if all.add(&raw).is_ok() {
        assert!(all.tools.len() + all.unreadable.len() <= all.listed);
        assert!(all.tools.len() <= MAX_LISTED);
    }
    let mut some = Pages::new(Some(vec!["a".into()]));
    if some.add(&raw).is_ok() {
        assert!(some.tools.iter().all(|t| t.name == "a"));
        assert!(some.others.len() <= MAX_NAMED);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn page(tools: &[String], next: Option<&str>) -> Box<RawValue> {
        let next = next.map_or("null".to_string(), |c| format!("{c:?}"));
        RawValue::from_string(format!(
            r#"{{"tools":[{}],"nextCursor":{next},"_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"s","version":"1"}}}}}}"#,
            tools.join(",")
        ))
        .unwrap()
    }

    fn tool(name: &str) -> String {
        format!(r#"{{"name":"{name}","description":"d","inputSchema":{{"type":"object"}}}}"#)
    }

    #[test]
    fn a_tool_too_deep_to_read_is_named_and_the_others_listed() {
        let deep = format!(
            r#"{{"name":"deep","inputSchema":{}1{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let mut pages = Pages::new(None);
        let more = pages
            .add(&page(&[tool("a"), deep, tool("b")], None))
            .unwrap();
        assert!(!more);
        let names: Vec<&str> = pages.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(pages.listed, 3);
        assert_eq!(pages.unreadable.len(), 1);
        assert!(
            pages.unreadable[0].starts_with("deep: recursion limit"),
            "{:?}",
            pages.unreadable
        );
        assert_eq!(pages.server.as_deref(), Some("s 1"));
    }

    #[test]
    fn a_run_keeps_only_the_tools_it_calls_and_stops_asking_once_it_has_them() {
        let mut pages = Pages::new(Some(vec!["t7".into()]));
        let first: Vec<String> = (0..5).map(|i| tool(&format!("t{i}"))).collect();
        assert!(pages.add(&page(&first, Some("2"))).unwrap());
        let second: Vec<String> = (5..10).map(|i| tool(&format!("t{i}"))).collect();
        assert!(!pages.add(&page(&second, Some("3"))).unwrap(), "it has t7");
        assert_eq!(pages.tools.len(), 1);
        assert_eq!((pages.listed, pages.others.len()), (10, 9));
    }

    #[test]
    fn the_fuzzed_property_holds_for_odd_pages() {
        for page in [
            "{}",
            "[]",
            r#"{"tools":[]}"#,
            r#"{"tools":[{"name":1},{"name":"a","description":7,"inputSchema":[]},{}]}"#,
            r#"{"tools":"x","nextCursor":{}}"#,
            r#"{"tools":[{"name":"a"}],"_meta":{"io.modelcontextprotocol/serverInfo":5}}"#,
        ] {
            check_listing(page.as_bytes());
        }
    }

    #[test]
    fn a_listing_over_its_bounds_is_refused() {
        let mut pages = Pages::new(None);
        let many: Vec<String> = (0..=MAX_LISTED).map(|i| tool(&format!("t{i}"))).collect();
        let e = pages.add(&page(&many, None)).unwrap_err().to_string();
        assert!(e.contains("more than 10000 tools"), "{e}");
        let mut pages = Pages::new(Some(vec!["x".into()]));
        let big = format!(
            r#"{{"name":"pad","description":"{}"}}"#,
            "x".repeat(1 << 20)
        );
        let mut e = None;
        for _ in 0..100 {
            if let Err(err) = pages.add(&page(std::slice::from_ref(&big), Some("n"))) {
                e = Some(err.to_string());
                break;
            }
        }
        let e = e.expect("refused before 100 MiB");
        assert!(e.contains("more than 64 MiB"), "{e}");
    }
}
