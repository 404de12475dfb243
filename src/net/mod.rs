//! Transport only: open a TCP connection to one of the resolved addresses (TCP_NODELAY) or a
//! Unix socket, and TLS on top of TCP. Knows nothing of HTTP messages, of runs or of the clock;
//! timeouts are the caller's business.

mod stream;
mod tls;
mod tls_words;
mod verify;

use std::io;
use std::net::SocketAddr;
pub use stream::Stream;
pub use tls::{ClientSettings, Negotiated, TlsClient, TlsSetupError, server_config, tls_cause};
pub use tls_words::{describe as describe_tls, describe_io as describe_tls_io};

use tokio::net::{TcpStream, UnixStream};

use crate::route::Endpoint;

/// A freshly connected socket, before any TLS.
#[derive(Debug)]
pub enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
}

/// Connects to `endpoint`: for TCP, as [`connect`] does (the index says which address worked);
/// for a Unix socket, to its path (index 0).
pub async fn open(endpoint: &Endpoint, first: usize) -> io::Result<(Socket, usize)> {
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
pub async fn connect(addrs: &[SocketAddr], first: usize) -> io::Result<(TcpStream, usize)> {
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
