//! --stream: what a protocol's response is told to when streams are measured. `Observe` is the
//! engine's side of `proto::Events`: an attempt begins, the response ends (`settle`), its
//! judgement (`judged`), and the last read for the idle timeout. `()` observes nothing and compiles to nothing, so the static
//! path pays nothing; `Watch` cuts streamed responses into units with a `proto::stream::Meter`
//! and hands each gap to the thread's histogram. Must not touch the run's statistics other than
//! through the gap histogram it is given.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use crate::clock::Tick;
use crate::engine::slots::shared::{H2Handle, Shared};
use crate::plan::{StreamMode, StreamPlan};
use crate::proto::stream::{Facts, Meter, Rules, Unit};
use crate::proto::{Events, Fail, Media, Response, h2};
use crate::stats::Hist;

/// How a measured stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Its --done sentinel arrived.
    Done,
    /// The server ended the response (without a sentinel, or none was asked for).
    Server,
    /// --max-events was reached.
    MaxEvents,
    /// --max-stream-time was reached.
    MaxTime,
}

/// One response measured as a stream.
#[derive(Debug, Clone, Copy)]
pub struct Streamed {
    pub facts: Facts,
    pub end: End,
    /// A sentinel was asked for and the server ended the stream without it.
    pub truncated: bool,
}

/// What the engine asks of a response's receiver beyond `Events`.
pub trait Observe: Events {
    /// Whether `begin` does anything, where a protocol would have to look for the receiver to
    /// tell it (an HTTP/2 stream's lives in the connection): without, it is skipped at compile
    /// time.
    const BEGINS: bool = false;
    /// An attempt that started at `start` begins; `recorded`: it is not a warm-up one.
    #[inline(always)]
    fn begin(&mut self, _start: Tick, _recorded: bool) {}
    /// When the response under way last had bytes read.
    #[inline(always)]
    fn last_read(&self) -> Option<Tick> {
        None
    }
    /// The HTTP/2 connection `h`, if its streams tell their responses to this type.
    fn h2_lane(h: H2Handle) -> Option<h2::Lane<Self>>
    where
        Self: Sized;
    /// The attempt ended: what its response did as a stream, if it was measured as one. Also
    /// resets the receiver for the next response, however this one ended.
    #[inline(always)]
    fn settle(&mut self) -> Option<Streamed> {
        None
    }
    /// Whether `judged` does anything (a gRPC call's status): without, the lane skips it at
    /// compile time.
    const JUDGES: bool = false;
    /// The response `r` was read in full: as it came, or the failure the receiver found in it
    /// (a gRPC status other than OK).
    fn judged(&mut self, _ctx: &Shared, r: Response) -> Result<Response, Fail> {
        Ok(r)
    }
    /// Whether this stream slot's responses go to `tap` from now on (the legacy MCP transport's
    /// session stream, opened beside a call): only MCP's receiver takes one.
    fn tap(&mut self, _tap: crate::mcp::legacy::Tap) -> bool {
        false
    }
}

impl Observe for () {
    fn h2_lane(h: H2Handle) -> Option<h2::Lane<()>> {
        match h {
            H2Handle::Plain(lane) => Some(lane),
            _ => None,
        }
    }
}

/// The gaps between data units of one thread's recorded streams.
pub type Gaps = Rc<RefCell<Hist>>;

type GapSink = Box<dyn FnMut(u64)>;

/// A connection's receiver under --stream.
pub struct Watch {
    plan: Arc<StreamPlan>,
    meter: Meter<GapSink>,
    /// The response under way is measured (its head said so, or the mode needs no head).
    active: bool,
    /// The attempt is recorded: its gaps go to the histogram.
    recording: Rc<Cell<bool>>,
    start: Option<Tick>,
    last_read: Option<Tick>,
}

impl Watch {
    pub fn new(plan: Arc<StreamPlan>, gaps: Gaps) -> Watch {
        let recording = Rc::new(Cell::new(false));
        let on = recording.clone();
        let sink: GapSink = Box::new(move |ns| {
            if on.get() {
                gaps.borrow_mut().record(ns);
            }
        });
        let rules = Rc::new(Rules::clone(&plan.rules));
        Watch {
            meter: Meter::new(Unit::Chunks, rules, sink),
            plan,
            active: false,
            recording,
            start: None,
            last_read: None,
        }
    }

    /// The unit a response is cut into, given its media type; `None`: not a stream.
    fn unit(&self, media: Media) -> Option<Unit> {
        match (self.plan.mode, media) {
            (StreamMode::Sse, _) | (StreamMode::Auto, Media::EventStream) => Some(Unit::Sse),
            (StreamMode::Lines, _) | (StreamMode::Auto, Media::JsonLines) => Some(Unit::Lines),
            (StreamMode::Chunks, _) => Some(Unit::Chunks),
            (StreamMode::Grpc, _) => Some(Unit::Grpc),
            (StreamMode::Auto, Media::Other) => None,
        }
    }
}

impl Events for Watch {
    const WATCHES: bool = true;

    fn read_at(&mut self, at: Tick) {
        self.last_read = Some(at);
        self.meter.read_at(at);
    }

    fn head(&mut self, _status: u16, media: Media) {
        match self.unit(media) {
            Some(unit) => {
                self.meter.set_unit(unit);
                self.active = true;
            }
            None => self.active = false,
        }
    }

    fn data(&mut self, bytes: &[u8]) {
        if self.active {
            self.meter.data(bytes);
        }
    }

    fn enough(&self) -> bool {
        if !self.active {
            return false;
        }
        let facts = self.meter.facts();
        if facts.done {
            return false;
        }
        self.plan.max_events.is_some_and(|n| facts.units >= n)
            || self.plan.max_time.is_some_and(|t| {
                self.start
                    .zip(self.last_read)
                    .is_some_and(|(s, r)| r.duration_since(s) >= t)
            })
    }
}

impl Observe for Watch {
    fn last_read(&self) -> Option<Tick> {
        self.last_read
    }

    fn h2_lane(h: H2Handle) -> Option<h2::Lane<Watch>> {
        match h {
            H2Handle::Watched(lane) => Some(lane),
            _ => None,
        }
    }

    fn begin(&mut self, start: Tick, recorded: bool) {
        self.start = Some(start);
        self.last_read = None;
        self.active = false;
        self.recording.set(recorded);
    }

    fn settle(&mut self) -> Option<Streamed> {
        // Whether a cap ended it is decided before the meter forgets the response.
        let cap = self.enough().then(|| {
            let f = self.meter.facts();
            match self.plan.max_events.is_some_and(|n| f.units >= n) {
                true => End::MaxEvents,
                false => End::MaxTime,
            }
        });
        let facts = self.meter.finish();
        let active = std::mem::take(&mut self.active);
        self.recording.set(false);
        if !active {
            return None;
        }
        let end = match (facts.done, cap) {
            (true, _) => End::Done,
            (false, Some(cap)) => cap,
            (false, None) => End::Server,
        };
        Some(Streamed {
            facts,
            end,
            truncated: end == End::Server && self.plan.rules.done.is_some(),
        })
    }
}
