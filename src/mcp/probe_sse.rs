//! The probe over the legacy HTTP+SSE transport (`legacy`): a session's stream opened with a
//! GET, the handshake POSTed to the endpoint it names, the tools listed page by page with their
//! answers read from the stream, then the stream closed. Not on the load path; must not touch a
//! run's statistics.

use std::time::Duration;

use serde_json::json;

use super::client::connect;
use super::legacy::{self, Listening};
use super::probe::{Listing, MAX_PAGES, Pages, ProbeError, Transport};
use crate::plan::Plan;
use crate::proto::h1::ReadSpace;

/// Lists the server's tools over a session of the legacy transport, asking for revision
/// `asked`.
pub(super) async fn list_tools(
    plan: &Plan,
    asked: &str,
    want: &Option<Vec<String>>,
) -> Result<Listing, ProbeError> {
    let wait = plan.timeout.max(Duration::from_secs(1));
    let stream = connect(plan).await?;
    let (listening, reading) = legacy::listen(stream, legacy::listen_request(plan));
    let steps = async {
        tokio::time::timeout(wait, in_session(plan, asked, &listening, want))
            .await
            .map_err(|_| {
                ProbeError::Unreachable(format!("no answer on the event stream within {wait:?}"))
            })?
    };
    // The steps end first unless the stream fails, and then the steps' own wait ends too.
    let mut reading = std::pin::pin!(reading);
    let mut steps = std::pin::pin!(steps);
    std::future::poll_fn(|cx| {
        let _ = reading.as_mut().poll(cx);
        steps.as_mut().poll(cx)
    })
    .await
}

async fn in_session(
    plan: &Plan,
    asked: &str,
    listening: &Listening,
    want: &Option<Vec<String>>,
) -> Result<Listing, ProbeError> {
    let not_mcp = |f: crate::proto::Fail| ProbeError::NotMcp(f.to_string());
    let target = legacy::endpoint(listening, &plan.target.url)
        .await
        .map_err(not_mcp)?;
    let mut conn = connect(plan).await?;
    let mut space = ReadSpace::new(64 << 10);
    let to = |b: bytes::Bytes| legacy::retarget(&b, &target);
    let session = legacy::handshake(
        &mut conn,
        listening,
        &to(super::session::initialize_request(plan, asked)),
        &to(legacy::initialized_request(plan)),
        &mut space,
    )
    .await
    .map_err(not_mcp)?;
    let mut pages = Pages::new(want.clone());
    for page in 1..=MAX_PAGES {
        let mut body = json!({"jsonrpc": "2.0", "id": page, "method": "tools/list", "params": {}});
        if let Some(c) = &pages.cursor {
            body["params"]["cursor"] = c.clone();
        }
        let request = to(legacy::post_request(plan, &body));
        let result = legacy::ask(&mut conn, listening, &request, page, &mut space)
            .await
            .map_err(|f| ProbeError::NotMcp(format!("tools/list: {f}")))?;
        if !pages.add(&result)? {
            break;
        }
    }
    Ok(pages.listing(session.version, session.server, true, Transport::Sse))
}
