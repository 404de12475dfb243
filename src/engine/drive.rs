//! HOT: the life of one connection. A connection owns a group of slots: one for HTTP/1.1, one
//! per stream for HTTP/2. Every request is admitted by `Shared` (closed or open model) and
//! accounted for by `attempt`; only how it is exchanged differs. HTTP/1.1 is the hand-written
//! `H1Conn`; HTTP/2 is here, in `async`. No allocation, lock, timer or formatting per request.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Context, Poll};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;

use super::attempt::{Attempted, BackOff, Ended, Marks, attempt, back_off};
use super::h1_conn::H1Conn;
use super::shared::{Admitted, Connected, OpenH2, Shared};
use super::slot::{Cancel, Slot, guarded};
use super::task_set::Member;
use crate::clock::Tick;
use crate::proto::{Cause, Fail, h2};
use crate::stats::Failure;

pub(super) fn switched() -> Fail {
    Fail {
        class: Failure::H2,
        cause: Cause::Other("the server changed protocol on a reconnect"),
    }
}

/// Drives connection `group` (pre-connected as `conn`) until the thread stops admitting attempts.
pub fn drive(ctx: Rc<Shared>, group: usize, conn: Connected) -> Drive {
    let first = group * ctx.setup.streams.max(1);
    match conn {
        // Following redirects is off the static path, boxed like HTTP/2.
        Connected::H1(c) if ctx.hops.is_some() => {
            Drive::Boxed(Box::pin(super::follow::run(ctx, first, c)))
        }
        Connected::H1(c) => Drive::H1(H1Conn::new(ctx, first, c)),
        // Boxed so that HTTP/1.1 connections do not carry the larger HTTP/2 state.
        Connected::H2(c) => Drive::Boxed(Box::pin(async move {
            h2_group(&ctx, group, Some(c)).await;
            for slot in ctx.group_slots(group) {
                slot.retire();
            }
        })),
    }
}

/// One connection of a thread, as its set holds it: HTTP/1.1 inline; HTTP/2, and HTTP/1.1 that
/// follows redirects, boxed.
// HTTP/1.1 inline is the point: boxing it would add an allocation and a pointer to follow per
// wake-up for the common case; the HTTP/2 state is much larger and boxed once per connection.
#[allow(clippy::large_enum_variant)]
pub enum Drive {
    H1(H1Conn),
    Boxed(Pin<Box<dyn Future<Output = ()>>>),
}

impl Future for Drive {
    type Output = ();

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.get_mut() {
            Drive::H1(c) => Pin::new(c).poll(cx),
            Drive::Boxed(f) => f.as_mut().poll(cx),
        }
    }
}

impl Member for Drive {
    /// An HTTP/1.1 connection's slot is read and written on every request; a boxed one's
    /// slots are reached through its own state.
    fn companion(&self) -> usize {
        match self {
            Drive::H1(c) => c.slot_address(),
            Drive::Boxed(_) => 0,
        }
    }
}

/// How a stream loop ended.
enum StreamEnd {
    /// The run admits no more attempts.
    Over,
    /// The connection takes no more streams: GOAWAY (`goaway`), an error, or --rpc reached.
    Gone { goaway: bool },
}

/// HTTP/2: as many stream loops as the server allows (up to `-p`) share one connection; when it
/// takes no more streams (GOAWAY, error, --rpc), the ones in flight finish and the connection is
/// re-opened inside the next attempt.
async fn h2_group(ctx: &Shared, group: usize, first: Option<OpenH2>) {
    let base = group * ctx.setup.streams.max(1);
    let mut next = first;
    let mut delay = BackOff::default();
    // Attempts the server refused unprocessed, to go first on the next connection. At most one
    // per stream slot: allocated once per connection group, not per request.
    let retries = RefCell::new(Vec::with_capacity(ctx.setup.streams.max(1)));
    loop {
        // Requests admitted on the current connection (--rpc), whether it served one (a
        // pre-connected one counts as served), and the responses it carried.
        let used = Cell::new(0u64);
        let served = Cell::new(false);
        let done = Cell::new(0u64);
        let open = match next.take() {
            Some(open) => {
                served.set(true);
                open
            }
            None => match reopen(ctx, base, &mut delay, &retries).await {
                Reopen::Open(open, first_served) => {
                    used.set(1);
                    served.set(first_served);
                    done.set(u64::from(first_served));
                    open
                }
                Reopen::Retry => continue,
                Reopen::Over => break,
            },
        };
        let OpenH2 { lane, max_streams } = open;
        {
            let mut s = ctx.stats.borrow_mut();
            // HTTP/2 allows at most 2^31-1; more means the server announced no limit.
            let limit = (max_streams as u64).min(u64::from(u32::MAX));
            s.conns.server_streams = Some(s.conns.server_streams.map_or(limit, |n| n.min(limit)));
        }
        let n = ctx.setup.streams.max(1).min(max_streams.max(1));
        // Declared after `lane`, so dropped before it: dropping the lane closes the connection.
        let mut streams: FuturesUnordered<_> = (0..n)
            .map(|k| stream_loop(ctx, base, k, &lane, &used, &done, &retries))
            .collect();
        let mut goaway = false;
        let mut over = false;
        while let Some(end) = streams.next().await {
            match end {
                StreamEnd::Over => over = true,
                StreamEnd::Gone { goaway: g } => goaway |= g,
            }
        }
        {
            let mut s = ctx.stats.borrow_mut();
            s.conns.goaways += u64::from(goaway);
            s.per_connection.record(done.get());
        }
        served.set(served.get() || done.get() > 0);
        // Refused attempts were admitted already: they go on, unless the run is over altogether.
        if (over || ctx.is_over()) && (retries.borrow().is_empty() || ctx.stop.get()) {
            break;
        }
        if served.get() {
            delay = BackOff::default();
        } else {
            // A connection that served nothing (a server that sends GOAWAY on every connection,
            // or closes it at once) is a failed connect: wait before the next, as for a refused
            // one.
            drop(streams);
            drop(lane);
            if !back_off(ctx, base, Failure::Connect, &mut delay).await {
                break;
            }
        }
    }
    // Refused attempts the run ended before sending again: in flight, as far as it knows.
    let left = retries.borrow().iter().filter(|a| !a.warmup).count() as u64;
    ctx.stats.borrow_mut().interrupted += left;
}

enum Reopen {
    /// A new connection, and whether the request that opened it completed.
    Open(OpenH2, bool),
    Retry,
    Over,
}

/// A new HTTP/2 connection, opened inside an admitted attempt whose request then goes on it:
/// the connection time is inside that request's latency, and a target that is down uses up
/// attempts (so a count run always ends).
async fn reopen(
    ctx: &Shared,
    index: usize,
    delay: &mut BackOff,
    retries: &RefCell<Vec<Admitted>>,
) -> Reopen {
    let slot = &ctx.slots[index];
    let retry = retries.borrow_mut().pop();
    let adm = match retry {
        Some(adm) => adm,
        None => match ctx.next_attempt(index).await {
            Some(adm) => adm,
            None => return Reopen::Over,
        },
    };
    let marks = Marks::default();
    let mut opened: Option<OpenH2> = None;
    let ended = {
        let exchange = pin!(async {
            slot.begin_connect(adm.start);
            let c = Box::pin(ctx.open(true, slot)).await?;
            slot.end_connect();
            marks.connected.set(Some(Tick::now()));
            let Connected::H2(open) = c else {
                return Err(switched());
            };
            let open = opened.insert(open);
            let mut exchange = open.lane.exchange(0);
            exchange.send().await?;
            marks.written.set(Some(Tick::now()));
            exchange.receive().await
        });
        match attempt(ctx, slot, adm, &marks, exchange).await {
            Attempted::Done(ended) => Some(ended),
            Attempted::Again(adm) => {
                retries.borrow_mut().push(adm);
                None
            }
        }
    };
    let Some(ended) = ended else {
        // Refused before it was processed: the new connection served nothing.
        return match opened {
            Some(open) => Reopen::Open(open, false),
            None => Reopen::Retry,
        };
    };
    match (ended, opened) {
        (Ended::Interrupted, opened) => {
            if opened.is_some() {
                ctx.stats.borrow_mut().per_connection.record(0);
            }
            Reopen::Over
        }
        // Without keep-alive (--rpc 1) the connection served its one request.
        (ended, Some(_)) if ctx.setup.rpc == Some(1) => {
            let done = matches!(ended, Ended::Completed { .. });
            ctx.stats
                .borrow_mut()
                .per_connection
                .record(u64::from(done));
            Reopen::Retry
        }
        (Ended::Completed { .. }, Some(open)) => {
            *delay = BackOff::default();
            Reopen::Open(open, true)
        }
        // Connected, but its first request failed: the connection decides what comes next.
        (Ended::Failed(_), Some(open)) => Reopen::Open(open, false),
        (_, None) => {
            let class = match ended {
                Ended::Failed(c) => c,
                _ => Failure::Connect,
            };
            if back_off(ctx, index, class, delay).await {
                Reopen::Retry
            } else {
                Reopen::Over
            }
        }
    }
}

/// Stream slot `k` of the connection whose first slot is `base`: request after request until
/// the run is over or the connection takes no more streams.
async fn stream_loop(
    ctx: &Shared,
    base: usize,
    k: usize,
    lane: &h2::Lane,
    used: &Cell<u64>,
    done: &Cell<u64>,
    retries: &RefCell<Vec<Admitted>>,
) -> StreamEnd {
    let index = base + k;
    let slot: &Slot = &ctx.slots[index];
    // Refused attempts are all queued before this connection opened (the previous one's streams
    // had ended): once none is left, none comes, and the loop stops looking.
    let mut may_retry = true;
    loop {
        // Also how GOAWAY and a dead connection show: the connection is gone.
        // A server that allows no stream (MAX_CONCURRENT_STREAMS 0) while none of ours is open
        // frees no place: the attempt then waits for one inside, under its timeout, so that
        // the wait shows as failures and a count run still ends.
        let ready = match lane.starved() {
            true => Ok(h2::Ready::Wait),
            false => guarded(slot, pin!(lane.ready())).await,
        };
        match ready {
            Err(_) => return StreamEnd::Over,
            Ok(h2::Ready::Gone { goaway }) => return StreamEnd::Gone { goaway },
            Ok(_) => {}
        }
        if ctx.setup.rpc.is_some_and(|n| used.get() >= n) {
            return StreamEnd::Gone { goaway: false };
        }
        // A refused attempt first; the closed model admits without awaiting, as HTTP/1.1 does.
        let mut admitted = None;
        if may_retry {
            admitted = retries.borrow_mut().pop();
            may_retry = admitted.is_some();
        }
        if admitted.is_none() {
            admitted = match ctx.pacer.get() {
                None => ctx.admit(),
                Some(_) => ctx.next_attempt(index).await,
            };
        }
        let Some(adm) = admitted else {
            return StreamEnd::Over;
        };
        used.set(used.get() + 1);
        let marks = Marks::default();
        let ended = {
            let exchange = pin!(async {
                let mut exchange = lane.exchange(k);
                exchange.send().await?;
                marks.written.set(Some(Tick::now()));
                exchange.receive().await
            });
            attempt(ctx, slot, adm, &marks, exchange).await
        };
        match ended {
            Attempted::Done(Ended::Interrupted) => return StreamEnd::Over,
            Attempted::Done(Ended::Completed { .. }) => done.set(done.get() + 1),
            Attempted::Done(Ended::Failed(_)) => {}
            // This connection refused it: it goes first on the next one.
            Attempted::Again(adm) => {
                retries.borrow_mut().push(adm);
                return StreamEnd::Gone { goaway: true };
            }
        }
    }
}

/// Why a connection did not open before the clock started.
#[derive(Debug)]
pub struct NotOpen {
    pub why: Unopened,
    pub class: Failure,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unopened {
    TimedOut,
    Failed,
    /// Still connecting when the connection phase ended (its deadline, or Ctrl-C).
    CutOff,
}

/// Opens a connection before the clock starts, on the first slot of its group. Failures count as
/// connection failures, not request failures: no request was attempted.
pub async fn preconnect(ctx: &Shared, slot: &Slot) -> Result<Connected, NotOpen> {
    slot.begin_connect(Tick::now());
    // Inline: the caller boxes each attempt and frees it on return (`thread::open_all`).
    let r = guarded(slot, std::pin::pin!(ctx.open(false, slot))).await;
    slot.end_connect();
    match r {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(fail)) => Err(NotOpen {
            why: Unopened::Failed,
            class: fail.class,
            message: fail.to_string(),
        }),
        Err(Cancel::Interrupted) => Err(NotOpen {
            why: Unopened::CutOff,
            class: Failure::Connect,
            message: match ctx.stop_requested() {
                true => "interrupted before the run started".into(),
                false => format!(
                    "still connecting when --setup-timeout ({:?}) ended the connection phase",
                    ctx.setup.setup_timeout
                ),
            },
        }),
        Err(_) => {
            let msg = slot.connect_phase().timed_out(ctx.setup.connect_timeout);
            ctx.stats.borrow_mut().connect_failed(|| msg.clone());
            Err(NotOpen {
                why: Unopened::TimedOut,
                class: Failure::Connect,
                message: msg,
            })
        }
    }
}
