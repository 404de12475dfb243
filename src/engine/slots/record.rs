//! What a thread records: its `Stats`, the display's interval latencies, the timeline's
//! seconds, HTTP/2's byte counters and the open QUIC connections (whose bytes QUIC counts), and
//! the last completion (for the longest gap). Written by
//! the accounting (`attempt`) and read by the sweeper; single-threaded (`RefCell`). Must not
//! decide anything about admission or connections.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::clock::Tick;
use crate::engine::protocols::watch::Gaps;
use crate::engine::slots::shared::Setup;
use crate::proto::h2::Counters as ByteCounters;
use crate::stats::timeline::Recorder;
use crate::stats::{LiveHist, Stats};

pub struct Record {
    pub stats: RefCell<Stats>,
    /// Latencies since the last publication, when a display wants them.
    pub interval: Option<RefCell<LiveHist>>,
    /// Bytes of all HTTP/2 connections of the thread, and of the HTTP/3 connections it closed.
    pub h2_bytes: Rc<ByteCounters>,
    /// --http3: the thread's open QUIC connections by connection group, whose bytes their own
    /// figures hold until they close.
    quic: RefCell<Vec<Option<quinn::Connection>>>,
    /// The last completed (recorded) response, for the completion gap.
    pub last_done: Cell<Option<Tick>>,
    /// The measured window second by second, from the start signal on.
    pub timeline: RefCell<Option<Recorder>>,
    /// `setup.timeout` in ns, for the check on every completed response.
    pub timeout_ns: u64,
    /// --stream: the gaps between data units of recorded streams, as the watches see them.
    pub gaps: Option<Gaps>,
}

impl Record {
    /// Bytes read by connections that count them themselves (HTTP/2, HTTP/3) so far: read
    /// once a second for the timeline, never per request.
    pub fn counted_bytes_in(&self) -> u64 {
        let open: u64 = self
            .quic
            .borrow()
            .iter()
            .flatten()
            .map(|c| c.stats().udp_rx.bytes)
            .sum();
        self.h2_bytes.read.get() + open
    }

    /// Connection group `group` opened the QUIC connection `conn`.
    pub fn quic_opened(&self, group: usize, conn: quinn::Connection) {
        let mut open = self.quic.borrow_mut();
        if open.len() <= group {
            open.resize(group + 1, None);
        }
        open[group] = Some(conn);
    }

    /// Connection group `group` closed its QUIC connection `conn`: its figures go into the
    /// thread's.
    pub fn quic_closed(&self, group: usize, conn: &quinn::Connection) {
        if let Some(open) = self.quic.borrow_mut().get_mut(group) {
            *open = None;
        }
        let q = conn.stats();
        let b = &self.h2_bytes;
        b.read.set(b.read.get() + q.udp_rx.bytes);
        b.written.set(b.written.get() + q.udp_tx.bytes);
        self.stats.borrow_mut().quic.add(&q);
    }

    pub fn new(setup: &Setup) -> Record {
        Record {
            stats: RefCell::new(Stats::default()),
            interval: setup
                .live
                .as_ref()
                .map(|_| RefCell::new(LiveHist::default())),
            h2_bytes: Rc::new(ByteCounters::default()),
            quic: RefCell::new(Vec::new()),
            last_done: Cell::new(None),
            timeline: RefCell::new(None),
            timeout_ns: u64::try_from(setup.timeout.as_nanos()).unwrap_or(u64::MAX),
            gaps: setup.stream.as_ref().map(|_| Gaps::default()),
        }
    }
}
