//! Transport only: `dial`, the one way every part of spate reaches a target over TCP (a TCP
//! connection to one of the resolved addresses with TCP_NODELAY, or a Unix socket; a proxy's
//! tunnel; TLS on top); QUIC for HTTP/3 (`quic`). Knows nothing of HTTP messages or of runs;
//! timeouts are the caller's business.

mod dial;
pub mod quic;
mod stream;
mod tls;
mod tls_words;
mod unix;
mod verify;

pub use dial::{DialError, Dialed, Step, Watch, dial};
use std::io;
use std::net::SocketAddr;
pub use stream::Stream;
pub use tls::{ClientSettings, Negotiated, TlsClient, TlsSetupError, server_config, tls_cause};
pub use tls_words::{describe as describe_tls, describe_io as describe_tls_io};

use tokio::net::TcpStream;

use unix::UnixStream;

use crate::route::Endpoint;

/// A freshly connected socket, before any TLS.
#[derive(Debug)]
enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
}

/// The longest answer to CONNECT spate reads before giving up on it.
const TUNNEL_HEAD_MAX: usize = 16 * 1024;

/// Asks the proxy at the other end of `tcp` for a tunnel with `connect` (a whole CONNECT
/// request) and reads its answer: `Ok` on a 2xx, after which `tcp` carries the target's bytes.
/// The error is a sentence for the report.
async fn tunnel(tcp: &mut TcpStream, connect: &[u8]) -> Result<(), String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    tcp.write_all(connect)
        .await
        .map_err(|e| format!("the proxy did not take the CONNECT request: {e}"))?;
    let mut head = Vec::with_capacity(512);
    // Byte by byte past the head's end would read the target's first bytes; a head is short
    // and this happens once per connection, so read in small steps and stop at its end.
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= TUNNEL_HEAD_MAX {
            return Err("the proxy's answer to CONNECT has no end (over 16 KiB)".into());
        }
        match tcp.read(&mut byte).await {
            Ok(0) => {
                return Err("the proxy closed the connection instead of answering CONNECT".into());
            }
            Ok(_) => head.push(byte[0]),
            Err(e) => return Err(format!("reading the proxy's answer to CONNECT: {e}")),
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut res = httparse::Response::new(&mut headers);
    match res.parse(&head) {
        Ok(httparse::Status::Complete(_)) => match res.code {
            Some(code) if (200..300).contains(&code) => Ok(()),
            Some(code) => Err(format!(
                "the proxy refused the tunnel: {code} {}",
                res.reason.unwrap_or("")
            )
            .trim_end()
            .to_string()),
            None => Err("the proxy's answer to CONNECT has no status".into()),
        },
        _ => Err("the proxy's answer to CONNECT is not HTTP".into()),
    }
}

/// Connects to `endpoint`: for TCP, as [`connect`] does (the index says which address worked);
/// for a Unix socket, to its path (index 0).
async fn open(endpoint: &Endpoint, first: usize) -> io::Result<(Socket, usize)> {
    match endpoint {
        Endpoint::Tcp(addrs) => {
            let (s, i) = connect(addrs, first).await?;
            Ok((Socket::Tcp(s), i))
        }
        Endpoint::Unix(path) => Ok((Socket::Unix(UnixStream::connect(path).await?), 0)),
    }
}

/// Connects to the first address of `addrs` that accepts, starting at index `first` (the one
/// that worked last time) and wrapping around. Returns the stream and the index that worked.
async fn connect(addrs: &[SocketAddr], first: usize) -> io::Result<(TcpStream, usize)> {
    let mut last_err = None;
    for k in 0..addrs.len() {
        let i = (first + k) % addrs.len();
        match TcpStream::connect(addrs[i]).await {
            Ok(stream) => {
                stream.set_nodelay(true)?;
                return Ok((stream, i));
            }
            Err(e) => last_err = Some(e),
        }
    }
    Err(last_err
        .unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to connect to")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closed_port() -> SocketAddr {
        // Bound then dropped: nothing listens there.
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
    }

    #[test]
    fn tries_addresses_in_order_and_reports_the_one_that_worked() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let good = listener.local_addr().unwrap();
            let addrs = [closed_port(), good];
            let (stream, i) = connect(&addrs, 0).await.unwrap();
            assert_eq!(i, 1, "the refused first address is skipped");
            assert!(stream.nodelay().unwrap());
            // Starting from the address that worked last time skips the refused one.
            assert_eq!(connect(&addrs, 1).await.unwrap().1, 1);
            let err = connect(&[closed_port()], 0).await.unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
        });
    }
}
