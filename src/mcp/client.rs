//! The probe's own client: one connection over the run's route (TCP or Unix socket, proxy
//! tunnel, TLS as the run's), and a response's body read back as the JSON-RPC answer with a given
//! id, whether it came as JSON or as an event stream. Not on the load path; must not count.

use serde_json::{Map, Value};

use super::probe::ProbeError;
use crate::net::{self, Socket, Stream};
use crate::plan::Plan;
use crate::proto::h1::Conn;
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

/// The JSON-RPC response with id `id` (or an error without one) in a body of kind `media`,
/// however it came: one JSON object, or an event of a stream.
pub(super) fn message_in(media: Media, body: &[u8], id: u64) -> Option<Map<String, Value>> {
    let answers = |m: &Map<String, Value>| {
        m.get("result").is_some() && m.get("id").and_then(Value::as_u64) == Some(id)
            || m.get("error").is_some()
    };
    if media != Media::EventStream {
        return match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(m)) if answers(&m) => Some(m),
            _ => None,
        };
    }
    let mut sse = Sse::new();
    let mut input = body;
    while let Some(item) = sse.next(&mut input) {
        if let Item::Event { data, .. } = item
            && let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(data)
            && answers(&m)
        {
            return Some(m);
        }
    }
    None
}
