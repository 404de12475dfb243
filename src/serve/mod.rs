//! `spate serve`: a small, fast HTTP/1.1 server for loopback testing, used by `spate demo` and by
//! the tests. Fixed response built once (status, body size, optional chunking and delay),
//! keep-alive and pipelining, exact request counting. Not a general web server.

mod conn;
mod responses;

use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use socket2::{Domain, Socket, Type};

pub use responses::Responses;

/// How the built-in server answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeConfig {
    pub addr: SocketAddr,
    pub body_size: usize,
    pub status: u16,
    /// Waited before each response.
    pub delay: Duration,
    /// `Transfer-Encoding: chunked` instead of `Content-Length`.
    pub chunked: bool,
    pub threads: usize,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            body_size: 12,
            status: 200,
            delay: Duration::ZERO,
            chunked: false,
            threads: 1,
        }
    }
}

/// One request counter per server thread, on its own cache line.
#[repr(align(64))]
#[derive(Default)]
struct Counter(AtomicU64);

/// A running server. Its threads serve until the process exits.
pub struct Server {
    addr: SocketAddr,
    counters: Arc<[Counter]>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Binds and starts serving on `config.threads` threads (each a current-thread runtime
    /// accepting on the same socket).
    pub fn start(config: &ServeConfig) -> io::Result<Server> {
        let listener = bind(config.addr)?;
        let addr = listener.local_addr()?;
        let responses = Responses::new(config);
        let threads = config.threads.max(1);
        let counters: Arc<[Counter]> = (0..threads).map(|_| Counter::default()).collect();
        let mut handles = Vec::with_capacity(threads);
        for i in 0..threads {
            let listener = listener.try_clone()?;
            let responses = responses.clone();
            let counters = counters.clone();
            let delay = config.delay;
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let h = std::thread::Builder::new()
                .name(format!("spate-serve-{i}"))
                .spawn(move || {
                    let local = tokio::task::LocalSet::new();
                    local.block_on(&rt, accept_loop(listener, responses, counters, i, delay));
                })?;
            handles.push(h);
        }
        Ok(Server {
            addr,
            counters,
            threads: handles,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Requests answered so far (a response was queued for each).
    pub fn requests(&self) -> u64 {
        self.counters
            .iter()
            .map(|c| c.0.load(Ordering::Relaxed))
            .sum()
    }

    /// Serves until the process ends.
    pub fn wait(self) {
        for h in self.threads {
            let _ = h.join();
        }
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
    responses: Responses,
    counters: Arc<[Counter]>,
    index: usize,
    delay: Duration,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let responses = responses.clone();
                let counters = counters.clone();
                tokio::task::spawn_local(async move {
                    conn::serve(stream, &responses, &counters[index].0, delay).await;
                });
            }
            // Out of file descriptors or a connection reset before accept: keep serving.
            Err(_) => tokio::time::sleep(Duration::from_millis(1)).await,
        }
    }
}
