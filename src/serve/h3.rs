//! `spate serve --http3`: the same fixed response over HTTP/3, on a UDP socket at the TCP
//! listener's port (quinn and h3's server), on a thread of its own; each request counted as the
//! TCP side counts them. Not a general HTTP/3 server: every request gets the one response, after
//! the delay.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;

use bytes::Bytes;

use super::{Counter, Pacing, ServeError, ServeTls};
use crate::net::server_config;

/// What every HTTP/3 request is answered with.
#[derive(Clone)]
struct Answer {
    status: http::StatusCode,
    body: Bytes,
    pacing: Pacing,
}

/// Binds UDP `addr` and serves HTTP/3 there on a thread of its own, counting into `counter`.
pub(super) fn start(
    addr: SocketAddr,
    tls: &ServeTls,
    status: http::StatusCode,
    body: Bytes,
    pacing: Pacing,
    counter: Arc<[Counter]>,
    index: usize,
) -> Result<(), ServeError> {
    let config = server_config(
        &tls.cert,
        &tls.key,
        vec![b"h3".to_vec()],
        tls.client_ca.as_deref(),
    )?;
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(config)
        .map_err(|e| ServeError::Io(std::io::Error::other(format!("QUIC: {e}"))))?;
    let server = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let socket = UdpSocket::bind(addr)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let endpoint = {
        let _in = rt.enter();
        quinn::Endpoint::new(
            quinn::EndpointConfig::default(),
            Some(server),
            socket,
            Arc::new(quinn::TokioRuntime),
        )?
    };
    let answer = Answer {
        status,
        body,
        pacing,
    };
    // Detached: the thread serves until the process exits.
    std::thread::Builder::new()
        .name("spate-serve-h3".into())
        .spawn(move || rt.block_on(accept_loop(endpoint, answer, counter, index)))?;
    Ok(())
}

async fn accept_loop(
    endpoint: quinn::Endpoint,
    answer: Answer,
    counter: Arc<[Counter]>,
    index: usize,
) {
    while let Some(incoming) = endpoint.accept().await {
        let (answer, counter) = (answer.clone(), counter.clone());
        tokio::spawn(async move {
            // A failed handshake (a bad client certificate) ends the connection.
            if let Ok(conn) = incoming.await {
                connection(conn, answer, counter, index).await;
            }
        });
    }
}

async fn connection(
    conn: quinn::Connection,
    answer: Answer,
    counter: Arc<[Counter]>,
    index: usize,
) {
    let Ok(mut h3) = h3::server::Connection::<_, Bytes>::new(h3_quinn::Connection::new(conn)).await
    else {
        return;
    };
    while let Ok(Some(resolver)) = h3.accept().await {
        let (answer, counter) = (answer.clone(), counter.clone());
        tokio::spawn(async move {
            let Ok((_, mut stream)) = resolver.resolve_request().await else {
                return;
            };
            counter[index]
                .0
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let mut at = std::time::Instant::now() + answer.pacing.delay;
            if let Some(end) = answer.pacing.stalled_until(at) {
                at = end;
            }
            tokio::time::sleep_until(at.into()).await;
            let response = http::Response::builder()
                .status(answer.status)
                .header("content-length", answer.body.len())
                .body(())
                .expect("a status and a length make a response");
            if stream.send_response(response).await.is_ok() {
                if !answer.body.is_empty() {
                    let _ = stream.send_data(answer.body.clone()).await;
                }
                let _ = stream.finish().await;
            }
        });
    }
}
