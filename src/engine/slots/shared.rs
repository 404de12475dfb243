//! What the connections of one thread share, by concern: the fixed inputs (`Setup`), the slots
//! the sweeper watches, the read space (buffer and head memory), admission (`gate`), recording
//! (`record`) and opening (`Dial` here, the connect itself in `open`). Single-threaded by
//! construction (`Rc`, `Cell`, `RefCell`): nothing here is locked or atomic.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::engine::admit::backoff::Backoffs;
pub use crate::engine::admit::gate::{Admitted, Gate, Limit};
use crate::engine::admit::pace::Pacer;
use crate::engine::protocols::watch::Watch;
use crate::engine::slots::record::Record;
use crate::engine::slots::slot::Slot;
use crate::engine::slots::tasks::Spawner;
use crate::engine::workloads::hops::{Follow, Hops};
use crate::engine::workloads::workload::Work;
use crate::net::TlsClient;
use crate::net::quic::QuicClient;
use crate::proto::h1::{Conn, ReadSpace};
use crate::proto::h2::{self as lane_h2, Lane, Prepared};
use crate::route::Endpoint;
use crate::stats::timeline::Gauges;
use crate::stats::{Counters, Failure, Live};

/// Size of the per-thread read buffer every HTTP/1.1 connection of the thread reads into.
const READ_BYTES: usize = 64 * 1024;

pub use crate::reach::LaneChoice;

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
    /// --idle-timeout: once a streamed response's first byte arrived, the longest wait for
    /// the next, instead of the request timeout.
    pub idle: Option<Duration>,
    /// What the slots send and watch besides the run's own request, if anything.
    pub feature: Feature,
    pub endpoint: Arc<Endpoint>,
    /// Connections of this thread.
    pub connections: usize,
    /// HTTP/2 or HTTP/3 streams per connection (1 for HTTP/1.1).
    pub streams: usize,
    pub lane: LaneChoice,
    pub tls: Option<TlsClient>,
    /// --http3: the QUIC client and the request as HTTP/3 sends it.
    pub h3: Option<Arc<H3Setup>>,
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
    /// Set by a thread whose script failed: every thread stops as for `stop`, but the run was
    /// not stopped from outside.
    pub script_halt: Arc<AtomicBool>,
    /// Where the thread publishes its progress, when a display wants it.
    pub live: Option<Arc<Live>>,
    /// --live-json: where the thread hands over each second of its timeline as it closes.
    pub board: Option<Arc<crate::stats::Board>>,
    /// -s: the script, when the thread needs a state of its own for it (with any feature: one
    /// that only shapes the request, or runs per request with none).
    pub script: Option<ScriptSetup>,
    /// The thread's index among the run's load threads.
    pub thread: usize,
    /// --stages of connections: the thread's part of the profile.
    pub staff: Option<Arc<crate::engine::admit::staff::Staffing>>,
}

/// The one feature a run's slots have beside a script's state: the plan refuses a request list
/// with --stream, --redirect or a script, and --stream with --redirect.
#[derive(Debug, Clone, Default)]
pub enum Feature {
    /// The run's own request, its responses read whole (or a script's, per request).
    #[default]
    None,
    /// --stream: how responses are watched.
    Stream(Arc<crate::plan::StreamPlan>),
    /// A request list's requests (MCP's calls among them), built once.
    List(Arc<ListSetup>),
    /// --redirect: what following needs.
    Follow(Arc<Follow>),
    /// `spate grpc`: each response judged by its gRPC status.
    Grpc(Arc<GrpcSetup>),
}

impl Feature {
    pub fn stream(&self) -> Option<&Arc<crate::plan::StreamPlan>> {
        match self {
            Feature::Stream(s) => Some(s),
            Feature::Grpc(g) => g.stream.as_ref(),
            _ => None,
        }
    }

    pub fn list(&self) -> Option<&Arc<ListSetup>> {
        match self {
            Feature::List(l) => Some(l),
            Feature::Grpc(g) => g.list.as_ref(),
            _ => None,
        }
    }

    pub fn follow(&self) -> Option<&Arc<Follow>> {
        match self {
            Feature::Follow(f) => Some(f),
            _ => None,
        }
    }

    pub fn grpc(&self) -> Option<&crate::plan::GrpcPlan> {
        match self {
            Feature::Grpc(g) => Some(&g.call),
            _ => None,
        }
    }
}

/// What --http3's connections need: the QUIC client and the request.
#[derive(Debug)]
pub struct H3Setup {
    pub quic: QuicClient,
    pub request: Arc<crate::proto::h3::Request>,
}

/// One request of a list, built once in the form of each protocol the run may speak.
#[derive(Debug, Clone)]
pub struct Listed {
    /// HTTP/1.1's bytes.
    pub request: Bytes,
    /// The same with `Connection: close` (--rpc).
    pub request_close: Bytes,
    pub head_request: bool,
    pub retry_safe: bool,
    /// As an HTTP/2 stream sends it (empty where the run cannot speak HTTP/2).
    pub h2: lane_h2::Other,
    /// As HTTP/3 sends it (--http3).
    pub h3: Option<Arc<crate::proto::h3::Request>>,
}

/// A request list's requests and their order.
#[derive(Debug)]
pub struct ListSetup {
    pub requests: Vec<Listed>,
    pub order: crate::request_list::Order,
    /// `spate mcp`: the answers are judged, and counted by row.
    pub mcp: Option<Arc<crate::mcp::Prepared>>,
    /// The run's origin, for requests read back into HTTP/2's and HTTP/3's parts (MCP's
    /// sessions).
    pub scheme: &'static str,
    pub authority: String,
}

/// What `spate grpc`'s slots need: the call; a server-streaming call's stream plan, which
/// times its messages; the messages of a list (`-D` with several), sent in turn.
#[derive(Debug)]
pub struct GrpcSetup {
    pub call: crate::plan::GrpcPlan,
    pub stream: Option<Arc<crate::plan::StreamPlan>>,
    pub list: Option<Arc<ListSetup>>,
}

/// What a thread needs to make its script's state.
#[derive(Debug, Clone)]
pub struct ScriptSetup {
    pub script: Arc<crate::script::Script>,
    /// The run's plan, to build the thread's request again when its `init` shapes another.
    pub plan: Arc<crate::plan::Plan>,
    /// What `setup()` gave the thread.
    pub seed: crate::script::Seed,
}

/// Counts open connections: dropped with the connection, whichever path drops it.
#[derive(Debug)]
pub struct OpenGuard(pub(in crate::engine) Rc<Cell<u64>>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

/// An open HTTP/1.1 connection.
pub struct OpenConn {
    pub conn: Conn,
    pub(in crate::engine) _open: OpenGuard,
}

/// An open HTTP/2 connection: the handle that starts streams. The connection itself runs as a
/// task of its own on this thread (never on another), holding the open-connection guard.
pub struct OpenH2 {
    pub lane: H2Handle,
    /// The server's MAX_CONCURRENT_STREAMS, known before the first request.
    pub max_streams: usize,
}

/// An HTTP/2 connection's handle, by what its streams' responses are told to: nothing (the
/// static path), a `Watch` per stream slot (--stream), nothing but as a list's (a type of its
/// own, so that the static path's code has one caller), a script's `Heard`, MCP's
/// `Answering`, or --redirect's `Led`.
pub enum H2Handle {
    Plain(Lane),
    Watched(Lane<Watch>),
    Listed(Lane<crate::engine::workloads::list_lane::Listing>),
    Scripted(Lane<crate::engine::workloads::script_lane::Heard>),
    Answered(Lane<crate::engine::workloads::answering::Answering>),
    Followed(Lane<crate::engine::workloads::follow::Led>),
    Called(Lane<crate::proto::grpc::Call>),
    CalledStreams(Lane<crate::engine::workloads::called::Streaming>),
}

/// An open HTTP/3 connection: the handle that starts requests, and the QUIC connection under
/// it (its figures, its close). Its control streams run as a task of their own on this thread,
/// holding the open-connection guard.
pub struct OpenH3 {
    pub send: crate::proto::h3::Sender,
    pub quic: quinn::Connection,
}

/// A connection, in the lane the server agreed to.
pub enum Connected {
    H1(OpenConn),
    H2(OpenH2),
    H3(OpenH3),
}

/// What the connections of one thread share, by concern: the fixed inputs and the slots, when
/// attempts are admitted (`gate`), what is recorded (`rec`), what opening connections keeps
/// (`dial`), and the tasks beside the connections.
pub struct Shared {
    pub setup: Setup,
    /// `connections x streams` slots; connection `g` owns slots `g*streams ..(g+1)*streams`.
    pub slots: Box<[Slot]>,
    pub read_space: RefCell<ReadSpace>,
    /// Admission and pacing: the stop rule, the open model's schedule, the run's phases.
    pub gate: Gate,
    /// The thread's statistics and what feeds the display and the timeline.
    pub rec: Record,
    /// Opening connections: the open count, the address that accepted last, the back-offs.
    pub dial: Dial,
    /// Tasks that run beside the connections: sweeper, pacer, HTTP/2 connection drivers.
    pub tasks: Spawner,
    /// The workload every slot of the thread runs.
    pub work: Work,
    /// --redirect: the thread's redirect chains.
    pub hops: Option<RefCell<Hops>>,
    /// -s: the thread's script state, when it has one.
    pub script: Option<Rc<crate::script::Worker>>,
    /// A request list: the thread's choice of the next request.
    pub picker: Option<RefCell<crate::request_list::Picker>>,
    /// `spate mcp` with sessions: each slot's session and its requests, set as its connection
    /// opens (none when the session has no id and the slot no ids of its own).
    pub sessions: RefCell<Vec<Option<Rc<Conversation>>>>,
    /// `--session per-request`: sessions the server ended when asked (DELETE answered 2xx),
    /// counted by the tasks that ask.
    pub sessions_ended: Rc<Cell<u64>>,
    /// --stages of connections: which groups have links running.
    pub crews: Option<crate::engine::admit::staff::Crews>,
}

/// A session's requests: the list's, each with the session's id (and the slot's own JSON-RPC
/// ids where slots share the session), built once per session in the run's protocol's form.
#[derive(Debug)]
pub struct Conversation {
    pub requests: Vec<Listed>,
    /// The legacy HTTP+SSE transport: the session's stream, where the answers arrive, shared
    /// by the slots of the session (dropping the last closes the stream).
    pub listening: Option<Rc<crate::mcp::legacy::Listening>>,
    /// `--session per-request`: the DELETE that ends the session after its call.
    pub delete: Option<Bytes>,
    /// The JSON-RPC id of the list's first request (`mcp::id_of(0)`, or the slot's own with
    /// `--session shared`); request `i` has this plus `i`.
    pub first_id: u64,
}

impl Conversation {
    /// The JSON-RPC id of the list's request `i` in this session.
    pub fn id(&self, i: usize) -> u64 {
        self.first_id + i as u64
    }
}

/// What opening connections keeps between connections.
#[derive(Default)]
pub struct Dial {
    /// Connections open right now.
    pub(in crate::engine) open: Rc<Cell<u64>>,
    /// Index into `addrs` of the address that accepted last.
    pub(in crate::engine) preferred: Cell<usize>,
    /// Connections waiting between failed connects, for the sweeper to wake.
    pub backoffs: Backoffs,
}

impl Shared {
    pub fn new(setup: Setup, script: Option<Rc<crate::script::Worker>>) -> Shared {
        let slots = (0..setup.connections * setup.streams.max(1))
            .map(|_| Slot::default())
            .collect();
        Shared {
            slots,
            read_space: RefCell::new(ReadSpace::new(READ_BYTES)),
            gate: Gate::default(),
            rec: Record::new(&setup),
            dial: Dial::default(),
            tasks: Spawner::default(),
            work: Work::of(&setup, script.as_deref()),
            hops: setup
                .feature
                .follow()
                .cloned()
                .map(|f| RefCell::new(Hops::new(f))),
            picker: setup.feature.list().map(|l| {
                RefCell::new(match &l.mcp {
                    Some(m) => crate::request_list::Picker::scheduled(
                        m.schedule.clone(),
                        l.order,
                        setup.thread,
                    ),
                    None => {
                        crate::request_list::Picker::new(l.requests.len(), l.order, setup.thread)
                    }
                })
            }),
            sessions: RefCell::new(Vec::new()),
            sessions_ended: Rc::new(Cell::new(0)),
            crews: setup
                .staff
                .as_ref()
                .map(|_| crate::engine::admit::staff::Crews::new(setup.connections)),
            setup,
            script,
        }
    }

    /// The place of `slot` among the thread's slots.
    pub fn slot_index(&self, slot: &Slot) -> usize {
        (std::ptr::from_ref(slot).addr() - self.slots.as_ptr().addr()) / size_of::<Slot>()
    }

    /// `spate mcp`: what the probe and the plan prepared.
    pub fn mcp(&self) -> Option<&crate::mcp::Prepared> {
        self.setup.feature.list()?.mcp.as_deref()
    }

    /// `spate mcp` with sessions: the requests of a handshake each connection makes.
    pub fn handshake(&self) -> Option<&crate::mcp::Handshake> {
        self.setup.feature.list()?.mcp.as_ref()?.handshake.as_ref()
    }

    /// The slots of connection `group`: one per stream.
    pub fn group_slots(&self, group: usize) -> &[Slot] {
        let n = self.setup.streams.max(1);
        &self.slots[group * n..(group + 1) * n]
    }

    /// Open model: the next attempt for slot `index` once one falls due ([`Gate::poll_paced`]).
    #[inline]
    pub fn poll_paced(&self, index: usize, cx: &mut Context<'_>) -> Poll<Option<Admitted>> {
        self.gate
            .poll_paced(index, &self.slots[index], &self.rec, cx)
    }

    /// Closed model: an attempt for slot `index` that starts now, if the run admits any more
    /// ([`Gate::admit`]).
    #[inline]
    pub fn admit(&self, index: usize) -> Option<Admitted> {
        self.gate.admit(index, &self.rec)
    }

    /// Slot `index`'s loop ended: under --stages of connections, its group's last one lets the
    /// stager open the group again.
    #[cold]
    pub fn link_ended(&self, index: usize) {
        if let Some(crews) = &self.crews {
            crews.link_ended(index / self.setup.streams.max(1));
        }
    }

    /// Whether no more attempts will be admitted (without using one up).
    pub fn is_over(&self) -> bool {
        self.gate.is_over()
    }

    /// Whether attempts are a fixed number (count mode) rather than a time.
    pub fn counts_down(&self) -> bool {
        self.gate.counts_down()
    }

    /// Whether the outside world asked the run to stop, or a thread's script stopped it.
    pub fn stop_requested(&self) -> bool {
        self.setup.stop.load(Ordering::Relaxed) || self.setup.script_halt.load(Ordering::Relaxed)
    }

    /// Publishes counters and the interval's latencies to the display, if there is one.
    pub fn publish(&self) {
        let (Some(live), Some(interval)) = (&self.setup.live, &self.rec.interval) else {
            return;
        };
        let s = self.rec.stats();
        let counters = Counters {
            attempts: s.attempts,
            completed: s.completed,
            failures: s.failures.counts(),
            open: self.dial.open.get(),
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
        let mut timeline = self.rec.timeline.borrow_mut();
        let Some(recorder) = timeline.as_mut() else {
            return;
        };
        let gauges = |end| Gauges {
            h2_bytes_in: self.rec.counted_bytes_in(),
            open: self.dial.open.get(),
            scheduled: self.gate.pacer.get().map_or(0, |p| p.scheduled_before(end)),
            dropped: self.gate.pacer.get().map_or(0, Pacer::dropped),
        };
        let before = recorder.seconds.len();
        recorder.take(now, last, &self.rec.stats(), gauges);
        if let Some(board) = &self.setup.board
            && let Some(second) = recorder.seconds.get(before..).and_then(<[_]>::first)
        {
            board.hand(self.setup.thread, second.clone());
        }
    }

    /// Stops this thread now (a script's `wrk.thread:stop()`): nothing new is admitted and what
    /// is in flight is interrupted. `everyone`: the whole run stops too (the script failed).
    pub fn halt(&self, everyone: bool) {
        if !self.gate.stop.replace(true) {
            for slot in self.slots.iter() {
                slot.fire(crate::engine::slots::slot::Cancel::Interrupted);
            }
        }
        if everyone {
            self.setup.script_halt.store(true, Ordering::Relaxed);
        }
    }

    /// Counts a failed attempt, keeping the first message of its class.
    pub fn fail(&self, class: Failure, detail: impl FnOnce() -> String) {
        self.rec.failed(class, detail);
    }
}
