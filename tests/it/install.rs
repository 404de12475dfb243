//! install.sh against a fake release served from loopback: it installs with curl and with wget,
//! picks the archive for the OS and CPU it detects, refuses a checksum mismatch, names an
//! unsupported platform and a missing downloader in one line, and leaves nothing behind when it
//! refuses. The platform is faked with a `uname` on PATH; the tools it may use are chosen by
//! building its PATH from links.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

/// What every run of install.sh may use besides a downloader and `uname`.
const TOOLS: [&str; 13] = [
    "mktemp",
    "tar",
    "gzip",
    "sha256sum",
    "shasum",
    "cut",
    "mkdir",
    "cp",
    "chmod",
    "mv",
    "rm",
    "cat",
    "ldd",
];

/// An HTTP/1.0-style file server on 127.0.0.1:0 that logs the paths asked for.
struct Release {
    url: String,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Release {
    fn serve(files: HashMap<String, Vec<u8>>) -> Release {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/dl", listener.local_addr().unwrap());
        let asked = Arc::new(Mutex::new(Vec::new()));
        let log = asked.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let line = String::from_utf8_lossy(&head)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_owned();
                let path = line.split(' ').nth(1).unwrap_or("").to_owned();
                log.lock().unwrap().push(path.clone());
                let reply = match path.strip_prefix("/dl/").and_then(|name| files.get(name)) {
                    Some(body) => {
                        let mut r = format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        )
                        .into_bytes();
                        r.extend_from_slice(body);
                        r
                    }
                    None => {
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .to_vec()
                    }
                };
                let _ = conn.write_all(&reply);
            }
        });
        Release { url, asked }
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

/// A scratch directory for one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("spate-install-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(tool))
            .find(|p| p.is_file())
    })
}

fn write_exec(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A PATH directory with links to `TOOLS` and `extra`, and a fake `uname` when `platform` is
/// given as (kernel name, machine).
fn tools_dir(root: &Path, extra: &[&str], platform: Option<(&str, &str)>) -> PathBuf {
    let dir = root.join("path");
    std::fs::create_dir_all(&dir).unwrap();
    let real_uname = if platform.is_none() {
        Some("uname")
    } else {
        None
    };
    for tool in TOOLS.iter().chain(extra).chain(real_uname.iter()) {
        if let Some(real) = which(tool) {
            std::os::unix::fs::symlink(real, dir.join(tool)).unwrap();
        }
    }
    if let Some((kernel, machine)) = platform {
        write_exec(
            &dir.join("uname"),
            &format!("#!/bin/sh\ncase \"$1\" in -s) echo {kernel} ;; -m) echo {machine} ;; esac\n"),
        );
    }
    dir
}

/// A release archive holding a stand-in `spate` (a script that prints a version) and a man page,
/// and its SHA-256 file; `digest` replaces the true checksum when given.
fn release_files(root: &Path, name: &str, digest: Option<&str>) -> HashMap<String, Vec<u8>> {
    let content = root.join("content");
    std::fs::create_dir_all(&content).unwrap();
    write_exec(
        &content.join("spate"),
        "#!/bin/sh\necho 'spate 9.9.9-test'\n",
    );
    std::fs::write(content.join("spate.1"), ".TH spate 1\n").unwrap();
    let archive = root.join(name);
    let tar = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(&content)
        .args(["spate", "spate.1"])
        .status()
        .unwrap();
    assert!(tar.success());
    let sum = which("sha256sum")
        .map(|p| Command::new(p).arg(&archive).output().unwrap())
        .or_else(|| {
            which("shasum").map(|p| {
                Command::new(p)
                    .args(["-a", "256"])
                    .arg(&archive)
                    .output()
                    .unwrap()
            })
        })
        .expect("sha256sum or shasum");
    let true_digest = String::from_utf8(sum.stdout).unwrap()[..64].to_owned();
    let line = format!("{}  {name}\n", digest.unwrap_or(&true_digest));
    HashMap::from([
        (name.to_owned(), std::fs::read(&archive).unwrap()),
        (format!("{name}.sha256"), line.into_bytes()),
    ])
}

/// Runs install.sh with only `path` on PATH and HOME inside `root`.
fn install(root: &Path, path: &Path, base: &str, args: &[&str]) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh");
    let mut cmd = Command::new(which("sh").expect("sh"));
    cmd.arg(script).args(args).env_clear();
    cmd.env("PATH", path)
        .env("HOME", root.join("home"))
        .env("SPATE_BASE_URL", base);
    cmd.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// install.sh stopped with `code` and one line on stderr containing `needle`, before asking the
/// release server for anything.
fn refused_before_download(out: &Output, release: &Release, code: i32, needle: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(err.contains(needle), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(release.asked().is_empty(), "{:?}", release.asked());
}

/// install.sh succeeded, put spate in the default prefix (~/.local) and fetched `name` first.
fn installed_by_default(out: &Output, root: &Path, release: &Release, name: &str) {
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(root.join("home/.local/bin/spate").is_file());
    assert_eq!(release.asked()[0], format!("/dl/{name}"));
}

/// The archive install.sh must choose on this machine.
fn native_archive() -> String {
    let os = match std::env::consts::OS {
        "linux" => "unknown-linux-gnu",
        "macos" => "apple-darwin",
        other => panic!("install.sh has no build for {other}"),
    };
    format!("spate-{}-{os}.tar.gz", std::env::consts::ARCH)
}

fn installs_with(downloader: &str) {
    if which(downloader).is_none() {
        eprintln!("skipped: {downloader} is not installed here");
        return;
    }
    let root = Scratch::new(downloader);
    let name = native_archive();
    let release = Release::serve(release_files(&root.0, &name, None));
    let path = tools_dir(&root.0, &[downloader], None);
    let prefix = root.0.join("prefix");
    let out = install(
        &root.0,
        &path,
        &release.url,
        &["--prefix", prefix.to_str().unwrap()],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    let bin = prefix.join("bin/spate");
    let ran = Command::new(&bin).output().unwrap();
    assert_eq!(text(&ran.stdout), "spate 9.9.9-test\n");
    assert!(prefix.join("share/man/man1/spate.1").is_file());
    assert!(
        stdout.contains(&format!("installed spate 9.9.9-test to {}", bin.display())),
        "{stdout}"
    );
    assert!(stdout.contains("is not on your PATH"), "{stdout}");
    assert_eq!(
        release.asked(),
        [format!("/dl/{name}"), format!("/dl/{name}.sha256")]
    );
}

#[test]
fn installs_with_curl() {
    installs_with("curl");
}

#[test]
fn installs_with_wget() {
    installs_with("wget");
}

#[test]
fn at_least_one_downloader_is_tested() {
    assert!(
        which("curl").is_some() || which("wget").is_some(),
        "the install.sh tests need curl or wget on PATH"
    );
}

fn any_downloader() -> &'static str {
    if which("curl").is_some() {
        "curl"
    } else {
        "wget"
    }
}

#[test]
fn the_default_prefix_is_dot_local_and_macos_arm_gets_its_archive() {
    let root = Scratch::new("darwin");
    let name = "spate-aarch64-apple-darwin.tar.gz";
    let release = Release::serve(release_files(&root.0, name, None));
    let path = tools_dir(&root.0, &[any_downloader()], Some(("Darwin", "arm64")));
    let out = install(&root.0, &path, &release.url, &[]);
    installed_by_default(&out, &root.0, &release, name);
}

#[test]
fn a_checksum_mismatch_installs_nothing() {
    let root = Scratch::new("mismatch");
    let name = native_archive();
    let wrong = "0".repeat(64);
    let release = Release::serve(release_files(&root.0, &name, Some(&wrong)));
    let path = tools_dir(&root.0, &[any_downloader()], None);
    let prefix = root.0.join("prefix");
    let out = install(
        &root.0,
        &path,
        &release.url,
        &["--prefix", prefix.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("checksum mismatch") && err.contains(&wrong),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!prefix.join("bin").exists());
}

#[test]
fn a_missing_release_file_is_one_line() {
    let root = Scratch::new("missing");
    let release = Release::serve(HashMap::new());
    let path = tools_dir(&root.0, &[any_downloader()], None);
    let out = install(&root.0, &path, &release.url, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let last = err.lines().last().unwrap_or("");
    assert!(last.starts_with("spate install: cannot download"), "{err}");
    assert!(!root.0.join("home/.local/bin/spate").exists());
}

#[test]
fn unsupported_platforms_are_named() {
    for (kernel, machine, expect) in [
        ("SunOS", "i86pc", "unsupported operating system 'SunOS'"),
        ("Linux", "riscv64", "unsupported CPU 'riscv64' on Linux"),
        (
            "MINGW64_NT-10.0",
            "x86_64",
            "spate-x86_64-pc-windows-msvc.zip",
        ),
    ] {
        let root = Scratch::new(kernel);
        let release = Release::serve(HashMap::new());
        let path = tools_dir(&root.0, &[any_downloader()], Some((kernel, machine)));
        let out = install(&root.0, &path, &release.url, &[]);
        refused_before_download(&out, &release, 2, expect);
    }
}

#[test]
fn a_musl_system_gets_the_static_build() {
    let root = Scratch::new("musl");
    let name = "spate-x86_64-unknown-linux-musl.tar.gz";
    let release = Release::serve(release_files(&root.0, name, None));
    let path = tools_dir(&root.0, &[any_downloader()], Some(("Linux", "x86_64")));
    // Alpine's ldd prints its version on stderr and fails.
    std::fs::remove_file(path.join("ldd")).ok();
    write_exec(
        &path.join("ldd"),
        "#!/bin/sh\necho 'musl libc (x86_64)' >&2\necho 'Version 1.2.4' >&2\nexit 1\n",
    );
    let out = install(&root.0, &path, &release.url, &[]);
    installed_by_default(&out, &root.0, &release, name);
}

#[test]
fn without_curl_or_wget_it_says_so() {
    let root = Scratch::new("nodl");
    let release = Release::serve(HashMap::new());
    let path = tools_dir(&root.0, &[], None);
    let out = install(&root.0, &path, &release.url, &[]);
    let line =
        "spate install: neither curl nor wget is installed; install one of them and run this again";
    refused_before_download(&out, &release, 1, line);
}

#[test]
fn bad_arguments_are_usage_errors() {
    let root = Scratch::new("args");
    let path = tools_dir(&root.0, &[], None);
    for args in [&["--prefix"][..], &["--frobnicate"], &["--version"]] {
        let out = install(&root.0, &path, "http://127.0.0.1:9/", args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&out.stderr).lines().count(), 1, "{args:?}");
    }
}
