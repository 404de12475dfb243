//! --alt-svc: one request over TCP reads the server's Alt-Svc, and the run goes over HTTP/3
//! where it points. Against PyPI's hypercorn with its QUIC port apart from its TCP port (it
//! advertises it itself), and against the built-in server, which advertises no HTTP/3.

use spate::serve::{ServeConfig, ServeTls, Server};

use crate::h3::Hypercorn;
use crate::pki::Pki;
use crate::support::{failed_json, free_addr, spate, spate_json};

#[test]
fn the_run_follows_alt_svc_to_a_quic_port_of_its_own() {
    let pki = Pki::new("alt-svc");
    let (tcp, udp) = (free_addr(), free_addr());
    let Some(server) = Hypercorn::start(&pki, tcp, udp) else {
        return;
    };
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
    let versions = server.versions();
    assert_eq!(
        versions.iter().filter(|v| *v == "3").count(),
        50,
        "{versions:?}"
    );
    // The one request that read Alt-Svc went over TCP, by ALPN HTTP/2.
    assert_eq!(
        versions.iter().filter(|v| *v == "2").count(),
        1,
        "{versions:?}"
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
