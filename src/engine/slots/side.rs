//! A load thread's tasks beside its connections: the sweeper (timeouts, outside stop requests,
//! the end of the connection phase and of the drain, progress for the display, the waits
//! between failed connects, one timer for all), the open model's pacer, and --busy-poll's
//! spinner. Must not send or read a request.

use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::clock::Tick;
use crate::engine::slots::shared::{Limit, Shared};
use crate::engine::slots::slot::Cancel;
use crate::stats::timeline::Recorder;
use crate::timer::Timer;

/// The open model's clock: while connections wait, sleep until the next request falls due
/// (a precise timer, not tokio's millisecond one), then wake one waiting connection per due
/// request. Idle when nobody waits: a connection that finishes takes a due request by itself.
pub(in crate::engine) async fn pace(ctx: Rc<Shared>, mut timer: Timer) {
    let Some(pacer) = ctx.gate.pacer.get() else {
        return;
    };
    loop {
        std::future::poll_fn(|cx| {
            if pacer.has_waiters() || pacer.is_over() {
                std::task::Poll::Ready(())
            } else {
                pacer.park(cx.waker());
                std::task::Poll::Pending
            }
        })
        .await;
        if pacer.is_over() {
            pacer.wake_all();
            return;
        }
        timer.sleep_until(pacer.next_due()).await;
        pacer.wake(pacer.due_count(Instant::now()).max(1));
    }
}

/// --busy-poll: keeps the thread's runtime polling for events instead of sleeping in the kernel,
/// so that a response is seen without a wake-up delay.
pub(in crate::engine) async fn spin(ctx: Rc<Shared>) {
    while !ctx.gate.stop.get() {
        tokio::task::yield_now().await;
    }
}

/// How often the sweeper looks at the slots: a tenth of the shortest timeout (--idle-timeout
/// included), within 1-100 ms.
fn tick(ctx: &Shared) -> Duration {
    let shortest = ctx.setup.timeout.min(ctx.setup.connect_timeout);
    let shortest = ctx.setup.idle.map_or(shortest, |idle| shortest.min(idle));
    (shortest / 10).clamp(Duration::from_millis(1), Duration::from_millis(100))
}

/// Reacts to an outside stop request: before the start it abandons the pre-connects; after it,
/// it stops admitting requests and gives those in flight the drain period.
fn honour_stop(ctx: &Shared, now: Instant) {
    if ctx.gate.interrupted.get() || !ctx.stop_requested() {
        return;
    }
    ctx.gate.interrupted.set(true);
    // The measured window ends here: what completes from now on completes in the drain.
    let now_tick = Tick::of(now);
    if ctx.gate.started.get().is_some()
        && ctx.gate.window_end.get().is_none_or(|end| now_tick < end)
    {
        ctx.gate.window_end.set(Some(now_tick));
        if let Some(recorder) = ctx.rec.timeline.borrow_mut().as_mut() {
            recorder.end_window(now);
        }
    }
    if let Some(pacer) = ctx.gate.pacer.get() {
        pacer.close();
    }
    if ctx.gate.limit.get() == Limit::Closed {
        for slot in ctx.slots.iter() {
            slot.fire(Cancel::Interrupted);
        }
    } else {
        ctx.gate.limit.set(Limit::Closed);
        let end = now + ctx.setup.drain;
        ctx.gate
            .drain_end
            .set(Some(ctx.gate.drain_end.get().map_or(end, |d| d.min(end))));
    }
}

/// Ends the connection phase at its deadline: no pre-connect starts any more, and those under
/// way are abandoned, so that the run starts with the connections that are open.
fn end_setup(ctx: &Shared, now: Instant) {
    if ctx.gate.setup_over.get()
        || ctx.gate.started.get().is_some()
        || now < ctx.setup.setup_deadline
    {
        return;
    }
    ctx.gate.setup_over.set(true);
    for slot in ctx.slots.iter().filter(|s| s.connecting()) {
        slot.fire(Cancel::Interrupted);
    }
}

/// Enforces timeouts, outside stop requests and the end of the drain for every slot of the
/// thread, publishes progress to the display, and ends the waits between failed connects. One
/// timer per thread instead of one per request. Being a timer, it also notices when the thread
/// itself did not run: it then wakes late by that much.
pub(in crate::engine) async fn sweep(ctx: Rc<Shared>, mut timer: Timer) {
    let tick = tick(&ctx);
    let mut rates = crate::engine::run::rates::Rates::default();
    // When the timer was set to wake the sweeper, if it did.
    let mut due: Option<Instant> = None;
    let mut scan_at = Instant::now();
    loop {
        let now = Instant::now();
        if let (Some(due), Some(started)) = (due, ctx.gate.started.get()) {
            // A wake-up planned before the start signal was held up by the wait for it.
            if due >= started {
                let late = now.saturating_duration_since(due);
                ctx.rec.stalled(due, late);
            }
        }
        if now >= scan_at {
            scan(&ctx, now);
            rates.sample(&ctx, now);
            scan_at = now + tick;
            if let Some(end) = ctx.gate.drain_end.get().filter(|&end| end > now) {
                scan_at = scan_at.min(end);
            }
        }
        ctx.dial.backoffs.release(Tick::of(now), &ctx.slots);
        ctx.take_second(now, false);
        let second = ctx
            .rec
            .timeline
            .borrow()
            .as_ref()
            .and_then(Recorder::next_at);
        let next = ctx
            .dial
            .backoffs
            .earliest()
            .map_or(scan_at, |t| t.to_instant().min(scan_at));
        let next = second.map_or(next, |s| s.min(next));
        let fired = ctx
            .dial
            .backoffs
            .sleep_until(Tick::of(next), timer.sleep_until(next))
            .await;
        due = fired.then_some(next);
    }
}

/// One look at every slot: outside stop requests, the end of the drain, timeouts; and the
/// progress for the display.
fn scan(ctx: &Shared, now: Instant) {
    honour_stop(ctx, now);
    end_setup(ctx, now);
    ctx.publish();
    if ctx.gate.drain_end.get().is_some_and(|end| now >= end) {
        ctx.gate.stop.set(true);
        for slot in ctx.slots.iter() {
            slot.fire(Cancel::Interrupted);
        }
    }
    let now_tick = Tick::of(now);
    for slot in ctx.slots.iter() {
        slot.check(
            now_tick,
            ctx.setup.timeout,
            ctx.setup.connect_timeout,
            ctx.setup.idle,
        );
    }
}
