//! Where connections go, against Debian's nginx: `--connect-to` sends the URL's Host and TLS name
//! to another address (nginx logs both), `--unix-socket` carries HTTP/1.1 and h2c with exact
//! counts in nginx's access log, and bad routes stop before anything is sent.

use std::process::Command;

use crate::nginx::Nginx;
use crate::pki::Pki;
use crate::support::{free_addr, have, spate_json};

/// An nginx that logs the Host header and the TLS server name of every request.
const LOG: &str =
    "log_format route '$http_host $ssl_server_name'; access_log {dir}/route.log route;";

#[test]
fn connect_to_keeps_the_urls_host_header() {
    if !have("nginx") {
        return;
    }
    let nginx = Nginx::start(
        "connect-to",
        "",
        LOG,
        "location / { return 200 \"ok\\n\"; }",
    );
    // Nothing listens on the URL's port, and the name is not in any DNS: only the rule's address
    // is ever connected to.
    let elsewhere = free_addr().port();
    let url = format!("http://backend.spate.test:{elsewhere}/");
    let rule = format!(
        "backend.spate.test:{elsewhere}:127.0.0.1:{}",
        nginx.addr.port()
    );
    let doc = spate_json(&["-n", "200", "-c", "4", "--connect-to", &rule, &url]);
    assert_eq!(doc["requests"]["completed"], 200);
    let to = format!("127.0.0.1:{}", nginx.addr.port());
    assert_eq!(doc["config"]["connected_to"], to.as_str());
    let hosts = nginx.log("route.log");
    assert_eq!(hosts.len(), 200);
    let want = format!("backend.spate.test:{elsewhere} -");
    assert!(hosts.iter().all(|h| *h == want), "{:?}", &hosts[..3]);
}

#[test]
fn connect_to_keeps_the_tls_server_name() {
    if !have("nginx") {
        return;
    }
    let pki = Pki::new("connect-to");
    std::fs::write(pki.dir.join("other.pem"), &pki.wrong_name_cert).unwrap();
    std::fs::write(pki.dir.join("other-key.pem"), &pki.wrong_name_key).unwrap();
    let server = format!(
        "ssl_certificate {0}/other.pem; ssl_certificate_key {0}/other-key.pem; \
         location / {{ return 200 \"ok\\n\"; }}",
        pki.dir.display()
    );
    let nginx = Nginx::start("connect-to-tls", "ssl", LOG, &server);
    let port = nginx.addr.port();
    // The certificate is for other.test, so it verifies only if the TLS name is the URL's.
    let url = format!("https://other.test:{port}/");
    let rule = "other.test::127.0.0.1:";
    let ca = pki.dir.join("ca.pem");
    let doc = spate_json(&[
        "-n",
        "50",
        "-c",
        "2",
        "--cacert",
        ca.to_str().unwrap(),
        "--connect-to",
        rule,
        &url,
    ]);
    assert_eq!(doc["requests"]["completed"], 50);
    assert_eq!(doc["config"]["tls"], "verified");
    let lines = nginx.log("route.log");
    let want = format!("other.test:{port} other.test");
    assert!(
        lines.len() == 50 && lines.iter().all(|l| *l == want),
        "{lines:?}"
    );
}

#[test]
fn unix_socket_carries_http1_and_h2c_with_exact_counts() {
    if !have("nginx") {
        return;
    }
    let nginx = Nginx::start(
        "unix",
        "",
        LOG,
        "listen unix:{dir}/h1.sock; listen unix:{dir}/h2.sock http2; \
         location / { return 200 \"ok\\n\"; }",
    );
    let h1 = nginx.dir.join("h1.sock");
    let h2 = nginx.dir.join("h2.sock");
    let doc = spate_json(&[
        "-n",
        "300",
        "-c",
        "3",
        "--unix-socket",
        h1.to_str().unwrap(),
        "http://sidecar.local/",
    ]);
    assert_eq!(doc["requests"]["completed"], 300);
    assert_eq!(doc["connections"]["http1"], 3);
    let to = format!("unix:{}", h1.display());
    assert_eq!(doc["config"]["connected_to"], to.as_str());
    let doc = spate_json(&[
        "-n",
        "400",
        "-c",
        "2",
        "-p",
        "4",
        "--http2",
        "--unix-socket",
        h2.to_str().unwrap(),
        "http://sidecar.local/",
    ]);
    assert_eq!(doc["requests"]["completed"], 400);
    assert_eq!(doc["connections"]["http2"], 2);
    let lines = nginx.log("route.log");
    assert_eq!(lines.len(), 700, "nginx served each request once");
    assert!(lines.iter().all(|l| l == "sidecar.local -"), "{lines:?}");
}

#[test]
fn bad_routes_stop_with_one_line_and_exit_2() {
    let dir = std::env::temp_dir().join(format!("spate-route-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("none.sock");
    let missing = missing.to_str().unwrap();
    for (args, want) in [
        (
            vec!["--connect-to", "a:80:b", "http://127.0.0.1:1/"],
            "is not HOST1:PORT1:HOST2:PORT2",
        ),
        (
            vec!["--connect-to", "a:80:b:99999", "http://127.0.0.1:1/"],
            "is not a port",
        ),
        (
            vec!["--unix-socket", "/x.sock", "https://127.0.0.1:1/"],
            "--unix-socket carries HTTP/1.1 and h2c, not TLS",
        ),
        (
            vec!["--unix-socket", "/x.sock", "-6", "http://127.0.0.1:1/"],
            "cannot be combined with --ipv4 or --ipv6",
        ),
        (
            vec!["-4", "-6", "http://127.0.0.1:1/"],
            "cannot be used with",
        ),
        (
            vec!["-6", "http://127.0.0.1:1/"],
            "127.0.0.1 has no IPv6 address (it has 127.0.0.1:1)",
        ),
        (
            vec!["--unix-socket", missing, "http://x/"],
            "none.sock: no such socket",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_spate"))
            .args(["-n", "5", "-c", "1"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verbose_shows_one_exchange_masked_and_does_not_count_it() {
    if !have("nginx") {
        return;
    }
    let nginx = Nginx::start(
        "verbose",
        "",
        LOG,
        "listen unix:{dir}/h2.sock http2; location / { return 200 \"ok from nginx\\n\"; }",
    );
    let url = format!("http://{}/", nginx.addr);
    let out = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args([
            "-v",
            "-n",
            "20",
            "-c",
            "2",
            "--no-progress",
            "--format",
            "json",
        ])
        .args(["-a", "user:s3cret", "-H", "X-Trace: 7", &url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for line in [
        "> GET / HTTP/1.1\n",
        &format!("> Host: {}\n", nginx.addr),
        "> Authorization: ***\n",
        "> X-Trace: 7\n",
        "< HTTP/1.1 200 OK\n",
        "< ok from nginx\n",
    ] {
        assert!(err.contains(line), "{line:?} in:\n{err}");
    }
    assert!(
        !err.contains("s3cret") && !err.contains("dXNlcjpzM2NyZXQ="),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["requests"]["completed"], 20, "the look is not counted");
    // HTTP/2 over the Unix socket: the fields as HTTP/2 sends them, and nginx's answer.
    let sock = nginx.dir.join("h2.sock");
    let out = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args([
            "-v",
            "-n",
            "5",
            "-c",
            "1",
            "--http2",
            "--no-progress",
            "--unix-socket",
        ])
        .arg(&sock)
        .arg("http://sidecar.local/")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for line in [
        "> :method: GET\n",
        "> :authority: sidecar.local\n",
        "< :status: 200\n",
        "< ok from nginx\n",
    ] {
        assert!(err.contains(line), "{line:?} in:\n{err}");
    }
    // Twenty and five counted, plus one look each.
    assert_eq!(nginx.log("route.log").len(), 27);
}
