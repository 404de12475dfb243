//! One gRPC call before a run: server reflection, asked over a connection made as the run's
//! are (the route, a proxy's tunnel, TLS with ALPN h2), with the h2 crate's client as `-v`'s
//! exchanges use it. The whole answer is read within `ANSWER_LIMIT` and the time a request
//! has. Prints nothing.

use bytes::Bytes;

use crate::plan::Plan;
use crate::proto::grpc::Status;

/// The most of an answer read, in bytes: a schema's files are text a person wrote.
pub const ANSWER_LIMIT: usize = 64 << 20;

/// What a call answered: its HTTP status, its body and its gRPC status.
#[derive(Debug)]
pub struct Answer {
    pub http: u16,
    pub body: Vec<u8>,
    pub status: Status,
}

/// Calls `path` with `body` (gRPC messages, framed) and the header fields `metadata` on
/// `plan`'s server, within the plan's connect timeout and request timeout.
pub fn call(
    plan: &Plan,
    path: &str,
    body: Vec<u8>,
    metadata: &[(String, String)],
) -> Result<Answer, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let limit = plan.connect_timeout + plan.timeout;
    rt.block_on(async {
        match tokio::time::timeout(limit, exchange(plan, path, body, metadata)).await {
            Ok(r) => r,
            Err(_) => Err(format!("no complete answer within {limit:?}")),
        }
    })
}

async fn exchange(
    plan: &Plan,
    path: &str,
    body: Vec<u8>,
    metadata: &[(String, String)],
) -> Result<Answer, String> {
    let endpoint = plan
        .route
        .resolve(&plan.target)
        .map_err(|e| e.to_string())?;
    let tls = crate::reach::tls_client(plan).map_err(|e| e.to_string())?;
    let tunnel = crate::request::tunnel_bytes(plan);
    let dialed = crate::net::dial(&endpoint, 0, tunnel.as_deref(), tls.as_ref(), &mut ())
        .await
        .map_err(|e| match e {
            crate::net::DialError::Connect(_) => {
                format!("cannot connect to {}: {e}", endpoint.describe())
            }
            e => e.to_string(),
        })?;
    let (mut client, connection) = h2::client::handshake(dialed.stream)
        .await
        .map_err(|e| format!("the HTTP/2 handshake failed: {e}"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut req = http::Request::builder()
        .method("POST")
        .uri(format!(
            "{}://{}{path}",
            plan.target.scheme(),
            plan.target.authority()
        ))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    for (n, v) in metadata {
        req = req.header(n.as_str(), v.as_str());
    }
    let req = req.body(()).map_err(|e| e.to_string())?;
    let (response, mut send) = client
        .send_request(req, false)
        .map_err(|e| format!("sending the call: {e}"))?;
    send.send_data(Bytes::from(body), true)
        .map_err(|e| format!("sending the call: {e}"))?;
    let response = response
        .await
        .map_err(|e| format!("reading the answer: {e}"))?;
    let http = response.status().as_u16();
    let mut status = Status::default();
    for (n, v) in response.headers() {
        status.field(n.as_str().as_bytes(), v.as_bytes());
    }
    let mut recv = response.into_body();
    let mut body = Vec::new();
    while let Some(chunk) = recv.data().await {
        let chunk = chunk.map_err(|e| format!("reading the answer: {e}"))?;
        let _ = recv.flow_control().release_capacity(chunk.len());
        if body.len() + chunk.len() > ANSWER_LIMIT {
            return Err(format!("the answer is longer than {ANSWER_LIMIT} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    if let Some(trailers) = recv
        .trailers()
        .await
        .map_err(|e| format!("reading the answer's trailers: {e}"))?
    {
        for (n, v) in &trailers {
            status.field(n.as_str().as_bytes(), v.as_bytes());
        }
    }
    Ok(Answer { http, body, status })
}

/// The server's services and schema, asked of its reflection service (`v1`, or `v1alpha` when
/// the server has no `v1`) with the header fields `metadata`: its services listed, then the
/// files that define them.
pub fn reflect(
    plan: &Plan,
    metadata: &[(String, String)],
) -> Result<(Vec<String>, super::schema::Schema), String> {
    use super::reflection::{V1, V1_ALPHA, files_for, list_services, read};
    let mut unimplemented = None;
    for path in [V1, V1_ALPHA] {
        let asked = |body| {
            let a = call(plan, path, body, metadata)
                .map_err(|e| format!("asking the server for its schema (reflection): {e}"))?;
            match (a.http, a.status.code) {
                (200, Some(0)) => Ok(Some(a.body)),
                (200, Some(12)) => Ok(None),
                (200, Some(code)) => Err(format!(
                    "reflection: {}{}",
                    crate::proto::grpc::code_name(code),
                    a.status
                        .message
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                )),
                (200, None) => Err("reflection: an answer without grpc-status".into()),
                (status, _) => Err(format!("reflection: the server answered HTTP {status}")),
            }
        };
        let Some(listed) = asked(list_services())? else {
            unimplemented = Some(path);
            continue;
        };
        let listed = read(&listed)?;
        if let Some((code, message)) = listed.error {
            return Err(format!(
                "reflection: the server answered error {code}: {message}"
            ));
        }
        let files = match listed.services.is_empty() {
            true => Vec::new(),
            false => asked(files_for(&listed.services))?.unwrap_or_default(),
        };
        let answers = read(&files)?;
        if let Some((code, message)) = answers.error {
            return Err(format!(
                "reflection: the server answered error {code}: {message}"
            ));
        }
        return Ok((listed.services, answers.schema()?));
    }
    Err(format!(
        "the server has no reflection service ({} answered UNIMPLEMENTED): give the service's --proto FILE",
        unimplemented.unwrap_or(V1_ALPHA)
    ))
}
