//! Test helpers: scripted loopback HTTP servers (blocking, a thread per connection, bounded by
//! socket timeouts so nothing can hang the suite) and shortcuts to run a plan.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use spate::engine;
use spate::plan::{Plan, Stop};
use spate::report::{Report, ReportOptions};
use spate::serve::{ServeConfig, Server};
use spate::stats::RunOutput;
use spate::target::Target;

/// A request as a scripted server saw it.
#[derive(Debug, Clone)]
pub struct Request {
    pub head: String,
    pub body: Vec<u8>,
}

/// One accepted connection of a scripted server.
pub struct Peer {
    pub stream: TcpStream,
    buf: Vec<u8>,
    requests: Arc<AtomicU64>,
}

impl Peer {
    /// Reads one request (head and Content-Length body); `None` at EOF or error.
    pub fn read_request(&mut self) -> Option<Request> {
        loop {
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.buf[..end + 4]).into_owned();
                let len = head
                    .lines()
                    .find_map(|l| {
                        let (n, v) = l.split_once(':')?;
                        n.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                while self.buf.len() < end + 4 + len {
                    self.fill()?;
                }
                let body = self.buf[end + 4..end + 4 + len].to_vec();
                self.buf.drain(..end + 4 + len);
                self.requests.fetch_add(1, Ordering::SeqCst);
                return Some(Request { head, body });
            }
            self.fill()?;
        }
    }

    fn fill(&mut self) -> Option<()> {
        let mut chunk = [0u8; 4096];
        match self.stream.read(&mut chunk) {
            Ok(0) | Err(_) => None,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Some(())
            }
        }
    }

    pub fn write(&mut self, bytes: &[u8]) -> bool {
        self.stream.write_all(bytes).is_ok()
    }
}

/// A scripted server: `handler` runs once per accepted connection, on its own thread.
pub struct Scripted {
    pub addr: SocketAddr,
    requests: Arc<AtomicU64>,
    connections: Arc<AtomicU64>,
}

impl Scripted {
    pub fn start(handler: impl Fn(&mut Peer) + Send + Sync + 'static) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicU64::new(0));
        let connections = Arc::new(AtomicU64::new(0));
        let handler = Arc::new(handler);
        let (r, c) = (requests.clone(), connections.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                c.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
                let _ = stream.set_write_timeout(Some(Duration::from_secs(30)));
                let handler = handler.clone();
                let requests = r.clone();
                std::thread::spawn(move || {
                    let mut peer = Peer {
                        stream,
                        buf: Vec::new(),
                        requests,
                    };
                    handler(&mut peer);
                });
            }
        });
        Scripted {
            addr,
            requests,
            connections,
        }
    }

    /// A server that answers every request with `response`.
    pub fn constant(response: &'static [u8]) -> Scripted {
        Scripted::start(move |p| {
            while p.read_request().is_some() {
                if !p.write(response) {
                    return;
                }
            }
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::SeqCst)
    }
}

/// The built-in target on a free loopback port, with `config`'s behaviour.
pub fn builtin(config: ServeConfig) -> Server {
    Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        ..config
    })
    .unwrap()
}

pub fn plan(url: &str, connections: u32, stop: Stop) -> Plan {
    let mut p = Plan::new(Target::parse(url).unwrap());
    p.connections = connections;
    p.threads = 2;
    p.stop = stop;
    p.timeout = Duration::from_secs(10);
    p.connect_timeout = Duration::from_secs(5);
    p
}

/// Runs the plan and checks the accounting invariant, which every test relies on.
pub fn run(plan: &Plan) -> (RunOutput, Report) {
    let out = engine::run(plan).expect("run");
    let s = &out.stats;
    assert!(
        s.is_balanced(),
        "accounting: attempted {} != completed {} + failed {} + interrupted {} (or statuses != completed)",
        s.attempts,
        s.completed,
        s.failed(),
        s.interrupted
    );
    let summary = Report::new(plan, &out, &ReportOptions::default());
    let r = &summary.requests;
    assert_eq!(r.attempted, r.completed + r.failed + r.interrupted);
    assert_eq!(
        r.completed,
        summary.status_codes.iter().map(|x| x.count).sum::<u64>()
    );
    assert_eq!(r.completed, summary.latency.count);
    (out, summary)
}

pub fn requests(n: u64) -> Stop {
    Stop::Requests(n)
}

/// Runs the spate binary with `args` and collects its exit status and output.
pub fn spate(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(args)
        .output()
        .unwrap()
}

/// `spate --no-progress --format json ARGS` for a run in which nothing succeeded: exit 1, and
/// its JSON result all the same.
pub fn failed_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--no-progress", "--format", "json"];
    all.extend_from_slice(args);
    let out = spate(&all);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `spate ARGS` refused as a usage error: exit 2 and one line on stderr, which is returned.
pub fn usage_error(args: &[&str]) -> String {
    let out = spate(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    err
}

/// Fails the test, with the process's stderr, unless it exited 0.
pub fn succeeded(out: &std::process::Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `spate --no-progress --format json ARGS`, which must exit 0 (its stderr is shown if not),
/// and returns the JSON result.
pub fn spate_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--no-progress", "--format", "json"];
    all.extend_from_slice(args);
    let out = spate(&all);
    succeeded(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Whether the program `name` (from a Debian package) runs here, for a test that needs it. Under
/// SPATE_REQUIRE_TOOLS=1 (CI installs them all) a missing one fails the test; elsewhere the test
/// says it was skipped.
pub fn have(name: &str) -> bool {
    required(name, "--version", "SPATE_REQUIRE_TOOLS")
}

/// Whether `name` runs (with `arg`, which must not fail); if not, fails when `env` is set, else
/// says the test was skipped.
pub fn required(name: &str, arg: &str, env: &str) -> bool {
    let found = std::process::Command::new(name).arg(arg).output().is_ok();
    if !found {
        assert!(
            std::env::var_os(env).is_none(),
            "{env} is set but {name} is not installed"
        );
        eprintln!("skipped: {name} is not installed (.ci/run installs it)");
    }
    found
}

/// The Python of target/test-venv if it can import `module` (scripts/test-venv.sh installs the
/// pinned packages there); under SPATE_REQUIRE_TOOLS=1 its absence fails the test, elsewhere the
/// test says it was skipped.
pub fn test_python(module: &str) -> Option<std::path::PathBuf> {
    let python =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-venv/bin/python");
    let found = std::process::Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("SPATE_REQUIRE_TOOLS").is_none(),
            "SPATE_REQUIRE_TOOLS is set but target/test-venv cannot import {module}: run scripts/test-venv.sh"
        );
        eprintln!(
            "skipped: target/test-venv cannot import {module} (scripts/test-venv.sh makes it)"
        );
    }
    found.then_some(python)
}

/// A server process of another project's, killed when the test ends.
pub struct Child(pub std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `cmd` (a server of another project's) with its output discarded, and waits until it
/// listens on `addr`, which it was told to use.
pub fn spawn_listening(cmd: &mut std::process::Command, addr: SocketAddr) -> std::process::Child {
    let child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while TcpStream::connect(addr).is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{cmd:?} never listened on {addr}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// A loopback address whose port was free a moment ago, for a server that takes its port on
/// the command line.
pub fn free_addr() -> SocketAddr {
    // Free over UDP too: servers of HTTP/3 take the same port number for QUIC, and the
    // suite's QUIC clients hold UDP ports of their own that TCP knows nothing of.
    loop {
        let addr = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        if std::net::UdpSocket::bind(addr).is_ok() {
            return addr;
        }
    }
}

/// A directory of the test's own under the system's temporary directory, removed with it.
pub struct ScratchDir(pub std::path::PathBuf);

impl ScratchDir {
    /// A new empty directory named for `what` and this process.
    pub fn new(what: &str) -> ScratchDir {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("spate-it-{what}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        ScratchDir(dir)
    }

    /// The path of `name` in it, as a string for a command line.
    pub fn file(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_owned()
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
