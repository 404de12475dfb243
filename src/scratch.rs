//! Tests only: a file in the temporary directory that is removed when the test is done with
//! it, whether it passed or not. Must not be used outside tests.

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// `spate-<pid>-<name>` in the temporary directory, holding `text` until dropped.
pub struct ScratchFile(PathBuf);

impl ScratchFile {
    pub fn new(name: &str, text: &str) -> ScratchFile {
        let path = std::env::temp_dir().join(format!("spate-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        ScratchFile(path)
    }
}

impl Deref for ScratchFile {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
