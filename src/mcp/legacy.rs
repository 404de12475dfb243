//! MCP's legacy HTTP+SSE transport (revision 2024-11-05): a session is an event stream opened
//! with a GET, whose first event names the endpoint every message is POSTed to; the server
//! acknowledges each POST (202) and sends the answers on the stream. Here: the stream's
//! request, the task that reads the stream into an `Inbox` (the endpoint, and the answer to the
//! call awaited, with the read that brought it), the request target the POSTs take, and the
//! handshake over the pair (the stream's contents are `inbox`'s). Used by the probe and by the
//! engine's connections alike; must not count anything of a run.

use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

use bytes::Bytes;
use serde_json::Value;

pub use super::inbox::{Heard, Inbox, Tap};
use crate::plan::Plan;
use crate::proto::Failure;
use crate::proto::h1::slow_lane::{self, Reached};
use crate::proto::h1::{Conn, ReadSpace};
use crate::proto::{Cause, Fail, Response};

/// The name of the transport, as the report gives it.
pub const TRANSPORT: &str = "sse";

/// The revision of this transport, which spate asks for in `initialize`.
pub const VERSION: &str = "2024-11-05";

/// The GET that opens a session's stream at `plan`'s URL.
pub fn listen_request(plan: &Plan) -> Bytes {
    let mut headers = plan.headers.clone();
    headers.push(("Accept".into(), "text/event-stream".into()));
    crate::request::h1_bytes(&Plan {
        method: "GET".into(),
        headers,
        body: Vec::new(),
        compression: false,
        keep_alive: true,
        list: None,
        ..plan.clone()
    })
}

/// A POST of `body` to `plan`'s URL (`retarget` sends it to the endpoint), with the transport's
/// headers: this revision has no version header.
pub fn post_request(plan: &Plan, body: &Value) -> Bytes {
    super::session::post(
        plan,
        Vec::new(),
        serde_json::to_vec(body).expect("JSON serializes"),
    )
}

/// `notifications/initialized` of this transport.
pub fn initialized_request(plan: &Plan) -> Bytes {
    post_request(
        plan,
        &serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
}

/// The request target of the endpoint the stream named (`data` of its `endpoint` event),
/// resolved against the stream's URL `base`: the path and query the POSTs take. An endpoint on
/// another origin is refused: spate's connections go where the URL does.
pub fn endpoint_target(base: &str, data: &str) -> Result<String, String> {
    let base = url::Url::parse(base).map_err(|e| format!("the URL {base:?}: {e}"))?;
    let at = base
        .join(data.trim())
        .map_err(|e| format!("the stream named the endpoint {data:?}, which is not a URL: {e}"))?;
    if at.origin() != base.origin() {
        return Err(format!(
            "the stream named an endpoint on another origin ({at}), which spate does not follow"
        ));
    }
    let mut target = at.path().to_string();
    if let Some(q) = at.query() {
        target.push('?');
        target.push_str(q);
    }
    Ok(target)
}

/// `request` (a request spate built) sent to `target` (a path and query) instead: the request
/// line's target is replaced, kept in absolute form (through a proxy) with its origin.
pub fn retarget(request: &[u8], target: &str) -> Bytes {
    let line_end = request
        .windows(2)
        .position(|w| w == b"\r\n")
        .expect("a request spate built has a request line");
    let line = &request[..line_end];
    let from = line
        .iter()
        .position(|&b| b == b' ')
        .expect("a request line has a method")
        + 1;
    let to = line
        .iter()
        .rposition(|&b| b == b' ')
        .expect("and a version");
    let old = &line[from..to];
    // Absolute form: keep "scheme://authority".
    let origin = match old.windows(3).position(|w| w == b"://") {
        Some(s) => {
            let rest = &old[s + 3..];
            let end = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
            &old[..s + 3 + end]
        }
        None => &[][..],
    };
    let mut out = Vec::with_capacity(request.len() + target.len());
    out.extend_from_slice(&request[..from]);
    out.extend_from_slice(origin);
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(&request[to..]);
    Bytes::from(out)
}

/// A session's stream, held by whoever uses the session: dropping it ends the task reading the
/// stream, which closes it.
#[derive(Debug)]
pub struct Listening {
    pub inbox: Rc<RefCell<Inbox>>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let mut i = self.inbox.borrow_mut();
        i.dropped = true;
        if let Some(w) = i.reader.take() {
            w.wake();
        }
    }
}

/// Opens the stream on `conn` with `request` ([`listen_request`]) over HTTP/1.1: the handle,
/// and the task that reads the stream until it ends or the handle is dropped (the caller runs
/// it).
pub fn listen(mut conn: Conn, request: Bytes) -> (Listening, impl Future<Output = ()>) {
    listen_with(move |mut tap| async move {
        let mut space = ReadSpace::new(16 << 10);
        let (written, bytes_in) = (Cell::new(None), Cell::new(0));
        let reached = Reached {
            written: &written,
            bytes_in: &bytes_in,
        };
        slow_lane::exchange(&mut conn, &request, false, &mut space, reached, &mut tap).await
    })
}

/// Opens the stream with `exchange`, the GET in any protocol, which tells the `Tap` it is given
/// what arrives: the handle, and the task that runs it until the stream ends or the handle is
/// dropped (the caller runs it; dropping `exchange` closes the stream).
pub fn listen_with<F: Future<Output = Result<Response, Fail>>>(
    exchange: impl FnOnce(Tap) -> F,
) -> (Listening, impl Future<Output = ()>) {
    let inbox = Rc::new(RefCell::new(Inbox::default()));
    let tap_inbox = inbox.clone();
    let exchange = exchange(Tap(inbox.clone()));
    let task = async move {
        let mut exchange = pin!(exchange);
        let ended = poll_fn(|cx| {
            if tap_inbox.borrow().dropped {
                return Poll::Ready(None);
            }
            match exchange.as_mut().poll(cx) {
                Poll::Ready(r) => Poll::Ready(Some(r.is_ok())),
                Poll::Pending => {
                    tap_inbox.borrow_mut().reader = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await;
        let mut i = tap_inbox.borrow_mut();
        i.ended = Some(match ended {
            Some(true) => "the session's event stream ended",
            _ => "the session's event stream failed",
        });
        i.wake();
    };
    (Listening { inbox }, task)
}

/// The endpoint the stream named, as a request target resolved against `base`.
pub async fn endpoint(listening: &Listening, base: &str) -> Result<String, Fail> {
    poll_fn(|cx| poll_endpoint(listening, base, cx)).await
}

/// [`endpoint`], polled.
pub fn poll_endpoint(
    listening: &Listening,
    base: &str,
    cx: &mut std::task::Context<'_>,
) -> Poll<Result<String, Fail>> {
    let data = match listening.inbox.borrow_mut().poll_endpoint(cx) {
        Poll::Ready(d) => d,
        Poll::Pending => return Poll::Pending,
    };
    Poll::Ready(
        data.and_then(|d| endpoint_target(base, &d))
            .map_err(refused),
    )
}

/// Sends `request` on `conn` expecting the answer with id `id` on the stream: the answer's
/// `result`, or why there is none.
pub async fn ask(
    conn: &mut Conn,
    listening: &Listening,
    request: &[u8],
    id: u64,
    space: &mut ReadSpace,
) -> Result<Box<serde_json::value::RawValue>, Fail> {
    listening.inbox.borrow_mut().expect(0, id, true);
    post(conn, request, space).await?;
    answer(listening, id).await
}

/// The result the stream brings for the call with id `id`, awaited as slot 0's with its bytes
/// kept (`Inbox::expect(0, id, true)`), once it came; or why there is none.
pub async fn answer(
    listening: &Listening,
    id: u64,
) -> Result<Box<serde_json::value::RawValue>, Fail> {
    poll_fn(|cx| poll_answer(listening, id, cx)).await
}

/// [`answer`], polled.
pub fn poll_answer(
    listening: &Listening,
    id: u64,
    cx: &mut std::task::Context<'_>,
) -> Poll<Result<Box<serde_json::value::RawValue>, Fail>> {
    let heard = match listening.inbox.borrow_mut().poll_answer(0, cx) {
        Poll::Ready(h) => h,
        Poll::Pending => return Poll::Pending,
    };
    if let Err(why) = heard.verdict {
        return Poll::Ready(Err(refused(why.into())));
    }
    let inbox = listening.inbox.borrow();
    let Some(reply) = super::client::reply_in(inbox.raw(0), id) else {
        return Poll::Ready(Err(refused(
            "the answer on the stream is not JSON-RPC".into(),
        )));
    };
    Poll::Ready(match reply.result {
        Some(r) if r.get().starts_with('{') => Ok(r),
        _ => Err(refused(
            super::session::result_of(reply)
                .err()
                .unwrap_or_else(|| "its result is not an object".into()),
        )),
    })
}

/// Whether the server took a POST to the session's endpoint, answered `status`.
pub fn taken(status: u16) -> Result<(), Fail> {
    match (200..300).contains(&status) {
        true => Ok(()),
        false => Err(refused(format!(
            "the server answered a POST to the session's endpoint with HTTP {status}"
        ))),
    }
}

/// The session `initialize`'s `result` opened: the revision the server settled on.
pub fn opened(result: &serde_json::value::RawValue) -> Result<super::session::Session, Fail> {
    let result = serde_json::from_str(result.get()).map_err(|_| {
        refused("its result to initialize is not a JSON object spate can read".into())
    })?;
    let (version, server) = super::session::settle(&result).map_err(refused)?;
    Ok(super::session::Session {
        id: None,
        version,
        server,
    })
}

/// POSTs `request` on `conn`: the server must take it (2xx) and keep the connection open.
pub async fn post(conn: &mut Conn, request: &[u8], space: &mut ReadSpace) -> Result<(), Fail> {
    let (written, bytes_in) = (Cell::new(None), Cell::new(0));
    let reached = Reached {
        written: &written,
        bytes_in: &bytes_in,
    };
    let res = slow_lane::exchange(conn, request, false, space, reached, &mut ()).await?;
    taken(res.status)?;
    if !res.keep_alive {
        return Err(refused(
            "the server closed the connection after a POST to the session's endpoint".into(),
        ));
    }
    Ok(())
}

/// The handshake of a session: `initialize` (asking for revision `asked`, sent to `target`),
/// its answer on the stream, then `notifications/initialized`.
pub async fn handshake(
    conn: &mut Conn,
    listening: &Listening,
    initialize: &[u8],
    initialized: &[u8],
    space: &mut ReadSpace,
) -> Result<super::session::Session, Fail> {
    let result = ask(conn, listening, initialize, INITIALIZE_ID, space).await?;
    let session = opened(&result)?;
    post(conn, initialized, space).await?;
    Ok(session)
}

/// The JSON-RPC id of a session's `initialize`.
pub const INITIALIZE_ID: u64 = 0;

fn refused(why: String) -> Fail {
    Fail {
        class: Failure::Protocol,
        cause: Cause::Message(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_resolves_against_the_streams_url() {
        let base = "http://127.0.0.1:8000/sse";
        assert_eq!(
            endpoint_target(base, "/messages/?session_id=ab").as_deref(),
            Ok("/messages/?session_id=ab")
        );
        assert_eq!(
            endpoint_target(base, "messages?s=1\r\n").as_deref(),
            Ok("/messages?s=1")
        );
        assert_eq!(
            endpoint_target(base, "http://127.0.0.1:8000/m").as_deref(),
            Ok("/m")
        );
        let other = endpoint_target(base, "http://evil.example/m").unwrap_err();
        assert!(other.contains("another origin"), "{other}");
    }

    #[test]
    fn a_request_is_sent_to_the_endpoint_in_either_form() {
        let origin = retarget(b"POST /sse HTTP/1.1\r\nHost: h\r\n\r\n{}", "/m?s=1");
        assert_eq!(&origin[..], b"POST /m?s=1 HTTP/1.1\r\nHost: h\r\n\r\n{}");
        let absolute = retarget(b"POST http://h:8/sse HTTP/1.1\r\n\r\n", "/m");
        assert_eq!(&absolute[..], b"POST http://h:8/m HTTP/1.1\r\n\r\n");
    }
}
