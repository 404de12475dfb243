//! One way from an endpoint to a stream HTTP can be spoken on: connect (TCP, from a preferred
//! address on, or a Unix socket), a proxy's CONNECT tunnel, then TLS. The run's connections,
//! `-v`, `--alt-svc`'s look and MCP's probe all reach a target through `dial`, so that they
//! reach it the same way. Each step is told to a `Watch` (the run times them, `-v` shows them);
//! nothing here counts or knows the clock's use.

use std::fmt;
use std::io;
use std::time::{Duration, Instant};

use super::{Socket, Stream, TlsClient, open, tunnel};
use crate::route::Endpoint;

/// A step of a dial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Connect,
    Tunnel,
    Tls,
}

/// What a dial tells as it goes; every method does nothing unless a watcher wants it.
pub trait Watch {
    /// `step` begins (connecting begins with the dial).
    fn reached(&mut self, _step: Step) {}
    /// `step` succeeded after `took`.
    fn done(&mut self, _step: Step, _took: Duration) {}
    /// The TLS handshake resumed an earlier session.
    fn resumed(&mut self) {}
}

/// No one watches.
impl Watch for () {}

/// A stream to the target, whether TLS's ALPN chose h2, and which of the endpoint's addresses
/// answered (the next dial may start there).
#[derive(Debug)]
pub struct Dialed {
    pub stream: Stream,
    pub h2: bool,
    pub index: usize,
}

/// The step a dial failed at, with its error.
#[derive(Debug)]
pub enum DialError {
    Connect(io::Error),
    /// The proxy's refusal, as a sentence.
    Tunnel(String),
    Tls(io::Error),
}

impl fmt::Display for DialError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DialError::Connect(e) => write!(f, "{e}"),
            DialError::Tunnel(why) => f.write_str(why),
            DialError::Tls(e) => match super::describe_tls_io(e, true) {
                Some(words) => f.write_str(&words),
                None => match super::tls_cause(e) {
                    Some(t) => f.write_str(&super::describe_tls(t)),
                    None => write!(f, "{e}"),
                },
            },
        }
    }
}

/// Reaches `endpoint` (its addresses tried from `preferred` on), through the proxy's tunnel
/// when `connect` (a whole CONNECT request) is given, with TLS when `tls` is: what `Plan`s
/// route, proxy and TLS settings make of a target.
pub async fn dial(
    endpoint: &Endpoint,
    preferred: usize,
    connect: Option<&[u8]>,
    tls: Option<&TlsClient>,
    watch: &mut impl Watch,
) -> Result<Dialed, DialError> {
    watch.reached(Step::Connect);
    let t = Instant::now();
    let (socket, index) = open(endpoint, preferred)
        .await
        .map_err(DialError::Connect)?;
    watch.done(Step::Connect, t.elapsed());
    let socket = match (socket, connect) {
        (Socket::Tcp(mut tcp), Some(connect)) => {
            watch.reached(Step::Tunnel);
            let t = Instant::now();
            tunnel(&mut tcp, connect).await.map_err(DialError::Tunnel)?;
            watch.done(Step::Tunnel, t.elapsed());
            Socket::Tcp(tcp)
        }
        (socket, _) => socket,
    };
    let (stream, h2) = match (socket, tls) {
        (Socket::Tcp(tcp), None) => (Stream::Tcp(tcp), false),
        // The plan refuses TLS over a Unix socket.
        (Socket::Unix(unix), _) => (Stream::unix(unix), false),
        (Socket::Tcp(tcp), Some(tls)) => {
            watch.reached(Step::Tls);
            let t = Instant::now();
            let (s, negotiated) = tls.handshake(tcp).await.map_err(DialError::Tls)?;
            watch.done(Step::Tls, t.elapsed());
            if negotiated.resumed {
                watch.resumed();
            }
            (Stream::tls(s), negotiated.h2)
        }
    };
    Ok(Dialed { stream, h2, index })
}
