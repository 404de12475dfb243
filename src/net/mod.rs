//! Transport only: open a TCP connection to one of the resolved addresses, with TCP_NODELAY.
//! Knows nothing of HTTP, of runs or of the clock; timeouts are the caller's business.

use std::io;
use std::net::SocketAddr;

use tokio::net::TcpStream;

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
