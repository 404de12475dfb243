//! COLD: the live progress display on stderr. A thread of its own reads the engine's live views
//! about ten times a second and redraws a small ASCII block in place (terminal), or prints one
//! plain line every 10 s (not a terminal). Never touches sockets; the engine never waits for it.

mod render;
mod signals;
mod terminal;

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossterm::{cursor, queue, style::Print, terminal::Clear, terminal::ClearType};

use crate::engine::Control;
use crate::stats::{Counters, LiveHist};
pub use render::{BLOCK_LINES, LoadStage, Stage, View, block, plain, plain_connecting};
pub use signals::{SAME_REQUEST, install as install_signal_handlers, interrupt_flag};
pub use terminal::TerminalGuard;

/// How often the block is redrawn.
const REDRAW: Duration = Duration::from_millis(100);
/// How often a plain line is printed when stderr is not a terminal.
const PLAIN_EVERY: Duration = Duration::from_secs(10);
/// How often, while the connections open: a phase that takes long (a server that drops
/// connects) says so in a log within seconds.
const PLAIN_CONNECTING_EVERY: Duration = Duration::from_secs(2);
/// Window of the "now" rate and the rolling percentiles.
const WINDOW: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Redraw a block in place on the terminal.
    Terminal,
    /// One line every 10 s, for logs.
    Plain,
    Off,
}

/// What the display knows of the plan.
#[derive(Debug, Clone)]
pub struct Info {
    pub total_requests: Option<u64>,
    pub duration: Option<Duration>,
    pub connections: u32,
    /// --setup-timeout: the longest the connections may take to open.
    pub setup_timeout: Duration,
    /// --stages: the profile whose stage and target the block shows.
    pub stages: Option<crate::plan::Stages>,
    /// --warmup: load before the measured window, which the display says is not recorded.
    pub warmup: Duration,
}

/// A running display; `finish` erases the block and restores the cursor.
pub struct Progress {
    done: mpsc::Sender<()>,
    thread: JoinHandle<()>,
}

impl Progress {
    /// Starts the display thread, or nothing for `Mode::Off` or a `control` without live views.
    pub fn start(control: Arc<Control>, info: Info, mode: Mode) -> Option<Progress> {
        if mode == Mode::Off || control.live().is_empty() {
            return None;
        }
        let (done, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("spate-ui".into())
            .spawn(move || run(&control, info, mode, &rx))
            .ok()?;
        Some(Progress { done, thread })
    }

    pub fn finish(self) {
        let _ = self.done.send(());
        let _ = self.thread.join();
    }
}

/// Rolling figures over the last second, from what the threads published.
struct Window {
    rates: VecDeque<(Instant, u64)>,
    ticks: VecDeque<(Instant, LiveHist)>,
    hist: LiveHist,
    spare: Vec<LiveHist>,
}

impl Window {
    fn new() -> Window {
        Window {
            rates: VecDeque::new(),
            ticks: VecDeque::new(),
            hist: LiveHist::default(),
            spare: Vec::new(),
        }
    }

    fn update(&mut self, control: &Control, now: Instant) -> Counters {
        let mut total = Counters::default();
        let mut tick = self.spare.pop().unwrap_or_default();
        for live in control.live() {
            total.add(&live.counters());
            live.take_interval(&mut tick);
        }
        self.hist.add(&tick);
        self.ticks.push_back((now, tick));
        while self
            .ticks
            .front()
            .is_some_and(|(t, _)| now.duration_since(*t) > WINDOW)
        {
            if let Some((_, mut old)) = self.ticks.pop_front() {
                self.hist.subtract(&old);
                old.reset();
                self.spare.push(old);
            }
        }
        self.rates.push_back((now, total.completed));
        while self.rates.len() > 2
            && self
                .rates
                .get(1)
                .is_some_and(|(t, _)| now.duration_since(*t) >= WINDOW)
        {
            self.rates.pop_front();
        }
        total
    }

    fn rate_now(&self) -> Option<f64> {
        let (t0, c0) = self.rates.front()?;
        let (t1, c1) = self.rates.back()?;
        let dt = t1.duration_since(*t0).as_secs_f64();
        (dt > 0.0).then(|| (c1 - c0) as f64 / dt)
    }
}

/// Where the run stands `since` the start signal (`None`: not yet started).
fn stage(control: &Control, info: &Info, since: Option<Duration>) -> Stage {
    match since {
        None => Stage::Connecting,
        Some(_) if control.stop_requested() => Stage::Stopping,
        Some(e) if e < info.warmup => Stage::WarmingUp,
        Some(e) if info.duration.is_some_and(|d| e - info.warmup >= d) => Stage::Draining,
        Some(_) => Stage::Running,
    }
}

fn run(control: &Control, info: Info, mode: Mode, done: &mpsc::Receiver<()>) {
    let guard = (mode == Mode::Terminal).then(TerminalGuard::hide_cursor);
    let mut window = Window::new();
    let mut drawn = 0usize;
    let mut next_plain = PLAIN_EVERY;
    let began = Instant::now();
    let mut next_connecting = PLAIN_CONNECTING_EVERY;
    // Until the run is over (a message, or the sender gone).
    while let Err(RecvTimeoutError::Timeout) = done.recv_timeout(REDRAW) {
        let now = Instant::now();
        let counters = window.update(control, now);
        let since = control.started().map(|s| now.duration_since(s));
        // The measured window's time: after the warm-up.
        let elapsed = since.map(|e| e.saturating_sub(info.warmup));
        let view = View {
            stage: stage(control, &info, since),
            elapsed: elapsed.unwrap_or_default(),
            warm: since.filter(|&e| e < info.warmup).map(|e| (e, info.warmup)),
            duration: info.duration,
            total_requests: info.total_requests,
            counters,
            rate_now: window.rate_now(),
            rate_avg: elapsed
                .map(|e| e.as_secs_f64())
                .filter(|&e| e > 0.0)
                .map(|e| counters.completed as f64 / e),
            p50_ms: window.hist.quantile(0.5).map(|ns| ns as f64 / 1e6),
            p99_ms: window.hist.quantile(0.99).map(|ns| ns as f64 / 1e6),
            connections: info.connections,
            load: info.stages.as_ref().and_then(|s| {
                let at = elapsed.filter(|_| since.is_some_and(|e| e >= info.warmup))?;
                let (stage, of) = s.stage_at(at)?;
                let connections = s.kind == crate::plan::StageKind::Connections;
                Some(LoadStage {
                    stage,
                    of,
                    target: match connections {
                        true => s.connections_at(at) as f64,
                        false => s.target_at(at),
                    },
                    connections,
                })
            }),
        };
        match mode {
            Mode::Terminal => {
                let width = crossterm::terminal::size().map_or(80, |(w, _)| w as usize);
                // The last column stays empty: some terminals wrap as soon as it is written.
                drawn = draw(&block(&view, width.saturating_sub(1).max(1)), drawn).unwrap_or(drawn);
            }
            Mode::Plain if view.stage == Stage::Connecting => {
                let connecting = now.duration_since(began);
                if connecting >= next_connecting {
                    next_connecting += PLAIN_CONNECTING_EVERY;
                    let line = plain_connecting(&view, connecting, info.setup_timeout);
                    let _ = writeln!(io::stderr().lock(), "{line}");
                }
            }
            Mode::Plain if view.elapsed >= next_plain => {
                next_plain += PLAIN_EVERY;
                let mut err = io::stderr().lock();
                let _ = writeln!(err, "{}", plain(&view));
            }
            _ => {}
        }
    }
    if drawn > 0 {
        let _ = erase(drawn);
    }
    drop(guard);
}

/// One line on stderr, what came from outside in it (a server's message, a saved file's)
/// escaped: it stays one line and cannot drive the terminal. Unlike `eprintln!`, it does not
/// panic when stderr is gone (the terminal closed after SIGHUP): the report and the saved file
/// matter more than this line.
pub fn say(line: &str) {
    let _ = writeln!(io::stderr(), "{}", crate::escape::term(line));
}

/// Redraws the block over the `previous` lines it occupied; returns the lines now drawn.
fn draw(lines: &[String], previous: usize) -> io::Result<usize> {
    let mut err = io::stderr().lock();
    if previous > 1 {
        queue!(err, cursor::MoveUp((previous - 1) as u16))?;
    }
    queue!(err, cursor::MoveToColumn(0))?;
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            queue!(err, Print("\n"))?;
        }
        queue!(err, Clear(ClearType::UntilNewLine), Print(line))?;
    }
    err.flush()?;
    Ok(lines.len())
}

/// Removes the block, leaving the cursor where it began. Line by line: clearing to the end of
/// the screen from the top-left corner counts as clearing the screen, and tmux then keeps a copy
/// in its scrollback (scroll-on-clear).
fn erase(lines: usize) -> io::Result<()> {
    let mut err = io::stderr().lock();
    if lines > 1 {
        queue!(err, cursor::MoveUp((lines - 1) as u16))?;
    }
    for i in 0..lines {
        if i > 0 {
            queue!(err, cursor::MoveDown(1))?;
        }
        queue!(err, cursor::MoveToColumn(0), Clear(ClearType::CurrentLine))?;
    }
    if lines > 1 {
        queue!(err, cursor::MoveUp((lines - 1) as u16))?;
    }
    err.flush()
}
