//! `-v` over HTTP/2 and HTTP/3: one request on a connection of its own (h2 through the `h2`
//! crate on the stream `-v` dialled, HTTP/3 on a QUIC connection of its own), its fields and the
//! response's shown as `-v` shows them; the response's body left to read for the legacy MCP
//! transport's stream. Counts nothing of a run.

use std::fmt::Write as _;

use bytes::Buf;

use super::{Fields, printable, shown, shown_body};
use crate::net::Stream;
use crate::net::quic::OpenError;
use crate::plan::Plan;
use crate::reach::quic_client;
use crate::route::Endpoint;

/// HTTP/3: a QUIC connection of its own, the request's fields and the response's.
pub(super) async fn h3(
    plan: &Plan,
    endpoint: &Endpoint,
    r: crate::proto::h3::Request,
    out: &mut String,
) -> Result<Fields, String> {
    let (fields, mut body) = h3_open(plan, endpoint, r, out).await?;
    let data = body
        .stream
        .recv_data()
        .await
        .map_err(|e| format!("HTTP/3: {e}"))?;
    if let Some(data) = data {
        let _ = writeln!(out, "< {}", printable(data.chunk()));
    }
    Ok(fields)
}

/// A request stream of an HTTP/3 connection, its response's body still to read, and the
/// connection's sender (dropping the last sender closes the connection).
pub(super) struct H3Stream {
    pub(super) stream: h3::client::RequestStream<h3_quinn::BidiStream<bytes::Bytes>, bytes::Bytes>,
    _send: crate::proto::h3::Sender,
}

/// The request over HTTP/3 on a QUIC connection of its own, shown, and its response's head: its
/// fields, and the stream with its body still to read.
pub(super) async fn h3_open(
    plan: &Plan,
    endpoint: &Endpoint,
    r: crate::proto::h3::Request,
    out: &mut String,
) -> Result<(Fields, H3Stream), String> {
    let Some(client) = quic_client(plan).map_err(|e| e.to_string())? else {
        unreachable!("an HTTP/3 plan without a QUIC client");
    };
    let Endpoint::Tcp(addrs) = endpoint else {
        unreachable!("--http3 over a Unix socket: the plan refuses it");
    };
    let opened = client.connect(addrs[0]).await.map_err(|e| match e {
        OpenError::Socket(e) => format!("cannot open a UDP socket: {e}"),
        OpenError::Handshake { words, .. } => format!("cannot connect to {}: {words}", addrs[0]),
    })?;
    let _ = writeln!(
        out,
        "* QUIC connection to {} (TLS 1.3, certificate {})",
        addrs[0],
        match plan.tls.insecure {
            true => "NOT verified: --insecure",
            false => "verified",
        }
    );
    let (mut driver, mut send) = crate::proto::h3::start(opened.conn)
        .await
        .map_err(|f| f.to_string())?;
    tokio::spawn(async move { std::future::poll_fn(|cx| driver.poll_close(cx)).await });
    let _ = writeln!(out, "> :method: {}", r.method);
    let _ = writeln!(
        out,
        "> :path: {}",
        r.uri.path_and_query().map_or("/", |p| p.as_str())
    );
    let _ = writeln!(
        out,
        "> :authority: {}",
        r.uri.authority().map_or("", |a| a.as_str())
    );
    for (n, v) in &r.headers {
        let _ = writeln!(
            out,
            "> {}",
            shown(n.as_str(), &String::from_utf8_lossy(v.as_bytes()))
        );
    }
    let failed = |e: h3::error::StreamError| format!("HTTP/3: {e}");
    let mut stream = send.send_request(r.message()).await.map_err(failed)?;
    if !r.body.is_empty() {
        let _ = writeln!(out, "> ({} bytes of body)", r.body.len());
        let _ = writeln!(out, "> {}", shown_body(&r.body, "> "));
        stream.send_data(r.body.clone()).await.map_err(failed)?;
    }
    stream.finish().await.map_err(failed)?;
    let response = stream.recv_response().await.map_err(failed)?;
    let fields = said_head(response.status().as_u16(), response.headers(), out);
    Ok((
        fields,
        H3Stream {
            stream,
            _send: send,
        },
    ))
}

pub(super) async fn h2(
    plan: &Plan,
    prepared: crate::proto::h2::Prepared,
    stream: Stream,
    out: &mut String,
) -> Result<Fields, String> {
    let (fields, mut body) = h2_open(plan, prepared, None, stream, out).await?;
    if let Some(Ok(data)) = body.data().await {
        let _ = body.flow_control().release_capacity(data.len());
        let _ = writeln!(out, "< {}", printable(&data));
    }
    // The connection task ends with the runtime; the server sees the close.
    Ok(fields)
}

/// The request over HTTP/2 on `stream`, shown (with `body_words`, what its body means, after
/// its bytes), and its response's head: its fields, and its body still to read.
pub(super) async fn h2_open(
    plan: &Plan,
    prepared: crate::proto::h2::Prepared,
    body_words: Option<String>,
    stream: Stream,
    out: &mut String,
) -> Result<(Fields, h2::RecvStream), String> {
    let (mut client, connection) = h2::client::handshake(stream)
        .await
        .map_err(|e| format!("the HTTP/2 handshake failed: {e}"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut req = http::Request::builder();
    let (mut method, mut authority, mut path) = ("GET".to_string(), String::new(), "/".to_string());
    for (n, v) in prepared.fields.iter() {
        let (n, v) = (String::from_utf8_lossy(n), String::from_utf8_lossy(v));
        let _ = writeln!(out, "> {}", shown(&n, &v));
        match &*n {
            ":method" => method = v.into_owned(),
            ":authority" => authority = v.into_owned(),
            ":path" => path = v.into_owned(),
            _ if n.starts_with(':') => {}
            _ => req = req.header(&*n, &*v),
        }
    }
    if !prepared.body.is_empty() {
        let _ = writeln!(out, "> ({} bytes of body)", prepared.body.len());
        let _ = writeln!(out, "> {}", shown_body(&prepared.body, "> "));
    }
    if let Some(words) = body_words {
        let _ = writeln!(out, "{words}");
    }
    let uri = format!("{}://{authority}{path}", plan.target.scheme());
    let req = req
        .method(method.as_str())
        .uri(uri)
        .body(())
        .map_err(|e| e.to_string())?;
    let (response, mut send) = client
        .send_request(req, prepared.body.is_empty())
        .map_err(|e| format!("sending the request: {e}"))?;
    if !prepared.body.is_empty() {
        send.send_data(prepared.body.clone(), true)
            .map_err(|e| format!("sending the body: {e}"))?;
    }
    let response = response
        .await
        .map_err(|e| format!("reading the response: {e}"))?;
    let fields = said_head(response.status().as_u16(), response.headers(), out);
    Ok((fields, response.into_body()))
}

/// An HTTP/2 or HTTP/3 response head, shown on `out` as it came, and its fields.
fn said_head(status: u16, headers: &http::HeaderMap, out: &mut String) -> Fields {
    let _ = writeln!(out, "< :status: {status}");
    for (n, v) in headers {
        let _ = writeln!(
            out,
            "< {}",
            shown(n.as_str(), &String::from_utf8_lossy(v.as_bytes()))
        );
    }
    Fields::of(status, headers)
}
