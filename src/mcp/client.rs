//! The probe's own client: one HTTP/1.1 connection over the run's route (TCP or Unix socket,
//! proxy tunnel, TLS as the run's but for its ALPN, which offers only `http/1.1`), and a response's body read back as the JSON-RPC answer with a given
//! id, whether it came as JSON or as an event stream; and one request asked on it (`ask`). Not
//! on the load path; must not count.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::probe::ProbeError;
use crate::net;
use crate::plan::Plan;
use crate::proto::h1::slow_lane::{self, Reached};
use crate::proto::h1::{Conn, ReadSpace};
use crate::proto::sse::{Item, Sse};
use crate::proto::{Events, Media};

/// The largest answer kept.
const MAX_BODY: usize = 16 << 20;

/// A connection over the run's route, within the connect timeout.
pub(super) async fn connect(plan: &Plan) -> Result<Conn, ProbeError> {
    tokio::time::timeout(plan.connect_timeout, open(plan))
        .await
        .map_err(|_| {
            ProbeError::Unreachable(format!("no connection within {:?}", plan.connect_timeout))
        })?
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
    let tls = crate::reach::look_tls_client(plan).map_err(|e| unreachable(e.to_string()))?;
    let tunnel = crate::request::tunnel_bytes(plan);
    let dialed = net::dial(&endpoint, 0, tunnel.as_deref(), tls.as_ref(), &mut ())
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let stream = dialed.stream;
    Ok(Conn::new(stream))
}

/// A response's status, kind and body (bounded).
#[derive(Default)]
pub(super) struct Capture {
    pub media: Media,
    pub body: Vec<u8>,
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

/// A JSON-RPC response: its result as raw JSON (read later as far as it is needed, so that a
/// result of any depth or size costs no tree of values), or its error.
pub(super) struct Reply {
    pub result: Option<Box<RawValue>>,
    pub error: Option<Value>,
}

/// The response with id `id` (or an error without one) in the JSON text `bytes`.
pub(super) fn reply_in(bytes: &[u8], id: u64) -> Option<Reply> {
    #[derive(Deserialize)]
    struct Message {
        #[serde(default)]
        id: Option<Value>,
        #[serde(default)]
        result: Option<Box<RawValue>>,
        #[serde(default)]
        error: Option<Value>,
    }
    let m: Message = serde_json::from_slice(bytes).ok()?;
    let ours = m.id.as_ref().and_then(Value::as_u64) == Some(id);
    (m.result.is_some() && ours || m.error.is_some()).then_some(Reply {
        result: m.result,
        error: m.error,
    })
}

/// The response with id `id` (or an error without one) in a body of kind `media`, however it
/// came: one JSON object, or an event of a stream.
pub(super) fn message_in(media: Media, body: &[u8], id: u64) -> Option<Reply> {
    if media != Media::EventStream {
        return reply_in(body, id);
    }
    let mut sse = Sse::new();
    let mut input = body;
    while let Some(item) = sse.next(&mut input) {
        if let Item::Event { data, .. } = item
            && let Some(r) = reply_in(data, id)
        {
            return Some(r);
        }
    }
    None
}

/// Why a probe request got no result.
pub(super) enum Asked {
    /// No connection or no answer.
    Failed(ProbeError),
    /// An answer that is not a result: its status, whether it carried a JSON-RPC error of
    /// the stateless revision, and why in words.
    Status {
        status: u16,
        modern: bool,
        why: String,
    },
}

/// The JSON-RPC error codes only a server of the stateless revision sends: a version it does
/// not support, a header that does not match the body, a missing client capability.
const MODERN_ERRORS: [i64; 3] = [-32022, -32020, -32021];

/// Sends `request` (opening the connection first when there is none) and returns the result
/// of the response with id `id`, and whether the connection may be used again.
pub(super) async fn ask(
    plan: &Plan,
    conn: &mut Option<Conn>,
    space: &mut ReadSpace,
    request: &[u8],
    id: u64,
) -> Result<(Box<RawValue>, bool), Asked> {
    if conn.is_none() {
        *conn = Some(connect(plan).await.map_err(Asked::Failed)?);
    }
    let Some(c) = conn.as_mut() else {
        unreachable!("a connection was just opened");
    };
    let written = std::cell::Cell::new(None);
    let bytes_in = std::cell::Cell::new(0);
    let mut got = Capture::default();
    let exchange = slow_lane::exchange(
        c,
        request,
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
            return Err(Asked::Failed(ProbeError::Unreachable(format!(
                "no answer to tools/list within {:?}",
                plan.timeout.max(Duration::from_secs(1))
            ))));
        }
        Ok(Err(f)) => {
            return Err(Asked::Failed(ProbeError::Unreachable(format!(
                "tools/list: {f}"
            ))));
        }
        Ok(Ok(r)) => r,
    };
    let message = message_in(got.media, &got.body, id);
    let error = message.as_ref().and_then(|m| m.error.clone());
    let error = error.as_ref();
    let code = error.and_then(|e| e.get("code")).and_then(Value::as_i64);
    let words = |e: &Value| {
        format!(
            "JSON-RPC error {} ({})",
            e.get("code").unwrap_or(&Value::Null),
            e.get("message").and_then(Value::as_str).unwrap_or("")
        )
    };
    if !(200..300).contains(&res.status) {
        let why = match error {
            Some(e) => format!(
                "it answered tools/list with {} and {}",
                res.status,
                words(e)
            ),
            None => format!("it answered tools/list with HTTP {}", res.status),
        };
        return Err(Asked::Status {
            status: res.status,
            modern: code.is_some_and(|c| MODERN_ERRORS.contains(&c) || c == -32601),
            why,
        });
    }
    let Some(message) = message else {
        return Err(Asked::Status {
            status: res.status,
            modern: false,
            why: "its answer to tools/list is not a JSON-RPC response to the request".into(),
        });
    };
    match (message.result, error) {
        (Some(r), _) if r.get().starts_with('{') => Ok((r, res.keep_alive)),
        (_, Some(e)) => Err(Asked::Status {
            status: res.status,
            modern: code.is_some_and(|c| MODERN_ERRORS.contains(&c)),
            why: format!("it answered tools/list with {}", words(e)),
        }),
        _ => Err(Asked::Status {
            status: res.status,
            modern: false,
            why: "its answer to tools/list has no result".into(),
        }),
    }
}
