//! The files that flags name (`-D`, `-s`, `--cacert`, `--cert`, `--key`, `--urls-from-file`,
//! `mcp --args-file`, `spate serve --tls-*`, saved results): each read whole, once, before
//! anything runs, and never more than a limit, so that `/dev/zero` or a wrong path to a huge
//! file is one clear line instead of all the memory there is. Knows nothing of what they hold.

use std::io::Read;
use std::path::Path;

/// A request body is built into the request bytes once and kept for the whole run (a few
/// copies: HTTP/1.1 with and without keep-alive, HTTP/2); larger bodies belong to an upload
/// test, which spate does not stream.
pub const BODY_LIMIT: u64 = 64 << 20;

/// A Lua script: wrk's are a few KiB; one that carries its data as tables may be larger.
pub const SCRIPT_LIMIT: u64 = 16 << 20;

/// A PEM file of certificates or a key: a whole system CA bundle is a few hundred KiB.
pub const PEM_LIMIT: u64 = 4 << 20;

/// `limit` in words, for the message.
fn size(limit: u64) -> String {
    format!("{} MiB", limit >> 20)
}

/// Reads the file `flag` names, whole, if it holds at most `limit` bytes.
pub fn read(flag: &str, path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let what = || format!("cannot read {flag} {}", path.display());
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", what()))?;
    let mut bytes = Vec::new();
    // One byte more than allowed tells a file at the limit from a larger one; reading stops
    // there, however much more there is (a device, a FIFO, a growing file).
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", what()))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "{flag} {}: larger than {}, the most spate reads for {flag}",
            path.display(),
            size(limit)
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_up_to_the_limit_and_refuses_more() {
        let path = std::env::temp_dir().join(format!("spate-files-{}", std::process::id()));
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read("--body-file", &path, 5).unwrap(), b"12345");
        let e = read("--body-file", &path, 4).unwrap_err();
        assert!(e.contains("larger than 0 MiB"), "{e}");
        std::fs::remove_file(&path).unwrap();
        let e = read("--cacert", &path, 4).unwrap_err();
        assert!(e.starts_with("cannot read --cacert "), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_file_stops_at_the_limit() {
        let e = read("--key", Path::new("/dev/zero"), PEM_LIMIT).unwrap_err();
        assert_eq!(
            e,
            "--key /dev/zero: larger than 4 MiB, the most spate reads for --key"
        );
    }
}
