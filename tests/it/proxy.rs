//! `--proxy` through Debian's tinyproxy, which no one here wrote, to Debian's nginx: absolute-form
//! requests for http://, a CONNECT tunnel per connection for https:// (TLS to the target inside
//! it), proxy credentials from the URL that never appear in any output, and exact counts at the
//! origin. Both programs are required in CI (SPATE_REQUIRE_TOOLS=1).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Output};

use serde_json::Value;

use crate::nginx::Nginx;
use crate::pki::Pki;
use crate::support::{free_addr, have, spawn_listening};

pub const SECRET: &str = "s3cr3t-pw";

/// tinyproxy in the foreground on a free loopback port, asking for `spate:SECRET`.
pub struct Tinyproxy {
    child: Child,
    dir: PathBuf,
    pub addr: SocketAddr,
}

impl Tinyproxy {
    pub fn start(tag: &str) -> Tinyproxy {
        let dir =
            std::env::temp_dir().join(format!("spate-tinyproxy-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let addr = free_addr();
        // No ConnectPort line: CONNECT to any port (the test's nginx is on a random one).
        let conf = format!(
            "Port {}\nListen 127.0.0.1\nTimeout 30\nMaxClients 64\nAllow 127.0.0.1\n\
             BasicAuth spate {SECRET}\nDisableViaHeader Yes\nLogLevel Warning\n\
             LogFile \"{}/tinyproxy.log\"\nPidFile \"{}/tinyproxy.pid\"\n",
            addr.port(),
            dir.display(),
            dir.display()
        );
        std::fs::write(dir.join("tinyproxy.conf"), conf).unwrap();
        let mut cmd = Command::new("tinyproxy");
        cmd.arg("-d").arg("-c").arg(dir.join("tinyproxy.conf"));
        let child = spawn_listening(&mut cmd, addr);
        Tinyproxy { child, dir, addr }
    }

    pub fn url(&self, password: &str) -> String {
        format!("http://spate:{password}@{}", self.addr)
    }
}

impl Drop for Tinyproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn spate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(["--no-progress"])
        .args(args)
        .output()
        .unwrap()
}

fn never_shows_the_secret(out: &Output) {
    for text in [&out.stdout, &out.stderr] {
        let text = String::from_utf8_lossy(text);
        assert!(!text.contains(SECRET), "{text}");
    }
}

#[test]
fn http_through_a_forward_proxy_with_credentials() {
    if !have("nginx") || !have("tinyproxy") {
        return;
    }
    let nginx = Nginx::start("proxy-http", "", "", "location / { return 200 \"ok\\n\"; }");
    let proxy = Tinyproxy::start("http");
    let url = format!("http://{}/", nginx.addr);
    let out = spate(&[
        "-n",
        "300",
        "-c",
        "3",
        "--format",
        "json",
        "-x",
        &proxy.url(SECRET),
        &url,
    ]);
    never_shows_the_secret(&out);
    crate::support::succeeded(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["requests"]["completed"], 300);
    assert_eq!(
        doc["requests"]["successful"], 300,
        "no 407: {}",
        doc["status_codes"]
    );
    // tinyproxy closes the client's connection after each response without saying so: the GETs
    // that crossed those closes were sent again, not failed.
    assert_eq!(doc["requests"]["failed"], 0);
    assert!(doc["requests"]["retried"].as_u64().unwrap() > 0);
    let shown = format!("http://***@{}", proxy.addr);
    assert_eq!(doc["config"]["proxy"], shown.as_str());
    assert_eq!(doc["config"]["proxy_mode"], "forward");
    assert_eq!(nginx.logged(), 300, "the origin saw each request once");
    // The text report names the proxy, masked, too.
    let out = spate(&["-n", "20", "-c", "1", "-x", &proxy.url(SECRET), &url]);
    never_shows_the_secret(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("through proxy {shown}: requests in absolute form")),
        "{text}"
    );
}

#[test]
fn https_through_a_connect_tunnel_with_verified_tls() {
    if !have("nginx") || !have("tinyproxy") {
        return;
    }
    let pki = Pki::new("proxy");
    std::fs::write(pki.dir.join("server.pem"), &pki.server_cert).unwrap();
    std::fs::write(pki.dir.join("server-key.pem"), &pki.server_key).unwrap();
    let server = format!(
        "ssl_certificate {0}/server.pem; ssl_certificate_key {0}/server-key.pem; \
         location / {{ return 200 \"ok\\n\"; }}",
        pki.dir.display()
    );
    let nginx = Nginx::start("proxy-https", "ssl http2", "", &server);
    let proxy = Tinyproxy::start("https");
    let url = format!("https://127.0.0.1:{}/", nginx.addr.port());
    let ca = pki.dir.join("ca.pem");
    let ca = ca.to_str().unwrap();
    for (protocol, n) in [("--http1.1", "200"), ("--http2", "300")] {
        let out = spate(&[
            "-n",
            n,
            "-c",
            "2",
            protocol,
            "--cacert",
            ca,
            "--format",
            "json",
            "-x",
            &proxy.url(SECRET),
            &url,
        ]);
        never_shows_the_secret(&out);
        crate::support::succeeded(&out);
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["requests"]["completed"].to_string(), n, "{protocol}");
        assert_eq!(doc["config"]["proxy_mode"], "tunnel");
        assert_eq!(doc["config"]["tls"], "verified");
        let tunnels = doc["connections"]["proxy"]["count"].as_u64().unwrap();
        let opened = doc["connections"]["established"].as_u64().unwrap()
            + doc["connections"]["reconnects"].as_u64().unwrap();
        assert_eq!(tunnels, opened, "one tunnel per connection ({protocol})");
    }
    assert_eq!(nginx.logged(), 500, "the origin saw each request once");
    // A wrong password: tinyproxy refuses the tunnel, and the run says so without the secret.
    let out = spate(&[
        "-n",
        "5",
        "-c",
        "1",
        "--cacert",
        ca,
        "-x",
        &proxy.url("wrong-pw"),
        &url,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    // tinyproxy says 401 where RFC 9110 has 407; either way it is named.
    assert!(
        err.contains("the proxy refused the tunnel: 401") || err.contains("tunnel: 407"),
        "{err}"
    );
    assert!(!err.contains("wrong-pw"), "{err}");
}

#[test]
fn a_redirect_chain_through_the_proxy_forwards_http_and_tunnels_https() {
    if !have("nginx") || !have("tinyproxy") {
        return;
    }
    let pki = Pki::new("proxy-redirect");
    std::fs::write(pki.dir.join("server.pem"), &pki.server_cert).unwrap();
    std::fs::write(pki.dir.join("server-key.pem"), &pki.server_key).unwrap();
    let secure = Nginx::start(
        "proxy-redirect-tls",
        "ssl",
        "",
        &format!(
            "ssl_certificate {0}/server.pem; ssl_certificate_key {0}/server-key.pem; \
             location / {{ return 200 \"secure\\n\"; }}",
            pki.dir.display()
        ),
    );
    let plain = Nginx::start(
        "proxy-redirect",
        "",
        "",
        &format!(
            "location = /a {{ return 302 /b; }} \
             location = /b {{ return 301 https://localhost:{}/s; }}",
            secure.addr.port()
        ),
    );
    let proxy = Tinyproxy::start("redirect");
    let ca = pki.dir.join("ca.pem");
    let out = spate(&[
        "-n",
        "60",
        "-c",
        "2",
        "--redirect",
        "2",
        "--cacert",
        ca.to_str().unwrap(),
        "--format",
        "json",
        "-x",
        &proxy.url(SECRET),
        &format!("http://{}/a", plain.addr),
    ]);
    never_shows_the_secret(&out);
    crate::support::succeeded(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["requests"]["completed"], 60);
    assert_eq!(doc["requests"]["redirects_followed"], 120);
    // tinyproxy's closes after each forwarded response crossed hops too: sent again, not failed.
    assert_eq!(doc["requests"]["failed"], 0);
    assert_eq!(plain.logged(), 120, "/a and /b, each once per request");
    assert_eq!(
        secure.logged(),
        60,
        "through a tunnel, with the name checked"
    );
}

#[test]
fn a_bad_proxy_url_stops_before_anything_is_sent() {
    for (proxy, want) in [
        (
            "socks5://u:hidden@127.0.0.1:1080",
            "unsupported proxy scheme \"socks5\"",
        ),
        ("http://u:hidden@:8080", "no host"),
    ] {
        let out = spate(&["-n", "1", "-c", "1", "-x", proxy, "http://127.0.0.1:1/"]);
        assert_eq!(out.status.code(), Some(2), "{proxy}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want) && !err.contains("hidden"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    let out = spate(&[
        "-x",
        "http://127.0.0.1:3128",
        "--connect-to",
        "a:1:b:2",
        "http://127.0.0.1:1/",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--proxy and --connect-to"));
}
