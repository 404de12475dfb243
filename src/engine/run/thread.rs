//! One load thread: a tokio current-thread runtime that pre-connects its share of connections,
//! reports them, waits for the start signal, then runs its connections (in the thread's one set
//! of tasks, `tasks::run`) and its side tasks (`side`: the sweeper, the open model's pacer)
//! until the thread's part is done.

use std::future::{Future, poll_fn};
use std::ops::ControlFlow;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::mpsc::{Receiver, Sender};
use std::task::Poll;
use std::time::{Duration, Instant};

use crate::clock::Tick;
use crate::engine::admit::pace::{Pacer, Schedule};
use crate::engine::run::cpu::thread_cpu;
use crate::engine::run::staffing;
use crate::engine::slots::drive::{NotOpen, Unopened, links, preconnect};
use crate::engine::slots::shared::{Connected, LaneChoice, Limit, Setup, Shared};
use crate::engine::slots::side;
use crate::engine::slots::slot::Slot;
use crate::engine::slots::task_set::TaskSet;
use crate::engine::slots::tasks::{self, Conns};
use crate::plan::Plan;
use crate::route::Endpoint;
use crate::script::{ThreadEnd, Worker};
use crate::stats::timeline::Recorder;
use crate::stats::{Failure, NotOpened, Stats};
use crate::timer::Timer;

/// A thread's report after pre-connecting.
#[derive(Debug)]
pub struct Ready {
    pub thread: usize,
    pub established: u64,
    /// The first pre-connect failure: its class and message.
    pub first_error: Option<(Failure, String)>,
    /// What became of the connections that did not open.
    pub not_opened: NotOpened,
    /// The thread's script state could not be made (its message).
    pub script_error: Option<String>,
}

/// The start signal: how this thread's run ends.
#[derive(Debug, Clone)]
pub struct Go {
    pub limit: Limit,
    /// The start of the measured window (the start signal, plus --warmup).
    pub window_start: Instant,
    pub drain_end: Option<Instant>,
    /// Duration mode: the end of the measured window (responses after it complete in the drain).
    pub window_end: Option<Instant>,
    /// Closed model: attempts that start before this are the warm-up.
    pub warmup_end: Option<Instant>,
    /// Open model: the thread's schedule.
    pub paced: Option<Paced>,
}

/// The open-model part of the start signal.
#[derive(Debug, Clone)]
pub struct Paced {
    pub schedule: Schedule,
    /// Requests before this index are the warm-up.
    pub recorded_from: u64,
    /// Requests from this index on are not sent.
    pub end: u64,
    pub max_lag: Option<Duration>,
}

pub struct Finished {
    pub stats: Stats,
    /// When the last connection of the thread finished.
    pub end: Instant,
    /// CPU time the thread used between the start signal and its end.
    pub cpu: Option<Duration>,
    /// The thread stopped early because it was asked to (Ctrl-C).
    pub interrupted: bool,
    /// The end of the measured window as the thread kept it: the deadline, or when it noticed a
    /// stop request; `None` in a count run that ran to its end.
    pub window_end: Option<Instant>,
    /// The thread's script failed (its message).
    pub script_error: Option<String>,
    /// The thread's Lua was interrupted at the end of the run.
    pub script_interrupted: bool,
    /// The thread's script stopped it (`wrk.thread:stop()`) before the run's end.
    pub halted: bool,
    /// What the thread's script state left, when it had one.
    pub script_end: Option<ThreadEnd>,
}

/// Sends this thread's `Ready` exactly once. If the thread ends before reporting (its runtime
/// could not start, or a bug panicked it), `Drop` reports zero connections, so that the main
/// thread, which waits for every report, is never left waiting.
struct Reporter {
    thread: usize,
    tx: Option<Sender<Ready>>,
}

impl Reporter {
    fn report(
        &mut self,
        established: u64,
        first_error: Option<(Failure, String)>,
        not_opened: NotOpened,
    ) {
        self.send(Ready {
            thread: self.thread,
            established,
            first_error,
            not_opened,
            script_error: None,
        });
    }

    /// The script's state could not be made: the thread opens nothing.
    fn script_failed(&mut self, message: String) {
        self.send(Ready {
            thread: self.thread,
            established: 0,
            first_error: None,
            not_opened: NotOpened::default(),
            script_error: Some(message),
        });
    }

    fn send(&mut self, ready: Ready) {
        if let Some(tx) = self.tx.take() {
            // The receiver lives until every thread has reported; an error means the run is
            // being torn down, and the closed `go` channel then ends this thread.
            let _ = tx.send(ready);
        }
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.report(
            0,
            Some((
                Failure::Connect,
                "a load thread ended before it was ready".into(),
            )),
            NotOpened::default(),
        );
    }
}

pub fn run(
    thread: usize,
    mut setup: Setup,
    connect_limit: usize,
    ready: Sender<Ready>,
    go: Receiver<Go>,
) -> std::io::Result<Finished> {
    let mut reporter = Reporter {
        thread,
        tx: Some(ready),
    };
    let script = match script_state(&mut setup) {
        Ok(w) => w,
        Err(message) => {
            reporter.script_failed(message);
            return Ok(Finished {
                stats: Stats::default(),
                end: Instant::now(),
                cpu: None,
                interrupted: false,
                window_end: None,
                script_error: None,
                script_interrupted: false,
                halted: false,
                script_end: None,
            });
        }
    };
    // No time driver: it would cost every wake-up of the thread (its wheel and two clock reads
    // per park). The sweeper and the pacer sleep on timers of their own (`crate::timer`), and the
    // waits between failed connects on the sweeper's (`Backoffs`).
    let mut builder = tokio::runtime::Builder::new_current_thread();
    builder.enable_io();
    // Elsewhere `Timer` is tokio's; and QUIC's timers (--http3) are tokio's everywhere.
    if cfg!(not(target_os = "linux")) || setup.lane == LaneChoice::Http3 {
        builder.enable_time();
    }
    let rt = builder.build()?;
    crate::timer::tighten_timer_slack();
    let (sweep_timer, pace_timer, staff_timer) = {
        let _in = rt.enter();
        let timer = || {
            Timer::exact().map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("cannot create a load thread's timer: {e}"),
                )
            })
        };
        let staff = match setup.staff {
            Some(_) => Some(timer()?),
            None => None,
        };
        (timer()?, timer()?, staff)
    };
    let ctx = Rc::new(Shared::new(setup, script));
    let running = Conns::default();
    let mut cpu = None;
    let end = rt.block_on(tasks::run(&ctx.tasks, &running, async {
        ctx.tasks.spawn(side::sweep(ctx.clone(), sweep_timer));

        // A connection profile opens what its start asks for (one at least: the target is
        // checked before the clock, and the connection closes at the start if above it).
        let first = match &ctx.setup.staff {
            Some(s) => s.groups_at(Duration::ZERO).clamp(1, ctx.setup.connections),
            None => ctx.setup.connections,
        };
        let (mut open, first_error) = open_all(&ctx, connect_limit, first).await;
        let not_opened = ctx.rec.stats().not_opened;
        let opened = open.len() as u64;
        if let Some(s) = &ctx.setup.staff {
            let level = s.groups_at(Duration::ZERO);
            let probes;
            (open, probes) = open.into_iter().partition(|&(g, _)| g < level);
            for (_, probe) in &probes {
                ctx.rec.probed(probe);
            }
        }
        reporter.report(opened, first_error, not_opened);

        // Blocking here is deliberate: nothing else on this thread may run before the clock.
        let Ok(start) = go.recv() else {
            return Instant::now();
        };
        let cpu_start = thread_cpu();
        ctx.gate.started.set(Some(Instant::now()));
        ctx.gate.limit.set(start.limit);
        ctx.gate.drain_end.set(start.drain_end);
        ctx.gate.window_end.set(start.window_end.map(Tick::of));
        ctx.gate.warmup_end.set(start.warmup_end.map(Tick::of));
        *ctx.rec.timeline.borrow_mut() = Some(Recorder::new(start.window_start, start.window_end));
        if let Some(p) = start.paced {
            let pacer = Pacer::new(
                p.schedule,
                p.recorded_from,
                p.end,
                start.window_end,
                p.max_lag,
                ctx.slots.len(),
            );
            let _ = ctx.gate.pacer.set(pacer);
            ctx.tasks.spawn(side::pace(ctx.clone(), pace_timer));
        }
        if ctx.setup.busy_poll {
            ctx.tasks.spawn(side::spin(ctx.clone()));
        }

        // Connections that never opened are not counted as starved ones; under a connection
        // profile, connections come and go, and none is.
        let established: Vec<usize> = match &ctx.setup.staff {
            Some(_) => Vec::new(),
            None => open.iter().map(|&(g, _)| g).collect(),
        };
        match (&ctx.setup.staff, staff_timer) {
            (Some(s), Some(timer)) => {
                let level = s.groups_at(Duration::ZERO).min(ctx.setup.connections);
                staffing::begin(&ctx, &running, open, level);
                let begun = start.window_start.checked_sub(s.warmup());
                let begun = begun.unwrap_or(start.window_start);
                staffing::staff(ctx.clone(), &running, timer, begun).await;
            }
            _ => running.push_all(links(ctx.clone(), open)),
        }
        running.all_done().await;
        if ctx.setup.lane == LaneChoice::Http3 {
            quic_closes_out().await;
        }
        ctx.take_second(Instant::now(), true);
        cpu = cpu_start
            .zip(thread_cpu())
            .map(|(a, b)| b.saturating_sub(a));
        ctx.publish();
        ctx.rec.per_client(
            established
                .iter()
                .map(|&g| ctx.group_slots(g).iter().map(Slot::completed).sum::<u64>()),
        );
        Instant::now()
    }));
    let mut stats = ctx.rec.take();
    if let Some(pacer) = ctx.gate.pacer.get() {
        stats.scheduled = pacer.scheduled();
        stats.dropped = pacer.dropped();
    }
    if let Some(gaps) = &ctx.rec.gaps {
        stats.stream.get_or_insert_with(Box::default).gap += &*gaps.borrow();
    }
    stats.bytes_in += ctx.rec.h2_bytes.read.get();
    stats.bytes_out += ctx.rec.h2_bytes.written.get();
    stats.sessions_ended += ctx.sessions_ended.get();
    stats.per_thread = vec![stats.completed - stats.drained];
    if let Some(recorder) = ctx.rec.timeline.take() {
        stats.seconds = recorder.seconds;
    }
    if let Some(board) = &ctx.setup.board {
        board.done(ctx.setup.thread);
    }
    let (mut script_error, mut script_end) = (None, None);
    let halted = ctx.script.as_ref().is_some_and(|w| w.stopped());
    let script_interrupted = ctx.script.as_ref().is_some_and(|w| w.interrupted());
    if let Some(w) = &ctx.script {
        (stats.lua_ns, stats.lua_calls) = w.cost();
        script_error = w.take_error();
        script_end = Some(ThreadEnd {
            globals: w.export(),
        });
    }
    Ok(Finished {
        stats,
        end,
        cpu,
        interrupted: ctx.gate.interrupted.get(),
        window_end: ctx.gate.window_end.get().map(Tick::to_instant),
        script_error,
        script_interrupted,
        halted,
        script_end,
    })
}

/// The thread's script state, made on this thread (`init` run), when the script needs one per
/// thread; a thread whose `init` shaped another request than the run's gets its own.
/// --http3: lets quinn's connection tasks run, so that the CONNECTION_CLOSE of each connection
/// the slots closed last leaves before the runtime ends; without it the server keeps those
/// connections until its idle timeout. Each yield lets every woken task run once; a closed
/// connection's task sends its close the first time it runs.
async fn quic_closes_out() {
    for _ in 0..4 {
        tokio::task::yield_now().await;
    }
}

fn script_state(setup: &mut Setup) -> Result<Option<Rc<Worker>>, String> {
    let Some(s) = setup.script.clone() else {
        return Ok(None);
    };
    let addr = match &*setup.endpoint {
        Endpoint::Tcp(addrs) => addrs.first().copied(),
        Endpoint::Unix(_) => None,
    };
    let worker = Worker::new(&s.script, &s.seed, addr)?;
    if worker.shaped != s.script.shaped {
        let mut plan = Plan::clone(&s.plan);
        worker.shaped.apply(&mut plan);
        crate::engine::run::requests::shape_requests(setup, &plan)
            .map_err(|e| format!("--script {}: {e}", s.script.name))?;
    }
    worker.offer(&setup.request)?;
    Ok(Some(Rc::new(worker)))
}

/// A pre-connect: the connection's index and what came of it.
type Attempt<'a> = Pin<Box<dyn Future<Output = (usize, Result<Connected, NotOpen>)> + 'a>>;

/// Pre-connects the thread's first `groups` connections, at most `limit` at a time, until all are tried or the
/// connection phase ends (`Shared::setup_over`), and returns those that opened, in index order,
/// with the first failure; the thread's stats count what became of the others. The attempts
/// run in a task set of their own
/// whose places, and so wakers, the later attempts reuse: a socket keeps the waker of the task
/// that connected it until its connection first polls it, and with a waker per attempt
/// (`buffer_unordered`) every attempt's task stayed allocated into the run (2 MB at c = 10,000).
async fn open_all(
    ctx: &Shared,
    limit: usize,
    groups: usize,
) -> (Vec<(usize, Connected)>, Option<(Failure, String)>) {
    let limit = limit.max(1);
    let mut open = Vec::with_capacity(groups);
    let mut first_error = None;
    let mut first_cut_off = None;
    let mut attempts: TaskSet<Attempt<'_>> = TaskSet::default();
    let mut next = 0;
    poll_fn(|cx| {
        loop {
            while next < groups && attempts.live() < limit && !ctx.gate.setup_over.get() {
                let g = next;
                attempts.push(Box::pin(async move {
                    (g, preconnect(ctx, &ctx.group_slots(g)[0]).await)
                }));
                next += 1;
            }
            let polled = attempts.poll(cx, |(g, r)| {
                match r {
                    Ok(c) => open.push((g, c)),
                    Err(e) => {
                        ctx.rec.not_opened(e.why);
                        // A connection cut off says less than one that failed by itself.
                        let first = match e.why {
                            Unopened::CutOff => &mut first_cut_off,
                            _ => &mut first_error,
                        };
                        first.get_or_insert((e.class, e.message));
                    }
                }
                ControlFlow::Continue(())
            });
            if attempts.live() == 0 && (next == groups || ctx.gate.setup_over.get()) {
                ctx.rec.not_tried((groups - next) as u64);
                return Poll::Ready(());
            }
            // Places freed by this poll take the next attempts at once, unless the set asked
            // the runtime to look for I/O first.
            if polled.yielded || next == groups || attempts.live() == limit {
                return Poll::Pending;
            }
        }
    })
    .await;
    open.sort_unstable_by_key(|&(g, _)| g);
    (open, first_error.or(first_cut_off))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_always_reports_once() {
        let (tx, rx) = std::sync::mpsc::channel();
        let mut r = Reporter {
            thread: 3,
            tx: Some(tx),
        };
        r.report(7, None, NotOpened::default());
        drop(r);
        let got: Vec<Ready> = rx.iter().collect();
        assert_eq!(got.len(), 1, "an explicit report is not repeated on drop");
        assert_eq!((got[0].thread, got[0].established), (3, 7));

        let (tx, rx) = std::sync::mpsc::channel();
        drop(Reporter {
            thread: 1,
            tx: Some(tx),
        });
        let got: Vec<Ready> = rx.iter().collect();
        assert_eq!(got.len(), 1, "a thread that never reported still reports");
        assert_eq!(got[0].established, 0);
        assert!(got[0].first_error.is_some());
    }
}
