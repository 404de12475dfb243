//! What watches a run while it goes, beside the live display: --live-json's lines and
//! --metrics-listen's endpoint. One thread takes the run's closed seconds from the `Board` a
//! few times a second and hands them to both; the endpoint answers from the figures so far,
//! and from the whole run's once it is over. The load threads never wait for any of it, and
//! nothing here is on the request path.

pub mod endpoint;
pub mod exposition;
mod lines;
pub mod setup;

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::plan::Plan;
use crate::stats::running::Running;
use crate::stats::{Board, Stats};
use endpoint::Endpoint;
use lines::Lines;

/// How often the board is looked at: a second is out within this of its close.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// What watches the run: the thread that takes its seconds, and the endpoint.
pub struct Watching {
    done: mpsc::Sender<()>,
    thread: Option<JoinHandle<Option<Lines>>>,
    figures: Arc<Mutex<Running>>,
    endpoint: Option<Endpoint>,
}

/// Where the run is watched from.
pub struct Watchers {
    /// --live-json: where the lines go, and its name for errors.
    pub lines: Option<(Box<dyn std::io::Write + Send>, String)>,
    /// --metrics-listen: the bound listener, and the labels of every series.
    pub metrics: Option<(std::net::TcpListener, exposition::Labels)>,
}

impl Watching {
    /// Starts watching `plan`'s run through `board`.
    pub fn start(board: Arc<Board>, plan: Plan, w: Watchers) -> Result<Watching, String> {
        let figures = Arc::new(Mutex::new(Running::default()));
        let endpoint = match w.metrics {
            Some((listener, labels)) => Some(Endpoint::serve(listener, figures.clone(), labels)?),
            None => None,
        };
        let mut lines = w.lines.map(|(out, name)| Lines::new(out, name));
        let (done, rx) = mpsc::channel::<()>();
        let running = endpoint.as_ref().map(|_| figures.clone());
        let thread = std::thread::Builder::new()
            .name("spate-watch".into())
            .spawn(move || {
                loop {
                    let over = match rx.recv_timeout(LOOK_EVERY) {
                        Err(RecvTimeoutError::Timeout) => false,
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
                    };
                    let seconds = board.take(over);
                    if !seconds.is_empty() {
                        // As the report will have them: the lines are its timeline.
                        let entries = crate::stats::timeline::entries(&plan, &seconds);
                        if let Some(l) = &mut lines {
                            l.write(&entries);
                        }
                        if let Some(f) = &running {
                            let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
                            for (s, e) in seconds.iter().zip(&entries) {
                                f.add(s, e.target_connections, plan.is_open());
                            }
                        }
                    }
                    if over {
                        return lines;
                    }
                }
            })
            .map_err(|e| format!("cannot start the thread that watches the run: {e}"))?;
        Ok(Watching {
            done,
            thread: Some(thread),
            figures,
            endpoint,
        })
    }

    /// Where the metrics are served, if they are.
    pub fn metrics_addr(&self) -> Option<std::net::SocketAddr> {
        self.endpoint.as_ref().map(Endpoint::addr)
    }

    /// The run is over (its threads are done): the last seconds go out. Says why the lines
    /// stopped, if a write failed.
    pub fn run_over(&mut self) -> Option<String> {
        let _ = self.done.send(());
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Some(lines))) => lines.stopped.and_then(Result::err),
            Some(Ok(None)) | None => None,
            Some(Err(_)) => Some("--live-json: its thread failed".into()),
        }
    }

    /// The whole run's figures, `stats`, replace the seconds' sums; the endpoint then serves
    /// until it has been scraped once more, or for `linger`.
    pub fn finish(self, stats: Option<&Stats>, linger: Duration) {
        let Some(endpoint) = self.endpoint else {
            return;
        };
        {
            let mut f = self.figures.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(stats) = stats {
                f.finish(stats);
            }
            f.over = true;
        }
        endpoint.linger(linger);
    }
}
