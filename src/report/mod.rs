//! COLD: renders a `Summary` for people (text) and for programs (JSON), and writes it where the
//! user asked. No sockets, no clock.

mod colour;
mod format;
mod json;
mod text;
mod timing;

use std::io::{self, Write};
use std::path::PathBuf;

use crate::stats::Summary;

pub use colour::Palette;
pub use format::{bytes, count, millis, per_second};
pub use json::{check_save_path, save_json, to_json};
pub use text::render;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

/// Where the result goes: `format` on stdout, and the JSON to `save` if set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub format: Format,
    pub save: Option<PathBuf>,
    /// `--no-color`: never colour, even on a terminal.
    pub no_color: bool,
}

/// Writes the report to stdout and saves the JSON if asked. A closed stdout (`| head`) is not
/// an error; a failed save is.
pub fn emit(summary: &Summary, output: &Output) -> io::Result<()> {
    let body = match output.format {
        Format::Text => {
            use std::io::IsTerminal;
            render(
                summary,
                Palette::detect(io::stdout().is_terminal(), output.no_color),
            )
        }
        Format::Json => to_json(summary) + "\n",
    };
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(body.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => return Err(e),
        _ => {}
    }
    if let Some(path) = &output.save {
        save_json(path, summary)
            .map_err(|e| io::Error::new(e.kind(), format!("--save {}: {e}", path.display())))?;
    }
    Ok(())
}
