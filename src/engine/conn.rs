//! HOT: the life of one connection slot in the closed model: admit an attempt, (re)connect if
//! needed, send the prepared bytes, read the response, record, repeat. No allocation, lock,
//! message, timer or string formatting per request (a message is formatted only for the first
//! failure of each class).

use std::pin::pin;
use std::time::{Duration, Instant};

use super::shared::{OpenConn, Shared};
use super::slot::{Cancel, Slot, guarded};
use crate::proto::h1::{self, Response};
use crate::stats::{Failure, nanos};

/// First wait after a failed reconnect in duration mode; doubles up to `BACKOFF_MAX`.
const BACKOFF_MIN: Duration = Duration::from_millis(1);
const BACKOFF_MAX: Duration = Duration::from_millis(100);

/// Drives connection slot `index` until the thread stops admitting attempts.
/// `conn` is the pre-connected connection.
pub async fn drive(ctx: &Shared, index: usize, mut conn: Option<OpenConn>) {
    let slot = &ctx.slots[index];
    let mut backoff = BACKOFF_MIN;
    while let Some(t0) = ctx.admit() {
        slot.begin_request(t0);
        let mut connected: Option<Instant> = None;
        let mut written: Option<Instant> = None;
        let outcome = guarded(
            slot,
            pin!(async {
                let c = match conn.as_mut() {
                    Some(c) => c,
                    None => {
                        slot.begin_connect(t0);
                        let c = ctx.open(true).await?;
                        slot.end_connect();
                        connected = Some(Instant::now());
                        conn.insert(c)
                    }
                };
                h1::send(&mut c.conn, &ctx.setup.request).await?;
                written = Some(Instant::now());
                h1::receive(&mut c.conn, ctx.setup.head_request, &ctx.scratch).await
            }),
        )
        .await;
        slot.end_request();
        if written.is_some() {
            ctx.stats.borrow_mut().bytes_out += ctx.setup.request.len() as u64;
        }

        match outcome {
            Ok(Ok(res)) => {
                let write_start = connected.unwrap_or(t0);
                let written = written.unwrap_or(write_start);
                record(ctx, t0, write_start, written, &res);
                if !res.keep_alive || !ctx.setup.keep_alive {
                    conn = None;
                }
                backoff = BACKOFF_MIN;
            }
            Ok(Err(fail)) => {
                conn = None;
                let class = fail.class;
                ctx.fail(class, || fail.to_string());
                if class == Failure::Connect && !ctx.counts_down() {
                    // Duration mode: do not spin on a target that refuses connections.
                    if guarded(slot, pin!(tokio::time::sleep(backoff)))
                        .await
                        .is_err()
                    {
                        break;
                    }
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                }
            }
            Err(cancel) => {
                conn = None;
                match cancel {
                    Cancel::Timeout => {
                        let t = ctx.setup.timeout;
                        ctx.fail(Failure::Timeout, || {
                            format!("no complete response within {t:?}")
                        });
                    }
                    Cancel::ConnectTimeout => {
                        let t = ctx.setup.connect_timeout;
                        let msg = || format!("connect timed out after {t:?}");
                        ctx.stats.borrow_mut().connect_failed(msg);
                        ctx.fail(Failure::Connect, msg);
                    }
                    Cancel::Interrupted => {
                        ctx.stats.borrow_mut().interrupted += 1;
                        break;
                    }
                }
            }
        }
    }
    slot.retire();
}

fn record(ctx: &Shared, t0: Instant, write_start: Instant, written: Instant, res: &Response) {
    let first_byte = res.first_byte.unwrap_or(written);
    let latency = nanos(res.done - t0);
    if let Some(interval) = &ctx.interval {
        interval.borrow_mut().record(latency);
    }
    let mut s = ctx.stats.borrow_mut();
    s.completed += 1;
    s.count_status(res.status);
    s.latency.record(latency);
    s.write.record(nanos(written - write_start));
    s.wait
        .record(nanos(first_byte.saturating_duration_since(written)));
    s.read.record(nanos(res.done - first_byte));
    s.bytes_in += res.bytes_in;
    s.body_bytes += res.body_bytes;
}

/// Opens the connection of `slot` before the clock starts. Failures are counted as connection
/// failures, not as request failures: no request was attempted.
pub async fn preconnect(ctx: &Shared, slot: &Slot) -> Result<OpenConn, String> {
    slot.begin_connect(Instant::now());
    let r = guarded(slot, pin!(ctx.open(false))).await;
    slot.end_connect();
    match r {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(fail)) => Err(fail.to_string()),
        Err(Cancel::Interrupted) => Err("interrupted before the run started".into()),
        Err(Cancel::Timeout | Cancel::ConnectTimeout) => {
            let msg = format!("connect timed out after {:?}", ctx.setup.connect_timeout);
            ctx.stats.borrow_mut().connect_failed(|| msg.clone());
            Err(msg)
        }
    }
}
