//! The closed model under `--stages` of connections, on one thread: the stager keeps the
//! thread's connections at the profile's level. As the level rises it opens the next
//! connections (before their first request, as the run's first ones were) and runs their
//! links; as it falls, each link above it ends at its next request and closes its connection
//! (`Gate::admit`). Sleeps between the level's changes on a precise timer. Sends nothing itself.

use std::future::{Future, poll_fn};
use std::ops::ControlFlow;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::Poll;
use std::time::{Duration, Instant};

use crate::clock::Tick;
use crate::engine::slots::drive::{Drive, links};
use crate::engine::slots::shared::{Connected, Shared};
use crate::engine::slots::slot::{Cancel, guarded};
use crate::engine::slots::task_set::TaskSet;
use crate::engine::slots::tasks::Conns;
use crate::timer::Timer;

/// The longest sleep between looks at the run's end (a stop request ends it early).
const LOOK: Duration = Duration::from_millis(50);

/// The first wait after a connection of the profile failed to open, and the longest.
const FIRST_WAIT: Duration = Duration::from_millis(10);
const LONGEST_WAIT: Duration = Duration::from_secs(1);

type Opening<'a> = Pin<Box<dyn Future<Output = (usize, Option<Connected>)> + 'a>>;

/// The slots a thread's links of the `open` groups hold.
fn links_of(ctx: &Shared, c: &Connected) -> usize {
    match c {
        Connected::H1(_) => 1,
        Connected::H2(_) | Connected::H3(_) => ctx.setup.streams.max(1),
    }
}

/// Sets the level at the profile's start (`groups` of the thread's connections run) and hands
/// the links of the pre-connected `open` groups to `running`.
pub(super) fn begin(
    ctx: &Rc<Shared>,
    running: &Conns<Drive>,
    open: Vec<(usize, Connected)>,
    groups: usize,
) {
    let streams = ctx.setup.streams.max(1);
    ctx.gate.slots_on.set(groups * streams);
    if let Some(crews) = &ctx.crews {
        for (g, c) in &open {
            crews.started(*g, links_of(ctx, c));
        }
    }
    running.push_all(links(ctx.clone(), open));
}

/// Keeps the thread's connections at the profile's level from `start` until the profile (or
/// the run) is over.
pub(super) async fn staff(
    ctx: Rc<Shared>,
    running: &Conns<Drive>,
    mut timer: Timer,
    start: Instant,
) {
    let (Some(staffing), Some(crews)) = (ctx.setup.staff.clone(), ctx.crews.as_ref()) else {
        return;
    };
    let streams = ctx.setup.streams.max(1);
    let groups = ctx.setup.connections;
    let mut opening: TaskSet<Opening<'_>> = TaskSet::default();
    let mut busy = vec![false; groups];
    // Per group: not before this instant after a failed open, and the next wait.
    let mut not_before = vec![None::<Instant>; groups];
    let mut wait = vec![FIRST_WAIT; groups];
    let mut opened = Vec::new();
    loop {
        let now = Instant::now();
        if ctx.is_over() {
            return;
        }
        let at = now.saturating_duration_since(start);
        let Some(change) = staffing.next_change(at) else {
            return;
        };
        let level = staffing.groups_at(at).min(groups);
        ctx.gate.slots_on.set(level * streams);
        let mut retry = None::<Instant>;
        for g in 0..level {
            if busy[g] || !crews.is_idle(g) {
                continue;
            }
            match not_before[g] {
                Some(t) if t > now => {
                    retry = Some(retry.map_or(t, |r: Instant| r.min(t)));
                    continue;
                }
                _ => {}
            }
            busy[g] = true;
            let own = &ctx;
            opening.push(Box::pin(async move { (g, open(own, g).await) }));
        }
        let mut wake = (start + change).max(now + Duration::from_micros(1));
        wake = wake.min(now + LOOK);
        if let Some(r) = retry {
            wake = wake.min(r);
        }
        {
            let mut sleep = pin!(timer.sleep_until(wake));
            poll_fn(|cx| {
                let polled = opening.poll(cx, |done| {
                    opened.push(done);
                    ControlFlow::Continue(())
                });
                if !opened.is_empty() || crews.take_ended(cx.waker()) {
                    return Poll::Ready(());
                }
                if polled.yielded {
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                sleep.as_mut().poll(cx)
            })
            .await;
        }
        for (g, c) in opened.drain(..) {
            busy[g] = false;
            match c {
                Some(c) => {
                    (not_before[g], wait[g]) = (None, FIRST_WAIT);
                    crews.started(g, links_of(&ctx, &c));
                    running.push_all(links(ctx.clone(), vec![(g, c)]));
                }
                None => {
                    not_before[g] = Some(Instant::now() + wait[g]);
                    wait[g] = (wait[g] * 2).min(LONGEST_WAIT);
                }
            }
        }
    }
}

/// Opens connection `g` on its first slot, under the slot's connect timeout; `None` when it
/// failed (counted as a connect failure) or the run stopped.
async fn open(ctx: &Shared, g: usize) -> Option<Connected> {
    let slot = &ctx.group_slots(g)[0];
    slot.begin_connect(Tick::now());
    let r = guarded(slot, pin!(ctx.open(false, slot))).await;
    slot.end_connect();
    match r {
        Ok(Ok(c)) => Some(c),
        // `open` counted it.
        Ok(Err(_)) | Err(Cancel::Interrupted) => None,
        Err(_) => {
            let msg = slot.connect_phase().timed_out(ctx.setup.connect_timeout);
            ctx.rec.connect_failed(|| msg);
            None
        }
    }
}
