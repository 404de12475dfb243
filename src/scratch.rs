//! Tests only: a file in the temporary directory that is removed when the test is done with
//! it, whether it passed or not. Must not be used outside tests.

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// `spate-<pid>-<n>/<name>` in the temporary directory, holding `text` until dropped: a
/// directory of its own, so that tests running at once may use the same name.
pub struct ScratchFile(PathBuf);

impl ScratchFile {
    pub fn new(name: &str, text: &str) -> ScratchFile {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("spate-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
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
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}
