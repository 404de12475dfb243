//! What the outside world shares with a running engine: a stop flag (set by a signal handler or
//! a caller), the live views a display reads, the instant the clock started, and what each load
//! thread's script state left (for `done()`). Read by the engine's sweepers a few times a
//! second, never on the hot path.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crate::script::ThreadEnd;
use crate::stats::Live;

#[derive(Debug, Default)]
pub struct Control {
    stop: Arc<AtomicBool>,
    live: Vec<Arc<Live>>,
    started: OnceLock<Instant>,
    /// -s: what each load thread's script state left, in thread order, once the run ended.
    script_ends: Mutex<Vec<ThreadEnd>>,
    /// --live-json: where the threads hand over their seconds as they close.
    board: Option<Arc<crate::stats::Board>>,
}

impl Control {
    /// No live views: nothing on the hot path records for a display.
    pub fn new() -> Control {
        Control::default()
    }

    /// Without live views, stopped by a flag shared with other runs (`spate compare`'s rounds:
    /// one Ctrl-C handler for all of them).
    pub fn with_stop(stop: Arc<AtomicBool>) -> Control {
        Control {
            stop,
            ..Control::default()
        }
    }

    /// With one live view per load thread (`threads` must be `Plan::effective_threads`).
    pub fn with_live(threads: usize) -> Control {
        Control {
            live: (0..threads).map(|_| Arc::new(Live::default())).collect(),
            ..Control::default()
        }
    }

    /// The flag a signal handler sets: stop sending, drain briefly, report.
    /// The threads hand over each second of their timelines to `board` as they close it.
    pub fn with_board(mut self, board: Arc<crate::stats::Board>) -> Control {
        self.board = Some(board);
        self
    }

    pub fn board(&self) -> Option<&Arc<crate::stats::Board>> {
        self.board.as_ref()
    }

    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    pub fn live(&self) -> &[Arc<Live>] {
        &self.live
    }

    /// When the clock started (all connections open); `None` while connecting.
    pub fn started(&self) -> Option<Instant> {
        self.started.get().copied()
    }

    pub(crate) fn mark_started(&self, at: Instant) {
        let _ = self.started.set(at);
    }

    /// -s: what each load thread's script state left, in thread order (empty without a
    /// script, or before the run ended); taken once.
    pub fn take_script_ends(&self) -> Vec<ThreadEnd> {
        std::mem::take(&mut self.script_ends.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub(crate) fn keep_script_ends(&self, ends: Vec<ThreadEnd>) {
        *self.script_ends.lock().unwrap_or_else(|e| e.into_inner()) = ends;
    }
}
