//! wrk's Lua API over HTTP/2, counted by Debian's nginx: `request()` makes each stream's
//! request (wrk's own counter.lua among them), `response()` hears each response's status,
//! header fields (in any case) and body, and what HTTP/2 cannot carry (a pipelined batch) is
//! one line and exit 2. Also through nginx's graceful GOAWAYs, whose refused streams go again
//! as a new `request()`. nginx is required in CI.

use std::collections::BTreeMap;

use crate::nginx::Nginx;
use crate::support::{have, spate, succeeded};

const EXAMPLES: &str = "/usr/share/doc/wrk/examples/scripts";

/// nginx over h2c, logging `METHOD PATH X-Counter` per request, ending each connection after
/// `per_connection` requests, answering `ok PATH` with an `X-Token`.
fn nginx(tag: &str, per_connection: u32) -> Nginx {
    Nginx::start(
        tag,
        "http2",
        &format!(
            "log_format scripted '$request_method $uri $http_x_counter $content_length';\n  \
             keepalive_requests {per_connection};"
        ),
        "access_log {dir}/scripted.log scripted;\n    \
         location / { add_header X-Token t0k3n; return 200 \"ok $uri\\n\"; }",
    )
}

fn write(nginx: &Nginx, name: &str, lua: &str) -> String {
    let path = nginx.dir.join(name);
    std::fs::write(&path, lua).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn wrk_counter_lua_makes_every_streams_request_through_goaways() {
    if !have("nginx") || !have("wrk") {
        return;
    }
    let nginx = nginx("script-h2-counter", 9);
    let out = spate(&[
        "--no-progress",
        "--format",
        "json",
        "--http2",
        "-c",
        "2",
        "-p",
        "8",
        "-n",
        "1000",
        "-s",
        &format!("{EXAMPLES}/counter.lua"),
        &format!("http://{}/", nginx.addr),
    ]);
    succeeded(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["requests"]["completed"], 1000);
    assert!(v["connections"]["goaways"].as_u64().unwrap() > 50);
    let lines = nginx.log("scripted.log");
    assert_eq!(lines.len(), 1000, "nginx served each request once");
    for l in &lines {
        // The path and the header come from one call of request().
        let f: Vec<&str> = l.split(' ').collect();
        assert_eq!(f[0], "GET", "{l}");
        assert_eq!(f[1], format!("/{}", f[2]), "{l}");
    }
}

#[test]
fn request_and_response_see_each_stream_whole() {
    if !have("nginx") {
        return;
    }
    let nginx = nginx("script-h2-heard", 1000);
    let script = write(
        &nginx,
        "heard.lua",
        r#"
threads = {}
setup = function(thread) table.insert(threads, thread) end
n = 0
heard = 0
request = function()
  n = n + 1
  if n % 2 == 0 then
    return wrk.format("POST", "/p/" .. n, {["X-Counter"] = n}, "body-" .. n)
  end
  return wrk.format("GET", "/g/" .. n, {["X-Counter"] = n})
end
response = function(status, headers, body)
  if status ~= 200 then error("status " .. status) end
  if headers["X-Token"] ~= "t0k3n" then error("X-Token " .. tostring(headers["X-Token"])) end
  if headers["content-type"] ~= "text/plain" then error("content-type") end
  if not body:find("^ok /[gp]/%d+\n$") then error("body " .. body) end
  heard = heard + 1
end
done = function()
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("heard") end
  io.write("heard " .. total .. "\n")
end
"#,
    );
    let out = spate(&[
        "--no-progress",
        "--http2",
        "-c",
        "3",
        "-p",
        "4",
        "-n",
        "600",
        "-s",
        &script,
        &format!("http://{}/", nginx.addr),
    ]);
    succeeded(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("heard 600\n"), "{stdout}");
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    for l in nginx.log("scripted.log") {
        let f: Vec<&str> = l.split(' ').collect();
        let n: u64 = f[2].parse().unwrap();
        let (method, kind, length) = match n % 2 {
            0 => ("POST", "p", format!("{}", format!("body-{n}").len())),
            _ => ("GET", "g", "-".to_string()),
        };
        assert_eq!(f[0], method, "{l}");
        assert_eq!(f[1], format!("/{kind}/{n}"), "{l}");
        assert_eq!(f[3], length, "the body's length: {l}");
        *by.entry(method.to_string()).or_default() += 1;
    }
    assert_eq!(by.get("GET"), Some(&300));
    assert_eq!(by.get("POST"), Some(&300));
}

#[test]
fn what_http2_cannot_carry_is_one_line_and_exit_2() {
    if !have("nginx") || !have("wrk") {
        return;
    }
    let nginx = nginx("script-h2-refused", 1000);
    let url = format!("http://{}/", nginx.addr);
    let pipeline = format!("{EXAMPLES}/pipeline.lua");
    let host = write(
        &nginx,
        "host.lua",
        "request = function() return 'GET / HTTP/1.1\\r\\nHost: a b\\r\\n\\r\\n' end\n",
    );
    for (script, says) in [
        (pipeline.as_str(), "pipelining is HTTP/1.1's"),
        (
            host.as_str(),
            "HTTP/2 and HTTP/3 cannot carry: its target or Host",
        ),
    ] {
        let out = spate(&[
            "--no-progress",
            "--http2",
            "-n",
            "20",
            "-c",
            "1",
            "-s",
            script,
            &url,
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{script}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{err}");
    }
    assert!(nginx.log("scripted.log").is_empty(), "nothing was sent");
}

#[test]
fn verbose_sends_the_scripts_first_request_as_a_stream() {
    if !have("nginx") || !have("wrk") {
        return;
    }
    let nginx = nginx("script-h2-verbose", 1000);
    let out = spate(&[
        "--no-progress",
        "--http2",
        "-v",
        "-n",
        "3",
        "-c",
        "1",
        "-s",
        &format!("{EXAMPLES}/counter.lua"),
        &format!("http://{}/", nginx.addr),
    ]);
    succeeded(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    for line in ["> :path: /0", "> x-counter: 0", "< :status: 200", "< ok /0"] {
        assert!(err.lines().any(|l| l == line), "{line}: {err}");
    }
    // -v's request and the run's three, each a stream of its own.
    assert_eq!(nginx.log("scripted.log").len(), 4);
}
