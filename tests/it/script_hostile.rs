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
