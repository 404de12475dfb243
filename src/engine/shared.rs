//! What the connections of one thread share: the prepared request, the stop rule, the slots the
//! sweeper watches, the scratch read buffer and the thread's `Stats`. Single-threaded by
//! construction (`Rc`, `Cell`, `RefCell`): nothing here is locked or atomic.

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::slot::Slot;
use crate::net;
use crate::proto::h1::Conn;
use crate::proto::{Cause, Fail};
use crate::stats::{Counters, Failure, Live, LiveHist, Stats};

/// Size of the per-thread read buffer every connection of the thread reads into.
const SCRATCH_BYTES: usize = 64 * 1024;

/// When a thread stops admitting new request attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Not started yet (or aborted): admit nothing.
    Closed,
    /// This many attempts left for the thread.
    Budget(u64),
    /// Admit until this instant.
    Deadline(Instant),
}

/// The fixed inputs of one thread.
#[derive(Debug, Clone)]
pub struct Setup {
    pub request: Bytes,
    pub head_request: bool,
    pub keep_alive: bool,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub addrs: Arc<[SocketAddr]>,
    pub connections: usize,
    /// How long in-flight requests may finish after the run is told to stop.
    pub drain: Duration,
    /// Set from outside (Ctrl-C): stop sending, drain, end.
    pub stop: Arc<AtomicBool>,
    /// Where the thread publishes its progress, when a display wants it.
    pub live: Option<Arc<Live>>,
}

/// An open connection; dropping it closes the socket and updates the thread's count of open
/// connections, whichever path drops it.
pub struct OpenConn {
    pub conn: Conn,
    open: Rc<Cell<u64>>,
}

impl Drop for OpenConn {
    fn drop(&mut self) {
        self.open.set(self.open.get().saturating_sub(1));
    }
}

pub struct Shared {
    pub setup: Setup,
    pub slots: Box<[Slot]>,
    pub stats: RefCell<Stats>,
    pub scratch: RefCell<Box<[u8]>>,
    /// Set when the drain is over: nothing new starts.
    pub stop: Cell<bool>,
    pub limit: Cell<Limit>,
    /// When in-flight attempts stop being waited for (duration mode).
    pub drain_end: Cell<Option<Instant>>,
    /// The thread acted on an outside stop request.
    pub interrupted: Cell<bool>,
    /// Latencies since the last publication, when a display wants them.
    pub interval: Option<RefCell<LiveHist>>,
    /// Connections open right now.
    open: Rc<Cell<u64>>,
    /// Index into `addrs` of the address that accepted last.
    preferred: Cell<usize>,
}

impl Shared {
    pub fn new(setup: Setup) -> Shared {
        let slots = (0..setup.connections).map(|_| Slot::default()).collect();
        let interval = setup
            .live
            .as_ref()
            .map(|_| RefCell::new(LiveHist::default()));
        Shared {
            interrupted: Cell::new(false),
            interval,
            open: Rc::new(Cell::new(0)),
            setup,
            slots,
            stats: RefCell::new(Stats::default()),
            scratch: RefCell::new(vec![0; SCRATCH_BYTES].into_boxed_slice()),
            stop: Cell::new(false),
            limit: Cell::new(Limit::Closed),
            drain_end: Cell::new(None),
            preferred: Cell::new(0),
        }
    }

    /// Admits one more request attempt, returning its start time, or `None` when the run is over
    /// for this thread. Every admitted attempt is counted and must end one way.
    pub fn admit(&self) -> Option<Instant> {
        if self.stop.get() {
            return None;
        }
        let now = Instant::now();
        match self.limit.get() {
            Limit::Closed | Limit::Budget(0) => return None,
            Limit::Budget(n) => self.limit.set(Limit::Budget(n - 1)),
            Limit::Deadline(d) if now >= d => return None,
            Limit::Deadline(_) => {}
        }
        self.stats.borrow_mut().attempts += 1;
        Some(now)
    }

    pub fn counts_down(&self) -> bool {
        matches!(self.limit.get(), Limit::Budget(_))
    }

    /// Opens a connection, timing it; `reconnect` says it replaces one that closed mid-run.
    pub async fn open(&self, reconnect: bool) -> Result<OpenConn, Fail> {
        let start = Instant::now();
        match net::connect(&self.setup.addrs, self.preferred.get()).await {
            Ok((stream, i)) => {
                self.preferred.set(i);
                let mut s = self.stats.borrow_mut();
                s.connect.record_duration(start.elapsed());
                if reconnect {
                    s.conns.reconnects += 1;
                } else {
                    s.conns.established += 1;
                }
                self.open.set(self.open.get() + 1);
                Ok(OpenConn {
                    conn: Conn::new(stream),
                    open: self.open.clone(),
                })
            }
            Err(e) => {
                let mut s = self.stats.borrow_mut();
                s.connect_failed(|| e.to_string());
                if is_fd_exhaustion(&e) {
                    s.fd_exhausted += 1;
                }
                drop(s);
                Err(Fail {
                    class: Failure::Connect,
                    cause: Cause::Io(e),
                })
            }
        }
    }

    /// Whether the outside world asked the run to stop.
    pub fn stop_requested(&self) -> bool {
        self.setup.stop.load(Ordering::Relaxed)
    }

    /// Publishes counters and the interval's latencies to the display, if there is one.
    pub fn publish(&self) {
        let (Some(live), Some(interval)) = (&self.setup.live, &self.interval) else {
            return;
        };
        let s = self.stats.borrow();
        let counters = Counters {
            attempts: s.attempts,
            completed: s.completed,
            failures: s.failures.counts(),
            open: self.open.get(),
        };
        drop(s);
        live.publish(&counters, &mut interval.borrow_mut());
    }

    /// Counts a failed attempt, keeping the first message of its class.
    pub fn fail(&self, class: Failure, detail: impl FnOnce() -> String) {
        self.stats.borrow_mut().failures.add_with(class, detail);
    }
}

/// Out of file descriptors, for the process (EMFILE) or the system (ENFILE).
fn is_fd_exhaustion(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}
