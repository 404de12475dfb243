//! `--script` against Debian's wrk, which no one here wrote, running the example scripts its
//! package installs: both send their requests to one recording server, which must see the same
//! request from each (method, path, body and the headers the script set). wrk is required in CI
//! (SPATE_REQUIRE_TOOLS=1).

use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::support::{Peer, Scripted, have, spate_json, usage_error};

const SCRIPTS: &str = "/usr/share/doc/wrk/examples/scripts";

/// What a recording server was sent: each request's head and body.
type Seen = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A server that answers every request with 200 and keeps what it was sent.
fn recorder() -> (Scripted, Seen) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = seen.clone();
    let server = Scripted::start(move |peer: &mut Peer| {
        while let Some(r) = peer.read_request() {
            keep.lock().unwrap().push((r.head, r.body));
            if !peer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok") {
                return;
            }
        }
    });
    (server, seen)
}

/// The request line and the headers named `names` (lower case) of a recorded head.
fn shape_of(head: &str, names: &[&str]) -> (String, Vec<String>) {
    let mut lines = head.lines();
    let line = lines.next().unwrap_or_default().to_owned();
    let mut picked: Vec<String> = lines
        .filter_map(|l| l.split_once(':'))
        .filter(|(n, _)| names.contains(&n.trim().to_ascii_lowercase().as_str()))
        .map(|(n, v)| format!("{}: {}", n.trim().to_ascii_lowercase(), v.trim()))
        .collect();
    picked.sort();
    (line, picked)
}

#[test]
fn post_lua_sends_what_wrk_sends() {
    let script = Path::new(SCRIPTS).join("post.lua");
    if !have("wrk") {
        return;
    }
    let (server, seen) = recorder();
    let url = format!("http://{}/form?x=1", server.addr);
    let out = std::process::Command::new("wrk")
        .args(["-t1", "-c1", "-d1s", "-s", script.to_str().unwrap(), &url])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let from_wrk = seen
        .lock()
        .unwrap()
        .drain(..)
        .next()
        .expect("wrk sent a request");
    let doc = spate_json(&["-c", "1", "-n", "5", "-s", script.to_str().unwrap(), &url]);
    assert_eq!(doc["requests"]["successful"], 5, "{}", doc["requests"]);
    let got = seen.lock().unwrap().clone();
    assert_eq!(got.len(), 5);
    let names = ["content-type", "content-length", "host"];
    for (head, body) in &got {
        assert_eq!(
            shape_of(head, &names),
            shape_of(&from_wrk.0, &names),
            "{head}"
        );
        assert_eq!(body, &from_wrk.1);
    }
    assert!(
        from_wrk.0.starts_with("POST /form?x=1 HTTP/1.1"),
        "{}",
        from_wrk.0
    );
    assert_eq!(from_wrk.1, b"foo=bar&baz=quux");
}

#[test]
fn init_args_come_after_the_double_dash() {
    let (server, seen) = recorder();
    let dir = std::env::temp_dir().join(format!("spate-it-script-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("init.lua");
    std::fs::write(
        &script,
        "function init(args)\n  wrk.path = '/' .. args[1]\n  wrk.headers['X-Second'] = args[2]\nend\n",
    )
    .unwrap();
    let url = format!("http://{}/", server.addr);
    let doc = spate_json(&[
        "-c",
        "1",
        "-n",
        "2",
        "-s",
        script.to_str().unwrap(),
        &url,
        "--",
        "first",
        "two words",
    ]);
    assert_eq!(doc["requests"]["successful"], 2);
    for (head, _) in seen.lock().unwrap().iter() {
        assert!(head.starts_with("GET /first HTTP/1.1"), "{head}");
        assert!(head.contains("X-Second: two words"), "{head}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scripts_spate_cannot_run_yet_and_script_errors_are_one_line_exit_2() {
    let dir = std::env::temp_dir().join(format!("spate-it-script-err-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let broken = dir.join("broken.lua");
    std::fs::write(&broken, "wrk.method = 'GET'\nwrk.path = \n").unwrap();
    let dynamic = dir.join("counter.lua");
    std::fs::write(
        &dynamic,
        "counter = 0\nrequest = function() return wrk.format() end\n",
    )
    .unwrap();
    let url = "http://127.0.0.1:9/";
    for (args, needle) in [
        (vec!["-s", broken.to_str().unwrap(), url], "broken.lua:3:"),
        (
            vec!["-s", dynamic.to_str().unwrap(), url],
            "not supported yet: request()",
        ),
        (vec!["-s", "/nonexistent/x.lua", url], "/nonexistent/x.lua"),
        (vec![url, "--", "a"], "there is no --script"),
    ] {
        let mut all = vec!["-n", "1"];
        all.extend(args);
        let err = usage_error(&all);
        assert!(err.contains(needle), "{all:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
