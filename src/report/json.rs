//! The JSON form of a `Summary` (the structure as it is; schema in docs/output-schema.json), and
//! `--save`: written atomically, so a reader never sees half a file.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::stats::Summary;

pub fn to_json(summary: &Summary) -> String {
    // Serializing plain structs of numbers and strings cannot fail.
    serde_json::to_string_pretty(summary).unwrap_or_default()
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.spate-{}.tmp", std::process::id()))
}

/// Creates the temporary file: new (never through a link left at its name) and, on unix, readable
/// by its owner only, since a report names the target and its figures.
fn create_private(tmp: &Path) -> io::Result<fs::File> {
    let _ = fs::remove_file(tmp);
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(tmp)
}

/// Checks before the run that `path` can be written: its directory exists and accepts a file.
pub fn check_save_path(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    let tmp = temp_path(path);
    create_private(&tmp)?;
    fs::remove_file(&tmp)
}

/// Writes the JSON to a temporary file beside `path`, then renames it into place (owner-only
/// permissions on unix, whatever the file it replaces had).
pub fn save_json(path: &Path, summary: &Summary) -> io::Result<()> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = create_private(&tmp)?;
        f.write_all(to_json(summary).as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}
