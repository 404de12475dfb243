//! One HTTP/2 connection of the built-in server (h2c prior knowledge, or h2 after ALPN): accept
//! streams, drain request bodies (capacity released at once), answer each with the configured
//! response, body sent as the client's flow control allows.

use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use h2::RecvStream;
use h2::server::SendResponse;
use http::{Method, Request, Response};
use tokio::io::{AsyncRead, AsyncWrite};

use super::{Counter, Pacing};

/// The response every stream gets, built once.
#[derive(Debug, Clone)]
pub struct H2Answer {
    pub status: http::StatusCode,
    pub body: Bytes,
    pub(crate) pacing: Pacing,
    pub max_streams: Option<u32>,
    /// With --http3: where HTTP/3 is, told with each response (`h3=":PORT"`).
    pub alt_svc: Option<http::HeaderValue>,
}

pub async fn serve<T>(io: T, answer: Arc<H2Answer>, counters: Arc<[Counter]>, index: usize)
where
    T: AsyncRead + AsyncWrite + Unpin + 'static,
{
    let mut builder = h2::server::Builder::new();
    builder
        .initial_window_size((1 << 30) - 1)
        .initial_connection_window_size((1 << 30) - 1);
    if let Some(n) = answer.max_streams {
        builder.max_concurrent_streams(n);
    }
    let Ok(mut conn) = builder.handshake::<T, Bytes>(io).await else {
        return;
    };
    while let Some(next) = conn.accept().await {
        let Ok((request, respond)) = next else { break };
        let (answer, counters) = (answer.clone(), counters.clone());
        tokio::task::spawn_local(async move {
            reply(request, respond, &answer, &counters[index].0).await;
        });
    }
}

async fn reply(
    request: Request<RecvStream>,
    mut respond: SendResponse<Bytes>,
    a: &H2Answer,
    counter: &AtomicU64,
) {
    let head_only = request.method() == Method::HEAD;
    let mut body = request.into_body();
    while let Some(chunk) = body.data().await {
        let Ok(chunk) = chunk else { return };
        let _ = body.flow_control().release_capacity(chunk.len());
    }
    counter.fetch_add(1, Ordering::Relaxed);
    if a.pacing.is_active() {
        a.pacing.hold(&mut crate::timer::Timer::new(), 1).await;
    }
    let bodiless = head_only || a.body.is_empty() || a.status == 204 || a.status == 304;
    let mut head = Response::new(());
    *head.status_mut() = a.status;
    if a.status != 204 && a.status != 304 {
        head.headers_mut()
            .insert(http::header::CONTENT_LENGTH, a.body.len().into());
    }
    if let Some(alt) = &a.alt_svc {
        head.headers_mut()
            .insert(http::header::ALT_SVC, alt.clone());
    }
    let Ok(mut send) = respond.send_response(head, bodiless) else {
        return;
    };
    if bodiless {
        return;
    }
    let mut rest = a.body.clone();
    while !rest.is_empty() {
        send.reserve_capacity(rest.len());
        let Some(Ok(granted)) = poll_fn(|cx| send.poll_capacity(cx)).await else {
            return;
        };
        let chunk = rest.split_to(granted.min(rest.len()));
        if send.send_data(chunk, rest.is_empty()).is_err() {
            return;
        }
    }
}
