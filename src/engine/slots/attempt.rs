//! HOT: how an attempt ends, the same for every lane: record the response or classify the
//! failure (`account`), and the back-off after a failed connect. `link` calls it for every
//! lane; --redirect's `async` loop through `attempt`. Must not know how a lane exchanges: it
//! sees a `proto::Response`, a `Fail` or a cancellation.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use crate::clock::Tick;
use crate::engine::protocols::watch::{End, Streamed};
use crate::engine::slots::shared::{Admitted, Shared};
use crate::engine::slots::slot::{Cancel, Slot, guarded};
use crate::proto::{Fail, Response};
use crate::stats::{END_DONE, END_MAX_EVENTS, END_MAX_TIME, END_SERVER, Failure, nanos};

/// When the parts of an attempt happened, set by the lane's exchange as it goes.
#[derive(Debug, Default)]
pub struct Marks {
    /// A new connection was opened for this attempt (its time is inside the latency).
    pub connected: Cell<Option<Tick>>,
    /// The request was handed over in full.
    pub written: Cell<Option<Tick>>,
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Completed {
        keep_alive: bool,
    },
    Failed(Failure),
    /// The run ended (drain over, Ctrl-C) while it was in flight.
    Interrupted,
}

/// How many times a request that went unprocessed (HTTP/1.1: a keep-alive close crossed it;
/// HTTP/2: the server refused it) is sent again before it counts as failed: a server that
/// refuses every request must not keep a count run from ending.
pub const MAX_RETRIES: u8 = 3;

/// Runs `exchange` as the attempt `adm` on `slot` under the slot's guard, and accounts for it:
/// for loops written with `async` (--redirect), which HTTP/2's refusals never reach.
pub async fn attempt<F>(
    ctx: &Shared,
    slot: &Slot,
    adm: Admitted,
    marks: &Marks,
    exchange: Pin<&mut F>,
) -> Ended
where
    F: Future<Output = Result<Response, Fail>>,
{
    slot.begin_request(adm.start);
    let outcome = guarded(slot, exchange).await;
    slot.end_request();
    account(
        ctx,
        slot,
        adm,
        marks.connected.get(),
        marks.written.get(),
        outcome,
    )
}

/// Records or classifies how the attempt `adm` on `slot` ended (warm-up attempts only run: nothing of
/// them is recorded). `connected` and `written` are when a connection opened for it came up and
/// when its request was handed over in full.
pub fn account(
    ctx: &Shared,
    slot: &Slot,
    adm: Admitted,
    connected: Option<Tick>,
    written: Option<Tick>,
    outcome: Result<Result<Response, Fail>, Cancel>,
) -> Ended {
    if adm.warmup {
        return match outcome {
            Ok(Ok(res)) => Ended::Completed {
                keep_alive: res.keep_alive,
            },
            Ok(Err(fail)) => Ended::Failed(fail.class),
            Err(Cancel::Interrupted) => Ended::Interrupted,
            Err(Cancel::Timeout) => Ended::Failed(Failure::Timeout),
            Err(Cancel::ConnectTimeout) => Ended::Failed(Failure::Connect),
            Err(Cancel::Idle) => Ended::Failed(Failure::StreamIdle),
        };
    }
    match outcome {
        Ok(Ok(res)) if in_time(ctx, adm, &res) => {
            record(ctx, adm, connected, written, &res);
            slot.count_completed();
            Ended::Completed {
                keep_alive: res.keep_alive,
            }
        }
        Ok(Err(fail)) => {
            let class = fail.class;
            ctx.fail(class, || fail.to_string());
            Ended::Failed(class)
        }
        Ok(Ok(_)) | Err(Cancel::Timeout) => {
            let t = ctx.setup.timeout;
            // Not written: the server did not read it, or (HTTP/2) allowed no stream for it.
            let sent = written.is_some();
            ctx.fail(Failure::Timeout, || match sent {
                true => format!("no complete response within {t:?}"),
                false => format!("the request could not be sent within {t:?}"),
            });
            Ended::Failed(Failure::Timeout)
        }
        Err(Cancel::ConnectTimeout) => {
            let t = ctx.setup.connect_timeout;
            let msg = || slot.connect_phase().timed_out(t);
            ctx.rec.stats.borrow_mut().connect_failed(msg);
            ctx.fail(Failure::Connect, msg);
            Ended::Failed(Failure::Connect)
        }
        Err(Cancel::Interrupted) => {
            ctx.rec.stats.borrow_mut().interrupted += 1;
            Ended::Interrupted
        }
        Err(Cancel::Idle) => {
            let idle = ctx.setup.idle.unwrap_or_default();
            ctx.fail(Failure::StreamIdle, || {
                format!("the stream received no bytes for {idle:?} (--idle-timeout)")
            });
            Ended::Failed(Failure::StreamIdle)
        }
    }
}

/// Whether a response completed within the request timeout. The sweeper cancels late attempts
/// a tick after their timeout at the latest; a response that completed in that tick is late
/// all the same. With --idle-timeout, a stream's length is not limited: only its first byte
/// must come in time.
#[inline]
fn in_time(ctx: &Shared, adm: Admitted, res: &Response) -> bool {
    let end = match ctx.setup.idle {
        None => res.done,
        Some(_) => res.first_byte.unwrap_or(res.done),
    };
    end.nanos_since(adm.start) < ctx.rec.timeout_ns
}

fn record(
    ctx: &Shared,
    adm: Admitted,
    connected: Option<Tick>,
    written: Option<Tick>,
    res: &Response,
) {
    let t0 = adm.start;
    let write_start = connected.unwrap_or(t0);
    let written = written.unwrap_or(write_start);
    let first_byte = res.first_byte.unwrap_or(written);
    // Open model: from the intended time, so that waiting for a connection (or for spate) counts.
    let intended = adm.intended;
    let latency = res.done.nanos_since(intended.unwrap_or(t0));
    if let Some(interval) = &ctx.rec.interval {
        interval.borrow_mut().record(latency);
    }
    let mut s = ctx.rec.stats.borrow_mut();
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
    if ctx.gate.window_end.get().is_some_and(|end| res.done > end) {
        s.drained += 1;
        s.drained_error_status += u64::from(res.status >= 400);
    }
    if let Some(intended) = intended {
        s.service.record(res.done.nanos_since(t0));
        s.lag.record(t0.nanos_since(intended));
    }
    if let Some(last) = ctx.rec.last_done.replace(Some(res.done)) {
        let gap = res.done.nanos_since(last);
        if s.gap.is_none_or(|(_, longest)| gap > nanos(longest)) {
            s.gap = Some((last.to_instant(), Duration::from_nanos(gap)));
        }
    }
}

/// First wait after a failed reconnect in duration mode; doubles up to `BACKOFF_MAX`.
const BACKOFF_MIN: Duration = Duration::from_millis(1);
const BACKOFF_MAX: Duration = Duration::from_millis(100);

/// A connection's wait before its next connect after a failed one: `BACKOFF_MIN`, doubled after
/// each failure up to `BACKOFF_MAX`. It counts the doublings in one byte, since every
/// connection's state carries one and a `Duration` is sixteen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BackOff(u8);

impl BackOff {
    /// The wait this back-off stands at.
    pub fn wait(self) -> Duration {
        BACKOFF_MIN
            .checked_mul(1 << self.0)
            .map_or(BACKOFF_MAX, |d| d.min(BACKOFF_MAX))
    }

    fn double(&mut self) {
        if self.wait() < BACKOFF_MAX {
            self.0 += 1;
        }
    }
}

/// After a failed attempt: in duration mode, a failed connect waits before the next try, so
/// that spate does not spin on a target that refuses connections. The thread's sweeper ends the
/// wait (`Backoffs`). False when the wait was interrupted (the run is over).
pub async fn back_off(ctx: &Shared, index: usize, class: Failure, delay: &mut BackOff) -> bool {
    if !start_back_off(ctx, index, class, delay) {
        return true;
    }
    ctx.slots[index].wait().await
}

/// Starts the wait of [`back_off`] if a failure of `class` calls for one (true): the sweeper
/// ends it through slot `index` ([`Slot::poll_wait`]), and `delay` doubles for the next.
pub fn start_back_off(ctx: &Shared, index: usize, class: Failure, delay: &mut BackOff) -> bool {
    // The open model's schedule paces retries by itself.
    if !matches!(class, Failure::Connect | Failure::Ports | Failure::Tls)
        || ctx.counts_down()
        || ctx.gate.pacer.get().is_some()
    {
        return false;
    }
    ctx.dial
        .backoffs
        .push(Tick::now().after(delay.wait()), index);
    delay.double();
    true
}

/// A request list: how the attempt `adm`, which sent the list's request `entry`, ended, by
/// that request's place (warm-up attempts are not recorded). `answered`: when an answer came
/// that failed the attempt (an MCP tool's error), whose latency counts as an answer's.
pub fn record_entry(
    ctx: &Shared,
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
    let mut s = ctx.rec.stats.borrow_mut();
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
/// as one). Nothing without --stream: the static path never gets here with a stream.
#[inline]
pub fn record_stream(ctx: &Shared, adm: Admitted, res: &Response, streamed: Option<&Streamed>) {
    if ctx.setup.stream.is_none() {
        return;
    }
    let mut s = ctx.rec.stats.borrow_mut();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_back_off_doubles_from_one_millisecond_to_a_hundred() {
        let mut b = BackOff::default();
        let mut waits = Vec::new();
        for _ in 0..10 {
            waits.push(b.wait().as_millis());
            b.double();
        }
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 100, 100, 100]);
        assert_eq!(size_of::<BackOff>(), 1);
    }
}
