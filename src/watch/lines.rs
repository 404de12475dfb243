//! --live-json's lines: each closed second of the run as the report's timeline entry, one JSON
//! object a line, written and flushed as it comes. A reader that went away (`| head`) ends
//! the lines quietly; any other failure is said once, and the run goes on.

use std::io::Write;

use crate::stats::timeline::Entry;

/// Where the lines go, and whether they still do.
pub struct Lines {
    out: Box<dyn Write + Send>,
    /// What the user named (`--live-json FILE`), for the line that says a write failed.
    name: String,
    /// Why the lines stopped, if they did.
    pub stopped: Option<Result<(), String>>,
}

impl Lines {
    pub fn new(out: Box<dyn Write + Send>, name: String) -> Lines {
        Lines {
            out,
            name,
            stopped: None,
        }
    }

    /// Writes `entries`, one line each, and flushes.
    pub fn write(&mut self, entries: &[Entry]) {
        if self.stopped.is_some() || entries.is_empty() {
            return;
        }
        let text: String = entries
            .iter()
            .filter_map(|e| serde_json::to_string(e).ok())
            .map(|l| l + "\n")
            .collect();
        if let Err(e) = self
            .out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.flush())
        {
            self.stopped = Some(match e.kind() {
                std::io::ErrorKind::BrokenPipe => Ok(()),
                _ => Err(format!("{}: {e}", self.name)),
            });
        }
    }
}
