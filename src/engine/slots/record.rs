//! What a thread records, and the only writer of its `Stats`: each method is one fact the
//! loop, the accounting (`attempt`), the opener, the crews and the workloads tell it (an
//! admission, a response, a failure, a connection opened or closed). Also the display's
//! interval latencies, the timeline's seconds, HTTP/2's byte counters, the open QUIC
//! connections (whose bytes QUIC counts) and the last completion (for the longest gap). Read
//! by the sweeper and at the thread's end; single-threaded (`RefCell`). Must not decide
//! anything about admission or connections.

use std::cell::{Cell, Ref, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::clock::Tick;
use crate::engine::admit::gate::Admitted;
use crate::engine::protocols::watch::Gaps;
use crate::engine::protocols::watch::{End, Streamed};
use crate::engine::slots::attempt::Ended;
use crate::engine::slots::drive::Unopened;
use crate::engine::slots::shared::Connected;
use crate::engine::slots::shared::Setup;
use crate::net;
use crate::proto::Response;
use crate::proto::h2::Counters as ByteCounters;
use crate::stats::timeline::Recorder;
use crate::stats::{
    END_DONE, END_MAX_EVENTS, END_MAX_TIME, END_SERVER, Failure, LiveHist, Stats, nanos,
};

pub struct Record {
    /// Written only through the methods below.
    stats: RefCell<Stats>,
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

    /// What the thread counted so far, to read (the display, the timeline).
    pub fn stats(&self) -> Ref<'_, Stats> {
        self.stats.borrow()
    }

    /// What the thread counted, taken at its end.
    pub fn take(&self) -> Stats {
        self.stats.take()
    }

    /// An attempt was admitted: a warm-up one, or one recorded (the open model's `sent` when
    /// its pacer handed it out).
    #[inline]
    pub fn admitted(&self, warmup: bool, sent: Option<Instant>) {
        let mut s = self.stats.borrow_mut();
        match warmup {
            true => s.warmup_requests += 1,
            false => {
                s.attempts += 1;
                if sent.is_some() {
                    s.last_send = sent;
                }
            }
        }
    }

    /// An attempt failed as `class`; the first `detail` of each class is kept.
    pub fn failed(&self, class: Failure, detail: impl FnOnce() -> String) {
        self.stats.borrow_mut().failures.add_with(class, detail);
    }

    /// A connect failed (before the clock, or inside an attempt).
    pub fn connect_failed(&self, detail: impl FnOnce() -> String) {
        self.stats.borrow_mut().connect_failed(detail);
    }

    /// `n` admitted attempts ended without an outcome (the run stopped).
    pub fn interrupted(&self, n: u64) {
        self.stats.borrow_mut().interrupted += n;
    }

    /// An attempt goes again unprocessed, having written `bytes_out`.
    pub fn retried(&self, bytes_out: u64) {
        let mut s = self.stats.borrow_mut();
        s.retried += 1;
        s.bytes_out += bytes_out;
    }

    /// Bytes an attempt wrote and read that its protocol does not count per connection.
    #[inline]
    pub fn bytes(&self, written: u64, read: u64) {
        let mut s = self.stats.borrow_mut();
        s.bytes_out += written;
        s.bytes_in += read;
    }

    /// A redirect was followed.
    pub fn redirected(&self) {
        self.stats.borrow_mut().redirects += 1;
    }

    /// An MCP call's answer came after `n` notifications (`progress` of them progress), in the
    /// list's row `row`.
    pub fn notes(&self, row: usize, (n, progress): (u32, u32)) {
        let i = row.min(crate::request_list::MAX_TRACKED);
        let mut s = self.stats.borrow_mut();
        if s.per_entry.len() <= i {
            s.per_entry.resize_with(i + 1, Default::default);
        }
        s.per_entry[i].noted(n, progress);
    }

    /// The sweeper woke `late` after it was `due`: spate's own thread did not run.
    pub fn stalled(&self, due: Instant, late: Duration) {
        self.stats.borrow_mut().note_stall(Some((due, late)));
    }

    /// wrk's Req/Sec: a rate sampled over about 100 ms.
    pub fn rate_sample(&self, rate: f64) {
        self.stats.borrow_mut().rate_samples.push(rate);
    }

    /// A connection opened (`reconnect`: inside an attempt, not before the clock) and spoke
    /// what `connected` is.
    pub fn connected(&self, reconnect: bool, connected: &Connected) {
        let mut s = self.stats.borrow_mut();
        match reconnect {
            true => s.conns.reconnects += 1,
            false => s.conns.established += 1,
        }
        match connected {
            Connected::H1(_) => s.conns.h1 += 1,
            Connected::H2(_) => s.conns.h2 += 1,
            Connected::H3(_) => s.conns.h3 += 1,
        }
    }

    /// A connection opened before the clock only to find the target answering (a connection
    /// profile that starts below it) closes unused: it was not one of the run's.
    pub fn probed(&self, connected: &Connected) {
        let mut s = self.stats.borrow_mut();
        s.conns.established = s.conns.established.saturating_sub(1);
        let n = match connected {
            Connected::H1(_) => &mut s.conns.h1,
            Connected::H2(_) => &mut s.conns.h2,
            Connected::H3(_) => &mut s.conns.h3,
        };
        *n = n.saturating_sub(1);
    }

    /// A connect found no file descriptor left.
    pub fn fd_exhausted(&self) {
        self.stats.borrow_mut().fd_exhausted += 1;
    }

    /// A step of opening a connection took `took`.
    pub fn step(&self, step: net::Step, took: Duration) {
        let mut s = self.stats.borrow_mut();
        match step {
            net::Step::Connect => s.connect.record_duration(took),
            net::Step::Tunnel => s.proxy.record_duration(took),
            net::Step::Tls => s.tls.record_duration(took),
        }
    }

    /// A TLS session was resumed.
    pub fn tls_resumed(&self) {
        self.stats.borrow_mut().conns.tls_resumed += 1;
    }

    /// An HTTP/2 server allows `max_streams` streams on a connection (the lowest is kept).
    pub fn server_streams(&self, max_streams: usize) {
        let mut s = self.stats.borrow_mut();
        // HTTP/2 allows at most 2^31-1; more means the server announced no limit.
        let limit = (max_streams as u64).min(u64::from(u32::MAX));
        s.conns.server_streams = Some(s.conns.server_streams.map_or(limit, |n| n.min(limit)));
    }

    /// A connection closed having carried `responses`; `goaway`: the server had said GOAWAY.
    pub fn closed(&self, responses: u64, goaway: bool) {
        let mut s = self.stats.borrow_mut();
        s.conns.goaways += u64::from(goaway);
        s.per_connection.record(responses);
    }

    /// An MCP session's handshake completed in `took_ns`.
    pub fn handshake(&self, took_ns: u64) {
        let mut s = self.stats.borrow_mut();
        s.handshakes.get_or_insert_default().completed(200, took_ns);
    }

    /// A connection did not open before the clock started, for the reason `why`.
    pub fn not_opened(&self, why: Unopened) {
        let mut s = self.stats.borrow_mut();
        match why {
            Unopened::TimedOut => s.not_opened.timed_out += 1,
            Unopened::Failed => s.not_opened.failed += 1,
            Unopened::CutOff => s.not_opened.cut_off += 1,
        }
    }

    /// `n` connections were not tried before the connection phase ended.
    pub fn not_tried(&self, n: u64) {
        self.stats.borrow_mut().not_opened.not_tried += n;
    }

    /// The responses each of the thread's connections completed, at its end.
    pub fn per_client(&self, completed: impl Iterator<Item = u64>) {
        self.stats.borrow_mut().per_client.extend(completed);
    }

    /// A completed response of the attempt `adm` (recorded, not a warm-up one): its latency and
    /// phases, status, bytes, the drain (after `window_end`), the open model's service time
    /// and send lag, and the longest gap between completions.
    #[inline]
    pub fn response(
        &self,
        adm: Admitted,
        connected: Option<Tick>,
        written: Option<Tick>,
        res: &Response,
        window_end: Option<Tick>,
    ) {
        let t0 = adm.start;
        let write_start = connected.unwrap_or(t0);
        let written = written.unwrap_or(write_start);
        let first_byte = res.first_byte.unwrap_or(written);
        // Open model: from the intended time, so that waiting for a connection (or for spate) counts.
        let intended = adm.intended;
        let latency = res.done.nanos_since(intended.unwrap_or(t0));
        if let Some(interval) = &self.interval {
            interval.borrow_mut().record(latency);
        }
        let mut s = self.stats.borrow_mut();
        s.completed += 1;
        s.count_status(res.status);
        s.latency.record(latency);
        if let Some(up) = connected {
            s.reconnect.record(up.nanos_since(t0));
        }
        s.write.record(written.nanos_since(write_start));
        s.wait.record(first_byte.nanos_since(written));
        s.read.record(res.done.nanos_since(first_byte));
        s.bytes_in += res.bytes_in;
        s.body_bytes += res.body_bytes;
        if window_end.is_some_and(|end| res.done > end) {
            s.drained += 1;
            s.drained_classes[crate::stats::status_class(res.status)] += 1;
        }
        if let Some(intended) = intended {
            s.service.record(res.done.nanos_since(t0));
            s.lag.record(t0.nanos_since(intended));
        }
        if let Some(last) = self.last_done.replace(Some(res.done)) {
            let gap = res.done.nanos_since(last);
            if s.gap.is_none_or(|(_, longest)| gap > nanos(longest)) {
                s.gap = Some((last.to_instant(), Duration::from_nanos(gap)));
            }
        }
    }

    /// A request list: how the attempt `adm`, which sent the list's request `entry`, ended, by
    /// that request's place (warm-up attempts are not recorded). `answered`: when an answer came
    /// that failed the attempt (an MCP tool's error), whose latency counts as an answer's.
    pub fn entry(
        &self,
        adm: Admitted,
        ended: Ended,
        res: Option<&Response>,
        entry: usize,
        answered: Option<Tick>,
    ) {
        if adm.warmup {
            return;
        }
        let i = entry.min(crate::request_list::MAX_TRACKED);
        let mut s = self.stats.borrow_mut();
        if s.per_entry.len() <= i {
            s.per_entry.resize_with(i + 1, Default::default);
        }
        let e = &mut s.per_entry[i];
        match (ended, res) {
            (Ended::Completed { .. }, Some(r)) => {
                e.completed(
                    r.status,
                    r.done.nanos_since(adm.intended.unwrap_or(adm.start)),
                );
            }
            (Ended::Failed(class), _) => {
                e.failed(class);
                if let Some(at) = answered {
                    e.answered(at.nanos_since(adm.intended.unwrap_or(adm.start)));
                }
            }
            _ => {}
        }
    }

    /// --stream: what a completed, recorded response did as a stream (`None`: it was not watched
    /// as one).
    pub fn stream(&self, adm: Admitted, res: &Response, streamed: Option<&Streamed>) {
        let mut s = self.stats.borrow_mut();
        let st = s.stream.get_or_insert_with(Box::default);
        let Some(streamed) = streamed else {
            st.other += 1;
            return;
        };
        let f = &streamed.facts;
        let t0 = adm.intended.unwrap_or(adm.start);
        st.responses += 1;
        if let Some(at) = f.first_unit {
            st.first_unit.record(at.nanos_since(t0));
        }
        if let Some(at) = f.first_data {
            st.first_data.record(at.nanos_since(t0));
        }
        if let Some(mean) = f.mean_gap_ns() {
            st.mean_gap.record(mean);
            st.longest_gap.record(f.longest_gap_ns);
        }
        st.units += f.units;
        st.data_units += f.data_units;
        st.max_units = st.max_units.max(f.units);
        st.keepalives += f.keepalives;
        st.long_units += u64::from(f.cut);
        st.ends[match streamed.end {
            End::Done => END_DONE,
            End::Server => END_SERVER,
            End::MaxEvents => END_MAX_EVENTS,
            End::MaxTime => END_MAX_TIME,
        }] += 1;
        if let Some(tokens) = f.tokens {
            st.token_responses += 1;
            // A server's count, summed: it saturates rather than wraps.
            st.tokens = st.tokens.saturating_add(tokens);
            let secs = res.done.nanos_since(t0) as f64 / 1e9;
            if secs > 0.0 {
                st.token_rate_milli
                    .record((tokens as f64 / secs * 1e3) as u64);
            }
        }
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
            gaps: setup.feature.stream().map(|_| Gaps::default()),
        }
    }
}
