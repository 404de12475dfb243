//! Against Debian's nginx, which no one here wrote: its stock behaviour of ending an HTTP/2
//! connection with a graceful GOAWAY after `keepalive_requests` requests must cost nothing:
//! `-n N` is N responses, none failed, and nginx's access log counts exactly N; and the responses
//! per TCP connection show its limit. nginx is required in CI (SPATE_REQUIRE_TOOLS=1).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command};

use serde_json::Value;

use crate::support::{free_addr, have, spate_json, spawn_listening};

/// nginx in the foreground on a free loopback port, with `server` as its server block's body.
pub struct Nginx {
    child: Child,
    pub dir: PathBuf,
    pub addr: SocketAddr,
}

impl Nginx {
    /// `{dir}` in `http` and `server` stands for nginx's own directory (logs, sockets, files).
    pub fn start(tag: &str, listen: &str, http: &str, server: &str) -> Nginx {
        Nginx::start_on(free_addr(), tag, listen, http, server)
    }

    /// As `start`, on `addr`: for a test that must know the address before nginx starts.
    pub fn start_on(addr: SocketAddr, tag: &str, listen: &str, http: &str, server: &str) -> Nginx {
        let dir = std::env::temp_dir().join(format!("spate-nginx-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        let d = dir.display();
        let http = http.replace("{dir}", &d.to_string());
        let server = server.replace("{dir}", &d.to_string());
        let conf = format!(
            "master_process off;\ndaemon off;\nerror_log {d}/error.log;\npid {d}/nginx.pid;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n  access_log {d}/access.log;\n  client_body_temp_path {d}/tmp;\n  \
             proxy_temp_path {d}/tmp;\n  fastcgi_temp_path {d}/tmp;\n  uwsgi_temp_path {d}/tmp;\n  \
             scgi_temp_path {d}/tmp;\n  {http}\n  server {{\n    listen {addr} {listen};\n    \
             {server}\n  }}\n}}\n"
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let mut cmd = Command::new("nginx");
        cmd.arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"));
        let child = spawn_listening(&mut cmd, addr);
        Nginx { child, dir, addr }
    }

    /// The lines of a log nginx wrote in its directory.
    pub fn log(&self, name: &str) -> Vec<String> {
        std::fs::read_to_string(self.dir.join(name))
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }

    /// The requests nginx logged.
    pub fn logged(&self) -> usize {
        std::fs::read_to_string(self.dir.join("access.log"))
            .unwrap_or_default()
            .lines()
            .count()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn http2_graceful_goaway_costs_no_request() {
    if !have("nginx") {
        return;
    }
    // Stock nginx says 1000; 100 makes twenty GOAWAYs in 2,000 requests.
    let nginx = Nginx::start(
        "goaway",
        "http2",
        "keepalive_requests 100;",
        "location / { return 200 \"ok\\n\"; }",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args([
            "-n",
            "2000",
            "-c",
            "2",
            "-p",
            "8",
            "--http2",
            "--no-progress",
        ])
        .args(["--slo", "errors=1%", "--format", "json"])
        .arg(format!("http://{}/", nginx.addr))
        .output()
        .unwrap();
    crate::support::succeeded(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["requests"];
    assert_eq!(r["completed"], 2000, "{r}");
    assert_eq!(r["failed"], 0, "{r}");
    assert!(doc["connections"]["goaways"].as_u64().unwrap() >= 19);
    assert!(r["retried"].as_u64().unwrap() > 0, "{r}");
    let per = &doc["connections"]["requests_per_connection"];
    assert_eq!(
        (&per["max"], &per["p50"]),
        (&100.into(), &100.into()),
        "{per}"
    );
    assert_eq!(nginx.logged(), 2000, "nginx served each request once");
}

/// spate's JSON for `-n 2000 -c 4 ARGS` against `url`.
fn json_run(url: &str, args: &[&str]) -> Value {
    let mut all = vec!["-n", "2000", "-c", "4"];
    all.extend_from_slice(args);
    all.push(url);
    spate_json(&all)
}

#[test]
fn responses_per_tcp_connection_show_the_servers_keepalive_limit() {
    if !have("nginx") {
        return;
    }
    let nginx = Nginx::start(
        "keepalive",
        "",
        "keepalive_requests 100;",
        "location / { return 200 \"ok\\n\"; }",
    );
    let url = format!("http://{}/", nginx.addr);
    // nginx closes each connection after its 100th response.
    let doc = json_run(&url, &[]);
    let per = &doc["connections"]["requests_per_connection"];
    assert_eq!(
        (&per["max"], &per["p50"]),
        (&100.into(), &100.into()),
        "{per}"
    );
    assert!(per["connections"].as_u64().unwrap() >= 20, "{per}");
    // Per client, a reconnect continues the count: far above the server's limit.
    let client = &doc["connections"]["requests_per_client"];
    assert!(client["min"].as_u64().unwrap() > 100, "{client}");
    // --rpc 1: every TCP connection carried exactly one.
    let doc = json_run(&url, &["--rpc", "1"]);
    let per = &doc["connections"]["requests_per_connection"];
    assert_eq!((&per["min"], &per["max"]), (&1.into(), &1.into()), "{per}");
    assert_eq!(per["connections"], 2000, "{per}");
    assert_eq!(nginx.logged(), 4000);
}
