//! Scripts that try to do what no script may: put lines of their own into the request head,
//! exhaust memory or time, or end spate without a report. Each must end in one clear line or
//! in a report, never a panic, a hang or a request the run did not mean to send.

use crate::script::{Own, recorder};
use crate::support::spate;

#[test]
fn a_path_with_line_breaks_is_refused_wherever_the_script_sets_it() {
    let (server, seen) = recorder();
    let url = server.url();
    let injected = "/x HTTP/1.1\r\nX-Injected: 1\r\nX-Pad:";
    let body = Own::new("body.lua", &format!("wrk.path = {injected:?}\n"));
    let init = Own::new("init.lua", "function init(args) wrk.path = args[1] end\n");
    let request = Own::new(
        "request.lua",
        "function request() return wrk.format(nil, arg_path) end\n\
         function init(args) arg_path = args[1] end\n",
    );
    let header = Own::new(
        "header.lua",
        "function request() return wrk.format(nil, '/', { X = arg }) end\n\
         function init(args) arg = args[1] end\n",
    );
    for (script, needle) in [
        (&body, "invalid path"),
        (&init, "invalid path"),
        (&request, "wrk.format: the path must not"),
        (
            &header,
            "wrk.format: a header name must be a token, and a value must not",
        ),
    ] {
        let out = spate(&[
            "--no-progress",
            "-n",
            "3",
            "-c",
            "1",
            "-s",
            script.path(),
            &url,
            "--",
            injected,
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", script.path());
        assert!(err.contains(needle), "{}: {err}", script.path());
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let seen = seen.lock().unwrap();
    assert!(
        seen.iter().all(|(head, _)| !head.contains("X-Injected")),
        "{seen:?}"
    );
}

#[test]
fn self_referential_globals_end_the_run_at_once_with_its_report() {
    let (server, _) = recorder();
    let url = server.url();
    let script = Own::new(
        "graph.lua",
        "G = _G\nH = _G\nt = {} t.a = t t.b = t t.c = { t, t }\n\
         function setup(thread) thread:set('graph', t) end\n\
         function init() u = { t, t, graph, G } end\n\
         function request() return wrk.format() end\n\
         function done(s, l, r)\n\
           print('done ' .. tostring(G ~= nil) .. ' ' .. tostring(t.a.b.c[1] == t))\n\
         end\n",
    );
    let out = spate(&[
        "--no-progress",
        "-n",
        "20",
        "-c",
        "2",
        "--threads",
        "2",
        "-s",
        script.path(),
        &url,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("Attempted       20 = 20 completed"), "{text}");
    assert!(text.contains("done true true"), "{text}");
}

/// `spate ARGS` that must end by itself within `bound` (a run that does not is killed and
/// fails the test), with `signal` sent to it after `after` if given.
fn bounded(
    args: &[&str],
    bound: std::time::Duration,
    signal: Option<(std::time::Duration, i32)>,
) -> std::process::Output {
    use std::process::{Command, Stdio};
    use std::time::Instant;
    let mut child = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut signalled = false;
    loop {
        if let Some((after, sig)) = signal
            && !signalled
            && start.elapsed() >= after
        {
            // SAFETY: a signal to the child this test started and has not reaped.
            unsafe { libc::kill(child.id() as i32, sig) };
            signalled = true;
        }
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > bound {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{args:?} did not end within {bound:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// What a run printed on stdout and on stderr.
fn texts(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The report's `Attempted A = C completed + F failed + I interrupted`, which must add up.
fn attempted(text: &str) -> (u64, u64, u64, u64) {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("Attempted"))
        .unwrap_or_else(|| panic!("no Attempted line in {text}"));
    let n: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| w.replace(',', "").parse().ok())
        .collect();
    assert_eq!(n.len(), 4, "{line}");
    assert_eq!(n[0], n[1] + n[2] + n[3], "{line}");
    (n[0], n[1], n[2], n[3])
}

#[test]
fn lua_stuck_at_the_end_of_a_timed_run_is_interrupted_and_the_run_reported() {
    let (server, _) = recorder();
    let url = server.url();
    // The fourth request() of each thread never returns, in a loop LuaJIT compiles.
    let script = Own::new(
        "stuck.lua",
        "n = 0\nfunction request()\n  n = n + 1\n  if n > 3 then local i = 0 while true do i = i + 1 end end\n  return wrk.format()\nend\n",
    );
    let out = bounded(
        &[
            "--no-progress",
            "-z",
            "1s",
            "-c",
            "2",
            "--threads",
            "2",
            "-s",
            script.path(),
            &url,
        ],
        std::time::Duration::from_secs(15),
        None,
    );
    let (text, err) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{err}");
    let (_, completed, _, interrupted) = attempted(&text);
    assert_eq!((completed, interrupted), (6, 2), "{text}");
    assert!(
        err.contains("Lua still ran when the run was over, and was interrupted"),
        "{err}"
    );
}

#[test]
fn lua_stuck_in_response_ends_at_the_first_ctrl_c_with_the_report() {
    let (server, _) = recorder();
    let url = server.url();
    let script = Own::new(
        "deaf.lua",
        "n = 0\nfunction response()\n  n = n + 1\n  if n > 2 then while true do pcall(function() while true do end end) end end\nend\n",
    );
    let out = bounded(
        &[
            "--no-progress",
            "-n",
            "1000000",
            "-c",
            "2",
            "--threads",
            "2",
            "-s",
            script.path(),
            &url,
        ],
        std::time::Duration::from_secs(15),
        Some((std::time::Duration::from_millis(800), libc::SIGINT)),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{text}");
    assert!(text.contains("stopped early by Ctrl-C"), "{text}");
    let (_, completed, _, _) = attempted(&text);
    assert_eq!(completed, 6, "{text}");
}

#[test]
fn os_exit_and_lua_errors_during_the_load_end_the_run_with_its_report_and_exit_2() {
    let (server, _) = recorder();
    let url = server.url();
    let exit = Own::new(
        "exit.lua",
        "n = 0\nfunction request()\n  n = n + 1\n  if n > 5 then os.exit(0) end\n  return wrk.format()\nend\n",
    );
    let memory = Own::new(
        "memory.lua",
        "t = {}\nfunction request()\n  for i = 1, 1e9 do t[#t + 1] = string.rep('x', 1e6) .. i end\nend\n",
    );
    for (script, needle) in [
        (
            &exit,
            "exit.lua:4: os.exit(0) called: a script cannot end spate",
        ),
        (
            &memory,
            "not enough memory: a script's Lua state may hold 512 MiB",
        ),
    ] {
        let out = bounded(
            &[
                "--no-progress",
                "-n",
                "100",
                "-c",
                "1",
                "-s",
                script.path(),
                &url,
            ],
            std::time::Duration::from_secs(30),
            None,
        );
        let (text, err) = texts(&out);
        assert_eq!(out.status.code(), Some(2), "{text}{err}");
        assert!(
            text.contains("stopped early by the script's error"),
            "{text}"
        );
        attempted(&text);
        assert!(err.lines().last().unwrap().contains(needle), "{err}");
    }
    // The JSON says so too.
    let out = spate(&[
        "--no-progress",
        "--format",
        "json",
        "-n",
        "100",
        "-c",
        "1",
        "-s",
        exit.path(),
        &url,
    ]);
    assert_eq!(out.status.code(), Some(2));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::schema::validate(&doc);
    assert!(
        doc["generator"]["script_error"]
            .as_str()
            .unwrap()
            .contains("os.exit(0) called")
    );
    // In the body, before the run: one line, nothing sent.
    let body = Own::new("exit_body.lua", "os.exit(1)\n");
    let err = crate::support::usage_error(&["-n", "1", "-s", body.path(), &url]);
    assert!(err.contains("exit_body.lua:1: os.exit(1) called"), "{err}");
}

#[test]
fn what_a_script_writes_never_reaches_a_machine_format_on_stdout() {
    let (server, _) = recorder();
    let url = server.url();
    let writes = Own::new(
        "writes.lua",
        "function request()\n  io.stdout:write('from request\\n')\n  io.output():write('again\\n')\n  print('printed')\n  return wrk.format()\nend\n",
    );
    for format in ["json", "csv"] {
        let out = spate(&[
            "--no-progress",
            "--format",
            format,
            "-n",
            "3",
            "-c",
            "1",
            "-s",
            writes.path(),
            &url,
        ]);
        crate::support::succeeded(&out);
        let (stdout, err) = texts(&out);
        assert!(
            !stdout.contains("from request") && !stdout.contains("printed"),
            "{stdout}"
        );
        assert_eq!(err.matches("from request").count(), 3, "{err}");
        assert_eq!(err.matches("again").count(), 3, "{err}");
    }
    // A script that only shapes the request prints its body's lines once, as the run starts.
    let shapes = Own::new("shapes.lua", "print('shaping')\nwrk.method = 'POST'\n");
    let out = spate(&[
        "--no-progress",
        "-n",
        "2",
        "-c",
        "1",
        "-s",
        shapes.path(),
        &url,
    ]);
    crate::support::succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("shaping").count(), 1, "{text}");
    assert!(text.find("shaping") < text.find("spate 0.1.0"), "{text}");
}
