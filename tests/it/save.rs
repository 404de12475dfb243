//! Where the result goes, as a user points it: `--save` through symlinks, to devices, to
//! `/dev/stdout` (a pipe or a file), with permissions from the umask; a failed stdout that does
//! not cost the saved file; and a JSON result on stdout even when the target is unreachable.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::{FileTypeExt, PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use spate::serve::ServeConfig;

use crate::support::{builtin, spate as run_spate};

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("spate-it-save-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn spate(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_spate"));
    c.args(["-n", "20", "-c", "2", "--threads", "1", "--no-progress"])
        .args(args);
    c
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// A character device of the memory driver (`null` is minor 3, `full` 7): a node of the test's
/// own where it may make one (root), so that a regression replaces that node and not the
/// machine's; else the machine's, which only root could damage.
fn device(dir: &Path, name: &str, minor: u32) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let node = dir.join(name);
    let c = std::ffi::CString::new(node.as_os_str().as_bytes()).unwrap();
    // SAFETY: mknod(2) with a NUL-terminated path we own.
    match unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, minor)) } {
        0 => {
            // mknod's mode passes through the umask.
            fs::set_permissions(&node, fs::Permissions::from_mode(0o666)).unwrap();
            node
        }
        _ => PathBuf::from("/dev").join(name),
    }
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn save_writes_through_symlinks_and_keeps_them() {
    let server = builtin(ServeConfig::default());
    let dir = scratch("link");
    fs::create_dir(dir.join("runs")).unwrap();
    // Dangling until the run writes its target.
    symlink("runs/1.json", dir.join("latest.json")).unwrap();
    let latest = dir.join("latest.json");
    let out = spate(&["--save", latest.to_str().unwrap(), &server.url()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", err(&out));
    assert!(
        fs::symlink_metadata(&latest)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced by a file"
    );
    assert_eq!(json(&dir.join("runs/1.json"))["requests"]["completed"], 20);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn saved_files_get_the_umask_like_any_new_file() {
    let server = builtin(ServeConfig::default());
    let dir = scratch("umask");
    let file = dir.join("r.json");
    let mut cmd = spate(&["--save", file.to_str().unwrap(), &server.url()]);
    // SAFETY: umask(2) is async-signal-safe; it runs in the child between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", err(&out));
    assert_eq!(
        fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o644
    );
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn save_to_dev_null_leaves_the_device_alone() {
    let server = builtin(ServeConfig::default());
    let dir = scratch("null");
    let null = device(&dir, "null", 3);
    let out = spate(&["--save", null.to_str().unwrap(), &server.url()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", err(&out));
    let m = fs::metadata(&null).unwrap();
    assert!(m.file_type().is_char_device(), "{null:?} is not a device");
    assert_eq!(m.permissions().mode() & 0o777, 0o666);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn save_to_a_full_device_fails_after_the_report_and_names_the_flag() {
    let server = builtin(ServeConfig::default());
    let dir = scratch("full");
    let full = device(&dir, "full", 7);
    let out = spate(&["--save", full.to_str().unwrap(), &server.url()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", err(&out));
    let want = format!("--save {}: No space left on device", full.display());
    assert!(err(&out).contains(&want), "{}", err(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Summary"));
    assert!(fs::metadata(&full).unwrap().file_type().is_char_device());
    fs::remove_dir_all(dir).unwrap();
}

// The paths below are /dev/stdout's own targets: a regression that replaced the file at the path
// must fail in /proc (no new files there), not replace the machine's /dev/stdout.

#[test]
fn save_to_dev_stdout_follows_the_report_into_a_pipe() {
    let server = builtin(ServeConfig::default());
    let out = spate(&["--save", "/dev/fd/1", &server.url()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", err(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    // The saved JSON comes first, then the text report.
    let end = text.find("\n}\n").expect("a JSON document") + 3;
    let doc: Value = serde_json::from_str(&text[..end]).unwrap();
    assert_eq!(doc["requests"]["completed"], 20);
    assert!(text[end..].contains("Summary"), "{text}");
}

#[test]
fn save_to_dev_stdout_redirected_to_a_file_keeps_both_in_it() {
    let server = builtin(ServeConfig::default());
    let dir = scratch("stdout-file");
    let file = dir.join("out.txt");
    let out = spate(&["--save", "/proc/self/fd/1", &server.url()])
        .stdout(fs::File::create(&file).unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", err(&out));
    let text = fs::read_to_string(&file).unwrap();
    assert!(text.starts_with('{'), "{text}");
    assert!(text.contains("\"completed\": 20"), "{text}");
    assert!(
        text.contains("Summary"),
        "the report was written over: {text}"
    );
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_full_stdout_does_not_cost_the_saved_file() {
    let server = builtin(ServeConfig::default());
    let dir = scratch("full-stdout");
    let file = dir.join("r.json");
    let out = spate(&["--save", file.to_str().unwrap(), &server.url()])
        .stdout(
            fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err(&out).contains("cannot write the report to stdout: No space left on device"),
        "{}",
        err(&out)
    );
    assert_eq!(json(&file)["requests"]["completed"], 20);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn save_to_a_pipe_like_process_substitution_reaches_its_reader() {
    // What `--save >(jq .)` hands over: /dev/fd/N, the write end of a pipe.
    let server = builtin(ServeConfig::default());
    let mut fds = [0; 2];
    // SAFETY: pipe(2) into an array we own.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let (read, write) = (fds[0], fds[1]);
    let mut cmd = spate(&["--save", "/dev/fd/5", &server.url()]);
    // SAFETY: dup2(2) and close(2) are async-signal-safe; they run in the child before exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::close(read);
            if libc::dup2(write, 5) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // SAFETY: the parent's copy of the write end, and a read end it owns from here on.
    unsafe { libc::close(write) };
    let reader = unsafe { <fs::File as std::os::fd::FromRawFd>::from_raw_fd(read) };
    let got = std::thread::spawn(move || {
        let mut r = reader;
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut r, &mut v).unwrap();
        v
    });
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", err(&out));
    let doc: Value = serde_json::from_slice(&got.join().unwrap()).unwrap();
    assert_eq!(doc["requests"]["completed"], 20);
}

/// Rows of a CSV file as Python's csv module reads it (a reader no one here wrote), as JSON.
pub fn python_csv(path: &Path) -> Vec<serde_json::Map<String, Value>> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import csv, json, sys; print(json.dumps(list(csv.DictReader(open(sys.argv[1], newline='')))))",
        ])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    rows.into_iter()
        .map(|r| r.as_object().unwrap().clone())
        .collect()
}

#[test]
fn csv_on_stdout_and_by_the_saved_name_reads_back_in_pythons_csv() {
    if !crate::support::have("python3") {
        return;
    }
    let dir = scratch("csv");
    let server = builtin(ServeConfig::default());
    // A comma and a quote in the URL: the field must be quoted to survive.
    let url = format!("{}a?x=1,2&y=%22", server.url());
    let saved = dir.join("run.CSV");
    let out = spate(&["--format", "csv", "--save", saved.to_str().unwrap(), &url])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = dir.join("stdout.csv");
    fs::write(&printed, &out.stdout).unwrap();
    assert_eq!(fs::read(&printed).unwrap(), fs::read(&saved).unwrap());
    let rows = python_csv(&saved);
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    let columns: Vec<&str> = row.keys().map(String::as_str).collect();
    let mut want = spate::report::CSV_COLUMNS.to_vec();
    let mut got = columns.clone();
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, want);
    assert_eq!(row["url"], url.as_str());
    assert_eq!(row["completed"], "20");
    assert_eq!(row["attempted"], "20");
    assert_eq!(row["slo_pass"], "");
    assert_eq!(row["error_kind"], "");
    assert_eq!(
        (&row["retried"], &row["redirects_followed"]),
        (&Value::from("0"), &Value::from("0"))
    );
    let p99: f64 = row["latency_p99_ms"].as_str().unwrap().parse().unwrap();
    assert!(p99 > 0.0);
    // Any other name is JSON, as before.
    let json_path = dir.join("run.json");
    let out = spate(&["--save", json_path.to_str().unwrap(), &url])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(json(&json_path)["requests"]["completed"], 20);
    // A run that could not start still leaves a row that says why.
    let unreachable = format!("http://{}/", crate::support::free_addr());
    let out = spate(&["--format", "csv", &unreachable]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    fs::write(&printed, &out.stdout).unwrap();
    let rows = python_csv(&printed);
    assert_eq!(rows[0]["error_kind"], "unreachable");
    assert_eq!(rows[0]["completed"], "0");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn spate_report_shows_a_saved_run_as_the_run_did_and_refuses_what_it_cannot_read() {
    let server = builtin(ServeConfig::default());
    let dir = std::env::temp_dir().join(format!("spate-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let saved = dir.join("run.json");
    let saved_str = saved.to_str().unwrap();
    let run = run_spate(&[
        "--no-progress",
        "-n",
        "2000",
        "-c",
        "4",
        "--slo",
        "p99=1s",
        "--save",
        saved_str,
        &server.url(),
    ]);
    assert_eq!(run.status.code(), Some(0));
    let again = run_spate(&["report", saved_str]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        String::from_utf8_lossy(&run.stdout),
        "the same text report"
    );
    let json = run_spate(&["report", "--format", "json", saved_str]);
    let a: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert_eq!(a, b, "the same JSON");

    let text = std::fs::read_to_string(&saved).unwrap();
    let bad = [
        (
            "truncated.json",
            text[..text.len() / 2].to_string(),
            "not a spate result",
        ),
        (
            "other.json",
            "{\"hello\": 1}".to_string(),
            "no schema_version",
        ),
        (
            "newer.json",
            text.replacen("\"schema_version\": 2", "\"schema_version\": 99", 1),
            "its schema_version is 99; this spate reads 2",
        ),
        ("empty.json", String::new(), "not a spate result"),
        (
            "page.html",
            "<!DOCTYPE html><title>not spate's</title>".to_string(),
            "an HTML page without a spate result in it",
        ),
    ];
    for (name, content, want) in bad {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        let out = run_spate(&["report", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(want) && err.lines().count() == 1,
            "{name}: {err}"
        );
        assert!(out.stdout.is_empty(), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_output_may_name_a_file_the_run_reads() {
    let dir = scratch("inputs");
    let body = dir.join("body.json");
    let script = dir.join("s.lua");
    let base = dir.join("base.json");
    fs::write(&body, "{\"a\":1}").unwrap();
    fs::write(&script, "wrk.method = 'POST'\n").unwrap();
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/golden/every-section.json"),
        &base,
    )
    .unwrap();
    let (b, s, bl) = (
        body.to_str().unwrap(),
        script.to_str().unwrap(),
        base.to_str().unwrap(),
    );
    // Through another spelling of the same path, too.
    let dotted = format!("{}/./body.json", dir.display());
    for (args, says) in [
        (
            vec!["-m", "POST", "-D", b, "--live-json", &dotted],
            "--live-json",
        ),
        (vec!["-s", s, "--save", s], "--save"),
        (vec!["-D", b, "--html", b], "--html"),
        (vec!["--baseline", bl, "--save", bl], "--save"),
    ] {
        let mut all = args.clone();
        all.push("http://127.0.0.1:9/");
        let out = run_spate(&all);
        let e = err(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {e}");
        assert!(
            e.contains(&format!("{says} ")) && e.contains("writing there would destroy it"),
            "{args:?}: {e}"
        );
    }
    assert_eq!(fs::read_to_string(&body).unwrap(), "{\"a\":1}");
    assert_eq!(
        fs::read_to_string(&script).unwrap(),
        "wrk.method = 'POST'\n"
    );
    let _ = fs::remove_dir_all(&dir);
}
