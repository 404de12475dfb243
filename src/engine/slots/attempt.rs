//! HOT: how an attempt ends, the same for every protocol and workload: record the response or
//! classify the failure (`account`), and the back-off after a failed connect. `link` calls it
//! for every slot. Must not know how a protocol exchanges: it sees a `proto::Response`, a
//! `Fail` or a cancellation.

use std::time::Duration;

use crate::clock::Tick;
use crate::engine::slots::shared::{Admitted, Shared};
use crate::engine::slots::slot::{Cancel, Slot};
use crate::proto::{Fail, Response};
use crate::stats::Failure;

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
            ctx.rec
                .response(adm, connected, written, &res, ctx.gate.window_end.get());
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
            ctx.rec.connect_failed(msg);
            ctx.fail(Failure::Connect, msg);
            Ended::Failed(Failure::Connect)
        }
        Err(Cancel::Interrupted) => {
            ctx.rec.interrupted(1);
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
/// that spate does not spin on a target that refuses connections. Starts that wait if a failure
/// of `class` calls for one (true): the sweeper ends it through slot `index`
/// ([`Slot::poll_wait`](crate::engine::slots::slot::Slot::poll_wait)), and `delay` doubles for
/// the next.
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
