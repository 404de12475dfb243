//! Per-connection cancellation without a timer per request: each connection owns a `Slot` that
//! records when its current attempt (and connect) began; the thread's sweeper compares those
//! times with the clock and cancels late ones through the slot, waking the connection's task.

use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::clock::Tick;

/// Why the sweeper stopped a connection's current operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancel {
    /// The request did not complete within the request timeout.
    Timeout,
    /// The connect did not complete within the connect timeout.
    ConnectTimeout,
    /// The run ended (drain over) while this attempt was still in flight.
    Interrupted,
    /// --idle-timeout: the stream under way received no bytes for that long.
    Idle,
}

/// How far a connect had come: what a connect timeout interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConnectPhase {
    #[default]
    Tcp,
    Tls,
    /// TCP and TLS are up; the server's SETTINGS and its reply to spate's PING are awaited.
    H2Handshake,
    /// Connected to the proxy; its answer to CONNECT is awaited.
    Proxy,
    /// `spate mcp`: connected; the answers to the session's handshake are awaited.
    Session,
    /// --http3: the QUIC handshake (and TLS in it) is under way.
    Quic,
}

impl ConnectPhase {
    /// What a connect timeout of `t` in this phase means, for the report.
    pub fn timed_out(self, t: Duration) -> String {
        match self {
            ConnectPhase::Tcp => format!("connect timed out after {t:?}"),
            ConnectPhase::Tls => format!(
                "the TLS handshake did not finish within --connect-timeout {t:?} (TCP connected)"
            ),
            ConnectPhase::Proxy => format!(
                "the proxy did not open the tunnel (answer CONNECT) within --connect-timeout {t:?}"
            ),
            ConnectPhase::Session => format!(
                "the connection opened, but the server did not answer the MCP handshake \
                 (initialize) within --connect-timeout {t:?}"
            ),
            ConnectPhase::Quic => format!(
                "the QUIC handshake did not finish within --connect-timeout {t:?}: is an HTTP/3 \
                 server listening on that UDP port?"
            ),
            ConnectPhase::H2Handshake => format!(
                "the connection opened, but the server did not complete the HTTP/2 handshake (its \
                 SETTINGS and an answer to spate's PING) within --connect-timeout {t:?}"
            ),
        }
    }
}

/// What the sweeper told the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signal {
    Cancel(Cancel),
    /// The connection's wait between failed connects is over.
    WaitOver,
}

/// One cache line per slot: at c = 1000 and more, slots are touched in no particular order, and a
/// slot straddling two lines costs a second cache miss per request (cachegrind: 1.4 fewer D1
/// misses per request at c = 1000 once aligned).
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct Slot {
    request_since: Cell<Option<Tick>>,
    connect_since: Cell<Option<Tick>>,
    /// The last read of the response under way, when its connection reports reads (--stream).
    read_since: Cell<Option<Tick>>,
    signal: Cell<Option<Signal>>,
    waker: RefCell<Option<Waker>>,
    /// Recorded requests this slot completed, for the fairness figures (requests per connection).
    /// 32 bits keep the slot in one line; at 100,000 requests a second a connection would need
    /// 12 hours to saturate it, and it saturates rather than wraps.
    completed: Cell<u32>,
    /// How far the current connect came, for the message of a connect timeout.
    phase: Cell<ConnectPhase>,
}

impl Slot {
    pub fn begin_request(&self, at: Tick) {
        self.signal.set(None);
        self.request_since.set(Some(at));
        self.read_since.set(None);
    }

    pub fn end_request(&self) {
        self.request_since.set(None);
        self.connect_since.set(None);
        self.read_since.set(None);
    }

    /// Bytes of the response under way arrived at `at`: with an idle timeout, the time since
    /// then is what may run out, not the request's.
    #[inline]
    pub fn read_at(&self, at: Option<Tick>) {
        self.read_since.set(at);
    }

    pub fn begin_connect(&self, at: Tick) {
        self.connect_since.set(Some(at));
        self.phase.set(ConnectPhase::Tcp);
    }

    /// The connect under way reached `phase`.
    pub fn connect_reached(&self, phase: ConnectPhase) {
        self.phase.set(phase);
    }

    pub fn connect_phase(&self) -> ConnectPhase {
        self.phase.get()
    }

    /// Whether a connect is under way.
    pub fn connecting(&self) -> bool {
        self.connect_since.get().is_some()
    }

    pub fn end_connect(&self) {
        self.connect_since.set(None);
    }

    /// Cancels what is under way if it is older than its timeout: the connect timeout, then,
    /// once a response has begun to arrive and `idle` is given, the time since its last read;
    /// otherwise the request timeout. Called by the sweeper.
    pub fn check(
        &self,
        now: Tick,
        timeout: Duration,
        connect_timeout: Duration,
        idle: Option<Duration>,
    ) {
        let late =
            |since: Option<Tick>, limit| since.is_some_and(|s| now.duration_since(s) >= limit);
        if late(self.connect_since.get(), connect_timeout) {
            self.fire(Cancel::ConnectTimeout);
        } else if let (Some(limit), Some(read)) = (idle, self.read_since.get()) {
            if late(Some(read), limit) {
                self.fire(Cancel::Idle);
            }
        } else if late(self.request_since.get(), timeout) {
            self.fire(Cancel::Timeout);
        }
    }

    /// Cancels whatever the connection is awaiting under [`guarded`] (or its wait between
    /// failed connects) and wakes it. The first cancellation stands.
    pub fn fire(&self, why: Cancel) {
        if !matches!(self.signal.get(), Some(Signal::Cancel(_))) {
            self.signal.set(Some(Signal::Cancel(why)));
            self.wake();
        }
    }

    /// Ends the connection's wait between failed connects ([`Slot::wait`]) and wakes it.
    pub fn end_wait(&self) {
        if self.signal.get().is_none() {
            self.signal.set(Some(Signal::WaitOver));
            self.wake();
        }
    }

    /// Wakes the connection's task without a signal: something it waits for outside the slot
    /// (another slot of its group) changed.
    pub fn nudge(&self) {
        self.wake();
    }

    fn wake(&self) {
        if let Some(w) = self.waker.borrow_mut().take() {
            w.wake();
        }
    }

    fn keep_waker(&self, waker: &Waker) {
        let mut w = self.waker.borrow_mut();
        match &*w {
            Some(old) if old.will_wake(waker) => {}
            _ => *w = Some(waker.clone()),
        }
    }

    /// Whether [`end_wait`](Self::end_wait) ended the slot's wait (true) or a cancellation did
    /// (false: the run is over).
    pub fn poll_wait(&self, cx: &mut Context<'_>) -> Poll<bool> {
        match self.signal.take() {
            Some(Signal::WaitOver) => Poll::Ready(true),
            Some(Signal::Cancel(_)) => Poll::Ready(false),
            None => {
                self.keep_waker(cx.waker());
                Poll::Pending
            }
        }
    }

    /// What [`guarded`] does before each poll of its future, for hand-written futures that guard
    /// themselves: the cancellation, if the sweeper fired one, or else keeps the task's waker
    /// for it.
    #[inline]
    pub fn poll_guard(&self, cx: &Context<'_>) -> Result<(), Cancel> {
        match self.signal.take() {
            Some(Signal::Cancel(why)) => return Err(why),
            // The end of a wait that was itself cancelled: nobody waits for it any more.
            Some(Signal::WaitOver) | None => {}
        }
        self.keep_waker(cx.waker());
        Ok(())
    }

    pub fn count_completed(&self) {
        self.completed.set(self.completed.get().saturating_add(1));
    }

    pub fn completed(&self) -> u64 {
        u64::from(self.completed.get())
    }

    #[cfg(test)]
    pub fn wait_is_over(&self) -> bool {
        self.signal.get() == Some(Signal::WaitOver)
    }

    /// Forgets the task's waker once the connection is finished.
    pub fn retire(&self) {
        self.end_request();
        self.waker.borrow_mut().take();
    }
}

/// Runs `fut` until it completes or the slot is cancelled. Costs a flag check and a waker
/// comparison per poll; no allocation, no timer. The future comes pinned by the caller
/// (`guarded(slot, pin!(async { .. }))`) so that it is built in place: taking it by value would
/// copy the whole request future (hundreds of bytes) on every request.
pub async fn guarded<F: Future>(slot: &Slot, mut fut: Pin<&mut F>) -> Result<F::Output, Cancel> {
    poll_fn(|cx| {
        if let Err(why) = slot.poll_guard(cx) {
            return Poll::Ready(Err(why));
        }
        fut.as_mut().poll(cx).map(Ok)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::pin;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn a_slot_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Slot>(), 64);
        assert_eq!(std::mem::align_of::<Slot>(), 64);
    }

    #[test]
    fn check_fires_only_when_late() {
        let s = Slot::default();
        let t0 = Tick::now();
        s.check(
            t0.after(Duration::from_secs(100)),
            Duration::from_secs(1),
            Duration::from_secs(1),
            None,
        );
        assert_eq!(s.signal.get(), None, "idle slots are never cancelled");
        s.begin_request(t0);
        s.check(
            t0.after(Duration::from_millis(999)),
            Duration::from_secs(1),
            Duration::from_secs(1),
            None,
        );
        assert_eq!(s.signal.get(), None);
        s.check(
            t0.after(Duration::from_secs(1)),
            Duration::from_secs(1),
            Duration::from_secs(1),
            None,
        );
        assert_eq!(s.signal.get(), Some(Signal::Cancel(Cancel::Timeout)));
        s.begin_request(t0);
        s.begin_connect(t0);
        s.check(
            t0.after(Duration::from_secs(2)),
            Duration::from_secs(5),
            Duration::from_secs(2),
            None,
        );
        assert_eq!(s.signal.get(), Some(Signal::Cancel(Cancel::ConnectTimeout)));
    }

    #[test]
    fn guarded_completes_or_is_cancelled() {
        rt().block_on(async {
            let s = Slot::default();
            assert_eq!(guarded(&s, pin!(async { 7 })).await, Ok(7));
            let never = pin!(std::future::pending::<()>());
            let fire = async {
                tokio::task::yield_now().await;
                s.fire(Cancel::Interrupted);
            };
            let (r, ()) = futures_util::future::join(guarded(&s, never), fire).await;
            assert_eq!(r, Err(Cancel::Interrupted));
            // The cancel is consumed: the next guarded future runs.
            assert_eq!(guarded(&s, pin!(async { 1 })).await, Ok(1));
        });
    }
}
