//! --metrics-listen: the run's metrics for Prometheus at `GET /metrics`, served by a thread of
//! its own, one connection at a time, each answered and closed: a request head is read within
//! `HEAD_LIMIT` bytes and `IO_TIMEOUT`, every other path is 404 and every other method 405, so
//! a client can neither grow spate's memory nor hold the endpoint. Counts the scrapes that saw
//! the run over, so that the run can wait for one. Must not touch the load threads.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::exposition::{CONTENT_TYPE, Labels, text};
use crate::stats::running::Running;

/// The most of a request head read.
pub const HEAD_LIMIT: usize = 8 << 10;
/// How long a client may take to send its head, or to take the answer.
pub const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// How often the listener looks for a connection and for the end.
const POLL: Duration = Duration::from_millis(20);

/// `ADDR` of --metrics-listen: HOST:PORT, or a port alone (on 127.0.0.1).
pub fn address(given: &str) -> Result<SocketAddr, String> {
    let with_host = match given.parse::<u16>() {
        Ok(port) => format!("127.0.0.1:{port}"),
        Err(_) => given.to_owned(),
    };
    with_host.parse().map_err(|_| {
        format!(
            "--metrics-listen {given}: give HOST:PORT (an address, e.g. 127.0.0.1:9464) or a port"
        )
    })
}

/// The serving thread.
pub struct Endpoint {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    /// Scrapes answered with the figures of a run that was over.
    last: Arc<AtomicU64>,
    thread: JoinHandle<()>,
}

impl Endpoint {
    /// Serves `figures` under `labels` on `listener`.
    pub fn serve(
        listener: TcpListener,
        figures: Arc<Mutex<Running>>,
        labels: Labels,
    ) -> Result<Endpoint, String> {
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("--metrics-listen {addr}: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let last = Arc::new(AtomicU64::new(0));
        let (s, n) = (stop.clone(), last.clone());
        let thread = std::thread::Builder::new()
            .name("spate-metrics".into())
            .spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((conn, _)) => {
                            if answer(conn, &figures, &labels) {
                                n.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        Err(_) => std::thread::sleep(POLL),
                    }
                }
            })
            .map_err(|e| format!("--metrics-listen: cannot start its thread: {e}"))?;
        Ok(Endpoint {
            addr,
            stop,
            last,
            thread,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until a scrape has seen the run over, or `linger` has passed; then stops.
    pub fn linger(self, linger: Duration) {
        let until = Instant::now() + linger;
        while self.last.load(Ordering::Relaxed) == 0 && Instant::now() < until {
            std::thread::sleep(POLL);
        }
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

/// Answers one connection; whether it was a scrape that saw the run over.
fn answer(mut conn: TcpStream, figures: &Mutex<Running>, labels: &Labels) -> bool {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(IO_TIMEOUT));
    let _ = conn.set_write_timeout(Some(IO_TIMEOUT));
    let Some(head) = read_head(&mut conn) else {
        return false;
    };
    let mut over = false;
    let (status, body, scrape) = route(&head, || {
        let r = figures.lock().unwrap_or_else(|e| e.into_inner());
        over = r.over;
        text(&r, labels)
    });
    let content_type = match scrape {
        true => CONTENT_TYPE,
        false => "text/plain; charset=utf-8",
    };
    let allow = match status {
        "405 Method Not Allowed" => "Allow: GET\r\n",
        _ => "",
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{allow}Connection: close\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(reply.as_bytes()).is_ok() && scrape && over
}

/// The request head, read up to its blank line within `HEAD_LIMIT`; `None` if it is not there
/// in time or in bounds.
fn read_head(conn: &mut TcpStream) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    let deadline = Instant::now() + IO_TIMEOUT;
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() >= HEAD_LIMIT || Instant::now() >= deadline {
            return None;
        }
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    Some(head)
}

/// The status, body and whether it is a scrape, for a request `head`; `metrics` makes the body
/// of a scrape.
fn route(head: &[u8], metrics: impl FnOnce() -> String) -> (&'static str, String, bool) {
    let mut fields = [httparse::EMPTY_HEADER; 32];
    let mut req = httparse::Request::new(&mut fields);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => {
            return (
                "400 Bad Request",
                "a request head was expected\n".into(),
                false,
            );
        }
    }
    let path = req.path.unwrap_or("").split('?').next().unwrap_or("");
    match (req.method, path) {
        (Some("GET"), "/metrics") => ("200 OK", metrics(), true),
        (_, "/metrics") => (
            "405 Method Not Allowed",
            "only GET /metrics\n".into(),
            false,
        ),
        _ => ("404 Not Found", "only GET /metrics\n".into(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_get_metrics_is_a_scrape() {
        let m = || "m\n".to_owned();
        assert_eq!(
            route(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", m).0,
            "200 OK"
        );
        assert!(route(b"GET /metrics?x=1 HTTP/1.1\r\n\r\n", m).2);
        assert_eq!(
            route(b"POST /metrics HTTP/1.1\r\n\r\n", m).0,
            "405 Method Not Allowed"
        );
        assert_eq!(route(b"GET / HTTP/1.1\r\n\r\n", m).0, "404 Not Found");
        assert_eq!(
            route(b"GET /metrics/../x HTTP/1.1\r\n\r\n", m).0,
            "404 Not Found"
        );
        assert_eq!(route(b"\x00\x01 nonsense\r\n\r\n", m).0, "400 Bad Request");
    }

    /// A scrape of `addr`: the answer's status line.
    fn scrape(addr: SocketAddr) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        let _ = c.read_to_string(&mut text);
        text.lines().next().unwrap_or_default().to_owned()
    }

    #[test]
    fn a_silent_or_endless_client_holds_nothing_and_grows_nothing() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let figures = Arc::new(Mutex::new(Running::default()));
        let e = Endpoint::serve(listener, figures.clone(), Labels::new("t", None)).unwrap();
        let addr = e.addr();
        // One that never sends, one that sends a head without end: each is let go.
        let _silent = TcpStream::connect(addr).unwrap();
        let mut endless = TcpStream::connect(addr).unwrap();
        let junk = vec![b'a'; 4 * HEAD_LIMIT];
        let _ = endless.write_all(&junk);
        let mut rest = Vec::new();
        let _ = endless.read_to_end(&mut rest);
        assert!(rest.is_empty(), "no answer to a head past the bound");
        assert_eq!(scrape(addr), "HTTP/1.1 200 OK");
        // A scrape that saw the run over ends the linger.
        assert_eq!(e.last.load(Ordering::Relaxed), 0, "the run was not over");
        figures.lock().unwrap().over = true;
        assert_eq!(scrape(addr), "HTTP/1.1 200 OK");
        let t = Instant::now();
        while e.last.load(Ordering::Relaxed) == 0 && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(POLL);
        }
        assert_eq!(e.last.load(Ordering::Relaxed), 1);
        e.linger(Duration::from_secs(60));
    }

    #[test]
    fn an_address_or_a_port_alone_on_loopback() {
        assert_eq!(address("9464").unwrap().to_string(), "127.0.0.1:9464");
        assert_eq!(address("0.0.0.0:9464").unwrap().to_string(), "0.0.0.0:9464");
        assert_eq!(address("[::1]:9").unwrap().to_string(), "[::1]:9");
        assert!(address("localhost").is_err());
    }
}
