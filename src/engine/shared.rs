//! What the connections of one thread share: the prepared request, the stop rule, the slots the
//! sweeper watches, the read space (buffer and head memory), the thread's `Stats` (opening a
//! connection is in `open`). Single-threaded by construction (`Rc`, `Cell`, `RefCell`): nothing
//! here is locked or atomic.

use std::cell::{Cell, OnceCell, RefCell};
use std::future::poll_fn;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::backoff::Backoffs;
use super::hops::{Follow, Hops};
use super::pace::{Pacer, Take};
use super::slot::Slot;
use super::tasks::Spawner;
use crate::clock::Tick;
use crate::net::TlsClient;
use crate::proto::h1::{Conn, ReadSpace};
use crate::proto::h2::{self as lane_h2, Counters as ByteCounters, Lane, Prepared};
use crate::route::Endpoint;
use crate::stats::timeline::{Gauges, Recorder};
use crate::stats::{Counters, Failure, Live, LiveHist, Stats};

/// Size of the per-thread read buffer every HTTP/1.1 connection of the thread reads into.
const READ_BYTES: usize = 64 * 1024;

/// When a thread stops admitting new request attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Not started yet (or aborted): admit nothing.
    Closed,
    /// This many attempts left for the thread.
    Budget(u64),
    /// Admit until this instant.
    Deadline(Tick),
    /// Open model: the pacer decides.
    Paced,
}

/// Which lane a new connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneChoice {
    Http1,
    /// HTTP/2 with prior knowledge (h2c) on plain TCP, or required through ALPN on TLS.
    Http2,
    /// TLS: whatever the server picks with ALPN.
    Alpn,
}

/// The fixed inputs of one thread.
#[derive(Debug, Clone)]
pub struct Setup {
    /// HTTP/1.1 request bytes.
    pub request: Bytes,
    /// The same with `Connection: close`, for the last request of a connection (--rpc).
    pub request_close: Bytes,
    /// The CONNECT request that opens each connection through --proxy, when it tunnels.
    pub tunnel: Option<Bytes>,
    /// The method is idempotent: a request that crossed a keep-alive close may go again.
    pub retry_safe: bool,
    /// The same request for HTTP/2.
    pub h2_request: Prepared,
    pub head_request: bool,
    /// Requests per connection before it is re-opened (--rpc; 1 without keep-alive).
    pub rpc: Option<u64>,
    /// Poll for events instead of sleeping (--busy-poll).
    pub busy_poll: bool,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub endpoint: Arc<Endpoint>,
    /// Connections of this thread.
    pub connections: usize,
    /// HTTP/2 streams per connection (1 for HTTP/1.1).
    pub streams: usize,
    pub lane: LaneChoice,
    pub tls: Option<TlsClient>,
    pub h2: lane_h2::Settings,
    /// How long in-flight requests may finish after the run is told to stop.
    pub drain: Duration,
    /// When the connection phase ends (--setup-timeout): connects still under way are
    /// abandoned, and the run starts with the connections that are open.
    pub setup_deadline: Instant,
    /// --setup-timeout, for messages.
    pub setup_timeout: Duration,
    /// Set from outside (Ctrl-C): stop sending, drain, end.
    pub stop: Arc<AtomicBool>,
    /// Where the thread publishes its progress, when a display wants it.
    pub live: Option<Arc<Live>>,
    /// --redirect: what following needs; `None` when redirects are answers.
    pub follow: Option<Arc<Follow>>,
}

/// An admitted request attempt.
#[derive(Debug, Clone, Copy)]
pub struct Admitted {
    /// When it actually starts.
    pub start: Tick,
    /// Open model: when it was meant to be sent (latency counts from here).
    pub intended: Option<Tick>,
    /// Sent during --warmup: not recorded.
    pub warmup: bool,
    /// Times it was sent again after a server refused it unprocessed (HTTP/2 GOAWAY).
    pub retries: u8,
}

/// Counts open connections: dropped with the connection, whichever path drops it.
#[derive(Debug)]
pub struct OpenGuard(pub(super) Rc<Cell<u64>>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

/// An open HTTP/1.1 connection.
pub struct OpenConn {
    pub conn: Conn,
    pub(super) _open: OpenGuard,
}

/// An open HTTP/2 connection: the handle that starts streams. The connection itself runs as a
/// task of its own on this thread (never on another), holding the open-connection guard.
pub struct OpenH2 {
    pub lane: Lane,
    /// The server's MAX_CONCURRENT_STREAMS, known before the first request.
    pub max_streams: usize,
}

/// A connection, in the lane the server agreed to.
pub enum Connected {
    H1(OpenConn),
    H2(OpenH2),
}

pub struct Shared {
    pub setup: Setup,
    /// `connections x streams` slots; connection `g` owns slots `g*streams ..(g+1)*streams`.
    pub slots: Box<[Slot]>,
    pub stats: RefCell<Stats>,
    pub read_space: RefCell<ReadSpace>,
    /// Set when the drain is over: nothing new starts.
    pub stop: Cell<bool>,
    pub limit: Cell<Limit>,
    /// When in-flight attempts stop being waited for (duration mode).
    pub drain_end: Cell<Option<Instant>>,
    /// The end of the measured window (duration mode, or a stop request): responses completed
    /// after it are counted as completed in the drain.
    pub window_end: Cell<Option<Tick>>,
    /// The thread acted on an outside stop request.
    pub interrupted: Cell<bool>,
    /// The connection phase is over (its deadline passed): no pre-connect starts any more.
    pub setup_over: Cell<bool>,
    /// Latencies since the last publication, when a display wants them.
    pub interval: Option<RefCell<LiveHist>>,
    /// Bytes of all HTTP/2 connections of the thread.
    pub h2_bytes: Rc<ByteCounters>,
    /// Open model: the thread's schedule, set with the start signal.
    pub pacer: OnceCell<Pacer>,
    /// Closed model: attempts that start before this are the warm-up.
    pub warmup_end: Cell<Option<Tick>>,
    /// The last completed (recorded) response, for the completion gap.
    pub last_done: Cell<Option<Tick>>,
    /// When the thread got the start signal (pauses before it are not the run's).
    pub started: Cell<Option<Instant>>,
    /// Connections open right now.
    pub(super) open: Rc<Cell<u64>>,
    /// Tasks that run beside the connections: sweeper, pacer, HTTP/2 connection drivers.
    pub tasks: Spawner,
    /// Connections waiting between failed connects, for the sweeper to wake.
    pub backoffs: Backoffs,
    /// Index into `addrs` of the address that accepted last.
    pub(super) preferred: Cell<usize>,
    /// `setup.timeout` in ns, for the check on every completed response.
    pub timeout_ns: u64,
    /// --redirect: the thread's redirect chains.
    pub hops: Option<RefCell<Hops>>,
    /// The measured window second by second, from the start signal on.
    pub timeline: RefCell<Option<Recorder>>,
}

impl Shared {
    pub fn new(setup: Setup) -> Shared {
        let slots = (0..setup.connections * setup.streams.max(1))
            .map(|_| Slot::default())
            .collect();
        let interval = setup
            .live
            .as_ref()
            .map(|_| RefCell::new(LiveHist::default()));
        Shared {
            slots,
            stats: RefCell::new(Stats::default()),
            read_space: RefCell::new(ReadSpace::new(READ_BYTES)),
            stop: Cell::new(false),
            limit: Cell::new(Limit::Closed),
            drain_end: Cell::new(None),
            window_end: Cell::new(None),
            interrupted: Cell::new(false),
            setup_over: Cell::new(false),
            interval,
            h2_bytes: Rc::new(ByteCounters::default()),
            pacer: OnceCell::new(),
            warmup_end: Cell::new(None),
            last_done: Cell::new(None),
            started: Cell::new(None),
            open: Rc::new(Cell::new(0)),
            tasks: Spawner::default(),
            backoffs: Backoffs::default(),
            preferred: Cell::new(0),
            timeout_ns: u64::try_from(setup.timeout.as_nanos()).unwrap_or(u64::MAX),
            hops: setup.follow.clone().map(|f| RefCell::new(Hops::new(f))),
            timeline: RefCell::new(None),
            setup,
        }
    }

    /// The slots of connection `group`: one per stream.
    pub fn group_slots(&self, group: usize) -> &[Slot] {
        let n = self.setup.streams.max(1);
        &self.slots[group * n..(group + 1) * n]
    }

    /// The next request attempt for slot `index`, or `None` when the run is over for it. In the
    /// closed model it starts now; in the open model it waits until a request falls due. Every
    /// admitted attempt is counted (as a recorded attempt or a warm-up one) and must end one way.
    pub async fn next_attempt(&self, index: usize) -> Option<Admitted> {
        match self.pacer.get() {
            None => self.admit(),
            Some(_) => poll_fn(|cx| self.poll_paced(index, cx)).await,
        }
    }

    /// Open model: the next attempt for slot `index` once one falls due, under the slot's guard
    /// (`None` when the run is over for it, or the slot was cancelled while waiting).
    pub fn poll_paced(&self, index: usize, cx: &mut Context<'_>) -> Poll<Option<Admitted>> {
        let Some(pacer) = self.pacer.get() else {
            return Poll::Ready(self.admit());
        };
        if self.slots[index].poll_guard(cx).is_err() || self.stop.get() {
            return Poll::Ready(None);
        }
        let now = Instant::now();
        match pacer.take(now) {
            Take::Due { index: j, intended } => {
                // The schedule is in `Instant`s; the tick is read beside `now`, so that the
                // intended time converts against a pair of readings made together.
                let start = Tick::now();
                let intended = start.before(now.saturating_duration_since(intended));
                let warmup = j < pacer.recorded_from;
                let mut s = self.stats.borrow_mut();
                if warmup {
                    s.warmup_requests += 1;
                } else {
                    s.attempts += 1;
                    s.last_send = Some(now);
                }
                Poll::Ready(Some(Admitted {
                    start,
                    intended: Some(intended),
                    warmup,
                    retries: 0,
                }))
            }
            Take::Wait => {
                pacer.wait(index, cx.waker());
                Poll::Pending
            }
            Take::Over => Poll::Ready(None),
        }
    }

    /// Closed model: admits an attempt that starts now, if the run admits any more.
    pub fn admit(&self) -> Option<Admitted> {
        if self.stop.get() {
            return None;
        }
        let now = Tick::now();
        // Warm-up attempts do not use up the count: -n counts recorded requests.
        let warmup = self.warmup_end.get().is_some_and(|end| now < end);
        match self.limit.get() {
            Limit::Closed | Limit::Paced => return None,
            _ if warmup => {}
            Limit::Budget(0) => return None,
            Limit::Budget(n) => self.limit.set(Limit::Budget(n - 1)),
            Limit::Deadline(d) if now >= d => return None,
            Limit::Deadline(_) => {}
        }
        let mut s = self.stats.borrow_mut();
        if warmup {
            s.warmup_requests += 1;
        } else {
            s.attempts += 1;
        }
        Some(Admitted {
            start: now,
            intended: None,
            warmup,
            retries: 0,
        })
    }

    /// Whether no more attempts will be admitted (without using one up).
    pub fn is_over(&self) -> bool {
        if let Some(pacer) = self.pacer.get() {
            return self.stop.get() || pacer.is_over();
        }
        self.stop.get()
            || match self.limit.get() {
                Limit::Closed | Limit::Budget(0) | Limit::Paced => true,
                Limit::Budget(_) => false,
                Limit::Deadline(d) => Tick::now() >= d,
            }
    }

    /// Whether attempts are a fixed number (count mode) rather than a time.
    pub fn counts_down(&self) -> bool {
        matches!(self.limit.get(), Limit::Budget(_))
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
            connect_failures: s.conns.connect_failures,
            // A sum over the status counts, a few times a second: nothing on the request path.
            error_status: s.completed - s.successful(),
        };
        drop(s);
        live.publish(&counters, &mut interval.borrow_mut());
    }

    /// Takes the timeline's second that ended by `now` (or, `last`, what is left of it when the
    /// thread is done). Once a second: differences of cumulative figures, nothing per request.
    pub fn take_second(&self, now: Instant, last: bool) {
        let mut timeline = self.timeline.borrow_mut();
        let Some(recorder) = timeline.as_mut() else {
            return;
        };
        let gauges = |end| Gauges {
            h2_bytes_in: self.h2_bytes.read.get(),
            open: self.open.get(),
            scheduled: self.pacer.get().map_or(0, |p| p.scheduled_before(end)),
            dropped: self.pacer.get().map_or(0, Pacer::dropped),
        };
        recorder.take(now, last, &self.stats.borrow(), gauges);
    }

    /// Counts a failed attempt, keeping the first message of its class.
    pub fn fail(&self, class: Failure, detail: impl FnOnce() -> String) {
        self.stats.borrow_mut().failures.add_with(class, detail);
    }
}
