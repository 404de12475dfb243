//! --live-json: one JSON line per second of the measured window, the report's timeline entry,
//! written and flushed as soon as every load thread has closed that second. A thread of its
//! own takes the seconds from the run's `Board` a few times a second; the load threads never
//! wait for it. A write that fails (a reader that went away) ends the lines, not the run.

use std::io::Write;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::plan::Plan;
use crate::stats::Board;
use crate::stats::timeline::entries;

/// How often the board is looked at: a second's line is out within this of its close.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// The thread writing the lines.
pub struct LiveJson {
    done: mpsc::Sender<()>,
    thread: JoinHandle<Result<u64, String>>,
}

impl LiveJson {
    /// Starts writing `board`'s seconds of `plan`'s run to `out`, named `name` in errors.
    pub fn start(
        board: Arc<Board>,
        plan: Plan,
        mut out: Box<dyn Write + Send>,
        name: String,
    ) -> Result<LiveJson, String> {
        let (done, rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("spate-live-json".into())
            .spawn(move || {
                let mut written = 0;
                loop {
                    let over = match rx.recv_timeout(LOOK_EVERY) {
                        Err(RecvTimeoutError::Timeout) => false,
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
                    };
                    let lines = lines(&plan, &board.take(over));
                    if !lines.is_empty() {
                        match out.write_all(lines.as_bytes()).and_then(|()| out.flush()) {
                            Ok(()) => written += lines.matches('\n').count() as u64,
                            // The reader went away (`| head`): the lines end, quietly.
                            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                                return Ok(written);
                            }
                            Err(e) => return Err(format!("{name}: {e}")),
                        }
                    }
                    if over {
                        return Ok(written);
                    }
                }
            })
            .map_err(|e| format!("--live-json: cannot start its thread: {e}"))?;
        Ok(LiveJson { done, thread })
    }

    /// The run is over: the last seconds are written, and how many lines there were in all, or
    /// why the lines stopped.
    pub fn finish(self) -> Result<u64, String> {
        let _ = self.done.send(());
        self.thread
            .join()
            .unwrap_or_else(|_| Err("--live-json: its thread failed".into()))
    }
}

/// The lines of `seconds`: each the report's timeline entry, as JSON.
fn lines(plan: &Plan, seconds: &[crate::stats::timeline::Second]) -> String {
    entries(plan, seconds)
        .iter()
        .filter_map(|e| serde_json::to_string(e).ok())
        .map(|l| l + "\n")
        .collect()
}
