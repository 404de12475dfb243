//! `spate serve`: a small, fast HTTP server for loopback testing, used by `spate demo` and by the
//! tests: HTTP/1.1, h2c, and TLS with ALPN (h2 and http/1.1), optionally requiring a client
//! certificate; with TLS also HTTP/3 on the same port's UDP. Fixed response built once (status, body size, optional chunking and delay),
//! keep-alive and pipelining, exact request counting. Not a general web server.

mod conn;
mod h2;
mod h3;
mod responses;

use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use socket2::{Domain, Socket, Type};
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;

use crate::net::{TlsSetupError, server_config};
use h2::H2Answer;
pub use responses::Responses;

/// TLS for the built-in server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeTls {
    /// Certificate chain and key, PEM.
    pub cert: Vec<u8>,
    pub key: Vec<u8>,
    /// Require client certificates signed by this CA (PEM).
    pub client_ca: Option<Vec<u8>>,
    /// Offer only http/1.1 with ALPN (otherwise h2 first, then http/1.1).
    pub http1_only: bool,
}

/// Stop answering for `length` at every multiple of `every` since the server started (the
/// first stall at `every`), then answer everything that was held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    pub every: Duration,
    pub length: Duration,
}

/// When responses may go out: after the delay, and not during a stall.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pacing {
    pub delay: Duration,
    pub stall: Option<Stall>,
    pub started: std::time::Instant,
}

impl Pacing {
    pub fn is_active(&self) -> bool {
        !self.delay.is_zero() || self.stall.is_some()
    }

    /// If `t` falls in a stall window, its end.
    pub fn stalled_until(&self, t: std::time::Instant) -> Option<std::time::Instant> {
        let s = self.stall?;
        let since = t.saturating_duration_since(self.started);
        let every = s.every.as_nanos().max(1);
        let k = since.as_nanos() / every;
        let offset = since.as_nanos() % every;
        (k >= 1 && offset < s.length.as_nanos()).then(|| {
            let window = Duration::from_nanos(u64::try_from(k * every).unwrap_or(u64::MAX));
            self.started + window + s.length
        })
    }

    /// Waits until responses queued at this moment (`queued` of them, each after the delay) may
    /// be written.
    pub async fn hold(&self, timer: &mut crate::timer::Timer, queued: u32) {
        let mut at = std::time::Instant::now() + self.delay * queued;
        if let Some(end) = self.stalled_until(at) {
            at = end;
        }
        timer.sleep_until(at).await;
    }
}

/// How the built-in server answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeConfig {
    pub addr: SocketAddr,
    pub body_size: usize,
    pub status: u16,
    /// Waited before each response (precise to tens of microseconds on Linux).
    pub delay: Duration,
    /// Stop answering now and then (--stall-every, --stall-for).
    pub stall: Option<Stall>,
    /// `Transfer-Encoding: chunked` instead of `Content-Length` (HTTP/1.1).
    pub chunked: bool,
    pub threads: usize,
    /// Plain connections speak HTTP/2 with prior knowledge (h2c).
    pub h2c: bool,
    pub tls: Option<ServeTls>,
    /// HTTP/2 MAX_CONCURRENT_STREAMS to announce (none: the h2 crate's default, unlimited).
    pub max_streams: Option<u32>,
    /// With TLS: HTTP/3 too, on the UDP port of the same number.
    pub http3: bool,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            body_size: 12,
            status: 200,
            delay: Duration::ZERO,
            stall: None,
            chunked: false,
            threads: 1,
            h2c: false,
            tls: None,
            max_streams: None,
            http3: false,
        }
    }
}

/// One request counter per server thread, on its own cache line.
#[repr(align(64))]
#[derive(Default)]
pub(crate) struct Counter(AtomicU64);

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("TLS: {0}")]
    Tls(#[from] TlsSetupError),
    #[error("HTTP/3 needs TLS: give --tls-cert and --tls-key")]
    Http3WithoutTls,
}

/// How accepted connections are answered, shared by the server threads.
#[derive(Clone)]
struct Answer {
    h1: Responses,
    h2: Arc<H2Answer>,
    pacing: Pacing,
    h2c: bool,
    tls: Option<TlsAcceptor>,
}

/// A running server. Its threads serve until the process exits.
pub struct Server {
    addr: SocketAddr,
    tls: bool,
    http3: bool,
    counters: Arc<[Counter]>,
}

impl Server {
    /// Binds and starts serving on `config.threads` threads (each a current-thread runtime
    /// accepting on the same socket).
    pub fn start(config: &ServeConfig) -> Result<Server, ServeError> {
        let tls = match &config.tls {
            Some(t) => {
                let alpn = if t.http1_only {
                    vec![b"http/1.1".to_vec()]
                } else {
                    vec![b"h2".to_vec(), b"http/1.1".to_vec()]
                };
                Some(TlsAcceptor::from(server_config(
                    &t.cert,
                    &t.key,
                    alpn,
                    t.client_ca.as_deref(),
                )?))
            }
            None => None,
        };
        let listener = bind(config.addr)?;
        let addr = listener.local_addr()?;
        // The port is known now (--port 0), for the Alt-Svc that points to HTTP/3.
        let config = &ServeConfig {
            addr,
            ..config.clone()
        };
        let answer = Answer {
            h1: Responses::new(config),
            h2: Arc::new(H2Answer {
                status: http::StatusCode::from_u16(config.status).unwrap_or(http::StatusCode::OK),
                body: responses::body(config.body_size),
                pacing: pacing(config),
                max_streams: config.max_streams,
                alt_svc: config
                    .http3
                    .then(|| http::HeaderValue::from_str(&responses::alt_svc(addr.port())))
                    .and_then(Result::ok),
            }),
            pacing: pacing(config),
            h2c: config.h2c,
            tls,
        };
        let threads = config.threads.max(1);
        // HTTP/3's thread counts into one more.
        let counters: Arc<[Counter]> = (0..threads + usize::from(config.http3))
            .map(|_| Counter::default())
            .collect();
        if config.http3 {
            let Some(t) = &config.tls else {
                return Err(ServeError::Http3WithoutTls);
            };
            h3::start(
                addr,
                t,
                answer.h2.status,
                answer.h2.body.clone(),
                pacing(config),
                counters.clone(),
                threads,
            )?;
        }
        for i in 0..threads {
            let listener = listener.try_clone()?;
            let answer = answer.clone();
            let counters = counters.clone();
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            // Detached: the threads serve until the process exits.
            std::thread::Builder::new()
                .name(format!("spate-serve-{i}"))
                .spawn(move || {
                    let local = tokio::task::LocalSet::new();
                    local.block_on(&rt, accept_loop(listener, answer, counters, i));
                })?;
        }
        Ok(Server {
            addr,
            tls: config.tls.is_some(),
            http3: config.http3,
            counters,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Whether it serves HTTP/3 too (on the UDP port of `addr`).
    pub fn http3(&self) -> bool {
        self.http3
    }

    /// The server's URL: https when it speaks TLS.
    pub fn url(&self) -> String {
        format!(
            "{}://{}/",
            if self.tls { "https" } else { "http" },
            self.addr
        )
    }

    /// Requests answered so far (a response was queued for each).
    pub fn requests(&self) -> u64 {
        self.counters
            .iter()
            .map(|c| c.0.load(Ordering::Relaxed))
            .sum()
    }
}

fn pacing(config: &ServeConfig) -> Pacing {
    Pacing {
        delay: config.delay,
        stall: config.stall,
        started: std::time::Instant::now(),
    }
}

fn bind(addr: SocketAddr) -> io::Result<StdListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    // std's fixed backlog of 128 drops SYNs when thousands of clients connect at once.
    socket.listen(8192)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

async fn accept_loop(
    listener: StdListener,
    answer: Answer,
    counters: Arc<[Counter]>,
    index: usize,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let (answer, counters) = (answer.clone(), counters.clone());
                tokio::task::spawn_local(
                    async move { handle(stream, &answer, counters, index).await },
                );
            }
            // Out of file descriptors or a connection reset before accept: keep serving.
            Err(_) => tokio::time::sleep(Duration::from_millis(1)).await,
        }
    }
}

/// One accepted connection: TLS first if configured, then HTTP/2 (ALPN h2, or --h2c) or
/// HTTP/1.1.
async fn handle(stream: TcpStream, answer: &Answer, counters: Arc<[Counter]>, index: usize) {
    let _ = stream.set_nodelay(true);
    match &answer.tls {
        Some(acceptor) => {
            // A failed handshake (bad client certificate, plaintext) ends the connection.
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            if tls.get_ref().1.alpn_protocol() == Some(b"h2") {
                h2::serve(tls, answer.h2.clone(), counters, index).await;
            } else {
                conn::serve(tls, &answer.h1, &counters[index].0, answer.pacing).await;
            }
        }
        None if answer.h2c => h2::serve(stream, answer.h2.clone(), counters, index).await,
        None => conn::serve(stream, &answer.h1, &counters[index].0, answer.pacing).await,
    }
}
