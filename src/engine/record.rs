//! What a thread records: its `Stats`, the display's interval latencies, the timeline's
//! seconds, HTTP/2's byte counters, and the last completion (for the longest gap). Written by
//! the accounting (`attempt`) and read by the sweeper; single-threaded (`RefCell`). Must not
//! decide anything about admission or connections.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::shared::Setup;
use super::watch::Gaps;
use crate::clock::Tick;
use crate::proto::h2::Counters as ByteCounters;
use crate::stats::timeline::Recorder;
use crate::stats::{LiveHist, Stats};

pub struct Record {
    pub stats: RefCell<Stats>,
    /// Latencies since the last publication, when a display wants them.
    pub interval: Option<RefCell<LiveHist>>,
    /// Bytes of all HTTP/2 connections of the thread.
    pub h2_bytes: Rc<ByteCounters>,
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
    pub fn new(setup: &Setup) -> Record {
        Record {
            stats: RefCell::new(Stats::default()),
            interval: setup
                .live
                .as_ref()
                .map(|_| RefCell::new(LiveHist::default())),
            h2_bytes: Rc::new(ByteCounters::default()),
            last_done: Cell::new(None),
            timeline: RefCell::new(None),
            timeout_ns: u64::try_from(setup.timeout.as_nanos()).unwrap_or(u64::MAX),
            gaps: setup.stream.as_ref().map(|_| Gaps::default()),
        }
    }
}
