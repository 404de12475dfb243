//! --alt-svc: one request over TCP reads the server's Alt-Svc, and the run goes over HTTP/3
//! where it points. Against PyPI's hypercorn with its QUIC port apart from its TCP port (it
//! advertises it itself), and against the built-in server, which advertises no HTTP/3.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use spate::serve::{ServeConfig, ServeTls, Server};

use crate::pki::Pki;
use crate::support::{Child, failed_json, free_addr, spate, spate_json, test_python};

/// An ASGI app that answers "ok" and logs each request's HTTP version to $H3_LOG.
const APP: &str = r#"import os
async def app(scope, receive, send):
    if scope['type'] != 'http':
        return
    with open(os.environ['H3_LOG'], 'a') as f:
        f.write(scope['http_version'] + '\n')
    await send({'type': 'http.response.start', 'status': 200,
                'headers': [(b'content-length', b'2')]})
    await send({'type': 'http.response.body', 'body': b'ok'})
"#;

#[test]
fn the_run_follows_alt_svc_to_a_quic_port_of_its_own() {
    let Some(python) = test_python("hypercorn") else {
        return;
    };
    let pki = Pki::new("alt-svc");
    let dir = &pki.dir;
    std::fs::write(dir.join("altapp.py"), APP).unwrap();
    std::fs::write(dir.join("cert.pem"), &pki.server_cert).unwrap();
    std::fs::write(dir.join("key.pem"), &pki.server_key).unwrap();
    let log = dir.join("requests.log");
    let (tcp, udp) = (free_addr(), free_addr());
    let child = Command::new(python)
        .args(["-m", "hypercorn", "--bind", &tcp.to_string()])
        .args(["--quic-bind", &udp.to_string()])
        .arg("--certfile")
        .arg(dir.join("cert.pem"))
        .arg("--keyfile")
        .arg(dir.join("key.pem"))
        .arg("altapp:app")
        .current_dir(dir)
        .env("H3_LOG", &log)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _server = Child(child);
    let t = Instant::now();
    while std::net::TcpStream::connect(tcp).is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "hypercorn never listened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (ca, url) = (
        pki.path("ca.pem"),
        format!("https://localhost:{}/", tcp.port()),
    );
    let v = spate_json(&[
        "--alt-svc",
        "-n",
        "50",
        "-c",
        "2",
        "-p",
        "2",
        "--cacert",
        &ca,
        "--connect-timeout",
        "10s",
        &url,
    ]);
    crate::schema::validate(&v);
    assert_eq!(v["config"]["protocol"], "HTTP/3");
    let alt = format!("h3=\":{}\"", udp.port());
    assert_eq!(v["config"]["alt_svc"], alt.as_str());
    assert_eq!(v["requests"]["completed"], 50);
    let logged = std::fs::read_to_string(&log).unwrap();
    let versions: Vec<&str> = logged.lines().collect();
    assert_eq!(
        versions.iter().filter(|v| **v == "3").count(),
        50,
        "{logged}"
    );
    // The one request that read Alt-Svc went over TCP, by ALPN HTTP/2.
    assert_eq!(
        versions.iter().filter(|v| **v == "2").count(),
        1,
        "{logged}"
    );
    assert_eq!(versions.len(), 51);
    // The text report names the alternative.
    let out = spate(&["--alt-svc", "-n", "4", "-c", "1", "--cacert", &ca, &url]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("HTTP/3 over QUIC (Alt-Svc {alt})")),
        "{text}"
    );
}

#[test]
fn a_server_that_advertises_no_http3_is_one_line_and_exit_1() {
    let pki = Pki::new("alt-svc-none");
    let server = Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        tls: Some(ServeTls {
            cert: pki.server_cert.clone(),
            key: pki.server_key.clone(),
            client_ca: None,
            http1_only: false,
        }),
        ..ServeConfig::default()
    })
    .unwrap();
    let ca = pki.path("ca.pem");
    let v = failed_json(&[
        "--alt-svc",
        "-n",
        "4",
        "-c",
        "1",
        "--cacert",
        &ca,
        &server.url(),
    ]);
    let said = v["error"].to_string();
    assert!(
        said.contains("advertised no HTTP/3 (Alt-Svc: none)"),
        "{said}"
    );
    let out = spate(&[
        "--alt-svc",
        "-n",
        "4",
        "-c",
        "1",
        "--cacert",
        &ca,
        &server.url(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    assert_eq!(server.requests(), 2, "only the two requests that asked");
}

#[test]
fn alt_svc_is_refused_with_another_http_version_and_on_http() {
    for (args, says) in [
        (
            &["--alt-svc", "--http2", "https://h/"][..],
            "cannot be used with",
        ),
        (
            &["--alt-svc", "http://127.0.0.1:1/"][..],
            "needs an https:// URL",
        ),
    ] {
        let err = crate::support::usage_error(args);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
