//! Writing a file the user named (`--save`) without damaging what is there: a regular file (or
//! a new one) is replaced atomically through a temporary file beside it, so a reader never sees
//! half a file; a symlink is followed and its target written, the link kept; anything that is not
//! a regular file (a device, a FIFO, `/dev/stdout`, `>(jq .)`) is written directly, never
//! replaced. Must not touch a path other than the one named, its link targets and one temporary
//! file of its own.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Symlinks followed before giving up, as the kernel's own limit (ELOOP).
const MAX_LINKS: usize = 40;

/// Where the bytes for a path go.
#[derive(Debug, PartialEq, Eq)]
enum Dest {
    /// A regular file at this path (after symlinks), or none yet: written through a temporary
    /// file and renamed into place.
    Replace(PathBuf),
    /// Not a regular file: opened and written as it is.
    Direct(PathBuf),
    /// The same file as this process's stdout: written through the stdout handle, after what
    /// was written there before (opening it anew would write over the report).
    Stdout,
}

/// Checks before the run that `path` can be written, so that a bad path never costs a run. Opens
/// nothing that is not a regular file: opening a FIFO and closing it would end its reader.
pub fn check(path: &Path) -> io::Result<()> {
    match dest(path)? {
        Dest::Stdout => Ok(()),
        Dest::Direct(p) => writable(&p),
        Dest::Replace(p) => {
            if p.exists() {
                writable(&p)?;
            }
            let (tmp, f) = create_temp(&p)?;
            drop(f);
            fs::remove_file(tmp)
        }
    }
}

/// Writes `bytes` to `path`, as the module comment says.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    match dest(path)? {
        Dest::Stdout => {
            let mut out = io::stdout().lock();
            out.write_all(bytes).and_then(|()| out.flush())
        }
        Dest::Direct(p) => open_direct(&p)?.write_all(bytes),
        Dest::Replace(p) => replace(&p, bytes),
    }
}

fn dest(path: &Path) -> io::Result<Dest> {
    // The kernel's view first: it follows links that have no path behind them, such as
    // /dev/stdout -> /proc/self/fd/1 -> pipe:[1234].
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        )),
        Ok(m) if is_stdout(&m) => Ok(Dest::Stdout),
        Ok(m) if !m.is_file() => Ok(Dest::Direct(path.to_path_buf())),
        Ok(_) => Ok(Dest::Replace(follow(path)?)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Dest::Replace(follow(path)?)),
        Err(e) => Err(e),
    }
}

/// `path` with every symlink along its last component followed, also to a target that does not
/// exist yet (`latest.json -> runs/7.json` before run 7).
fn follow(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            Ok(_) => return Ok(p),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(p),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Opens a file that is not a regular one for writing. A FIFO nobody reads would block the
/// open forever: without a reader it fails at once (ENXIO) instead, and once open it blocks as
/// usual, so that a slow reader still gets everything.
#[cfg(unix)]
fn open_direct(path: &Path) -> io::Result<File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let f = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => {
                io::Error::new(e.kind(), "nobody reads from it (no reader on the FIFO)")
            }
            _ => e,
        })?;
    // SAFETY: fcntl(2) on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(f)
}

#[cfg(not(unix))]
fn open_direct(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).open(path)
}

#[cfg(unix)]
fn is_stdout(m: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: fstat(2) on descriptor 1 into a zeroed struct we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(1, &mut st) } != 0 {
        return false;
    }
    st.st_dev as u64 == m.dev() && st.st_ino as u64 == m.ino()
}

#[cfg(not(unix))]
fn is_stdout(_: &Metadata) -> bool {
    false
}

/// Whether this process may write `path` (access(2): no open, so a FIFO's reader sees nothing).
#[cfg(unix)]
fn writable(path: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path contains NUL"))?;
    // SAFETY: access(2) with a NUL-terminated path we own.
    match unsafe { libc::access(c.as_ptr(), libc::W_OK) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

#[cfg(not(unix))]
fn writable(path: &Path) -> io::Result<()> {
    match fs::metadata(path)?.permissions().readonly() {
        true => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "read-only file",
        )),
        false => Ok(()),
    }
}

/// A new temporary file in the directory of `target`. Its name is short, so that a target
/// whose own name is at the file system's limit still has room beside it; it is created new
/// (never through a link left at its name), with the permissions a new file gets (the umask's).
fn create_temp(target: &Path) -> io::Result<(PathBuf, File)> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut last = None;
    for _ in 0..8 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".spate-{}-{n}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
}

fn replace(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let old = fs::metadata(target).ok();
    let (tmp, mut f) = create_temp(target)?;
    let result = (|| {
        f.write_all(bytes)?;
        // A file that is replaced keeps its mode (and owner, where we may set it), as it would
        // if it were overwritten in place.
        if let Some(old) = &old {
            keep_owner(&f, old);
            f.set_permissions(old.permissions())?;
        }
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, target)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(unix)]
fn keep_owner(f: &File, old: &Metadata) {
    use std::os::unix::fs::MetadataExt;
    // Only root may give a file away; for anyone else the file is theirs already or this fails,
    // and either way the contents are right.
    let _ = std::os::unix::fs::fchown(f, Some(old.uid()), Some(old.gid()));
}

#[cfg(not(unix))]
fn keep_owner(_: &File, _: &Metadata) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("spate-save-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_new_file_and_a_replaced_one_leave_nothing_else_behind() {
        let dir = scratch("plain");
        let p = dir.join("r.json");
        write(&p, b"one").unwrap();
        write(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(names(&dir), ["r.json"]);
        fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_followed_and_kept_even_when_dangling() {
        use std::os::unix::fs::symlink;
        let dir = scratch("link");
        fs::create_dir(dir.join("runs")).unwrap();
        symlink("runs/7.json", dir.join("latest.json")).unwrap();
        symlink("latest.json", dir.join("chain.json")).unwrap();
        write(&dir.join("chain.json"), b"seven").unwrap();
        assert!(
            fs::symlink_metadata(dir.join("latest.json"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            fs::symlink_metadata(dir.join("chain.json"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(dir.join("runs/7.json")).unwrap(), b"seven");
        assert_eq!(names(&dir.join("runs")), ["7.json"]);
        fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_loop_of_links_is_an_error_not_a_hang() {
        use std::os::unix::fs::symlink;
        let dir = scratch("loop");
        symlink("b", dir.join("a")).unwrap();
        symlink("a", dir.join("b")).unwrap();
        assert!(write(&dir.join("a"), b"x").is_err());
        assert!(check(&dir.join("a")).is_err());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_longest_valid_name_has_room_for_the_temporary_file() {
        let dir = scratch("long");
        let p = dir.join(format!("{}.json", "r".repeat(245)));
        check(&p).unwrap();
        write(&p, b"ok").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"ok");
        fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn new_files_get_the_umask_and_replaced_ones_keep_their_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("mode");
        // The umask is the process's: read it without changing it for the other tests.
        let umask = {
            // SAFETY: umask(2) sets and returns; the second call restores the first value.
            let m = unsafe { libc::umask(0o022) };
            unsafe { libc::umask(m) };
            m as u32
        };
        let fresh = dir.join("new.json");
        write(&fresh, b"x").unwrap();
        let mode = fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask);
        let kept = dir.join("kept.json");
        fs::write(&kept, b"old").unwrap();
        fs::set_permissions(&kept, fs::Permissions::from_mode(0o640)).unwrap();
        write(&kept, b"new").unwrap();
        assert_eq!(
            fs::metadata(&kept).unwrap().permissions().mode() & 0o777,
            0o640
        );
        fs::remove_dir_all(dir).unwrap();
    }

    /// Only the classification: writing to devices is tested end to end on nodes of the tests'
    /// own (tests/it/save.rs), so that a regression cannot replace the machine's /dev/null.
    #[cfg(unix)]
    #[test]
    fn devices_are_written_directly() {
        for dev in ["/dev/null", "/dev/full", "/dev/zero"] {
            assert_eq!(dest(Path::new(dev)).unwrap(), Dest::Direct(dev.into()));
            check(Path::new(dev)).unwrap();
        }
        // The harness's stdout, whatever it is (a pipe, a file, a terminal).
        assert_eq!(dest(Path::new("/dev/stdout")).unwrap(), Dest::Stdout);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_to_its_reader_and_one_without_a_reader_fails_at_once() {
        use std::os::unix::ffi::OsStrExt;
        let dir = scratch("fifo");
        let fifo = dir.join("pipe");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo(3) with a NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        check(&fifo).unwrap();
        let err = write(&fifo, b"nobody").unwrap_err();
        assert!(err.to_string().contains("no reader"), "{err}");
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(fifo).unwrap())
        };
        // The reader opens when its thread runs; until then the write finds nobody.
        let t = std::time::Instant::now();
        while let Err(e) = write(&fifo, b"{\"ok\":1}") {
            assert!(t.elapsed().as_secs() < 10, "{e}");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(reader.join().unwrap(), b"{\"ok\":1}");
        assert!(
            !fs::metadata(&fifo).unwrap().is_file(),
            "the FIFO is still a FIFO"
        );
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = scratch("dir");
        assert_eq!(check(&dir).unwrap_err().kind(), io::ErrorKind::IsADirectory);
        fs::remove_dir_all(dir).unwrap();
    }
}
