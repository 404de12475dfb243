//! HTTPS against the built-in server with certificates made by tests/it/pki.rs: verification,
//! name mismatch, --insecure, mTLS, ALPN in both directions, session resumption. The accounting
//! invariant is checked in every run (`support::run`).

use std::process::Command;

use spate::engine::{self, RunError};
use spate::plan::{Protocol, Stop};
use spate::serve::{ServeConfig, ServeTls, Server};
use spate::stats::Failure;

use crate::pki::Pki;
use crate::support::{plan, requests, run};

fn tls_server(cert: &[u8], key: &[u8], client_ca: Option<&[u8]>, http1_only: bool) -> Server {
    Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        tls: Some(ServeTls {
            cert: cert.to_vec(),
            key: key.to_vec(),
            client_ca: client_ca.map(<[u8]>::to_vec),
            http1_only,
        }),
        ..ServeConfig::default()
    })
    .unwrap()
}

#[test]
fn verified_with_cacert_and_alpn_picks_h2() {
    let pki = Pki::new("verified");
    let server = tls_server(&pki.server_cert, &pki.server_key, None, false);
    assert!(server.url().starts_with("https://"));
    let mut p = plan(&server.url(), 4, requests(200));
    p.tls.cacert = Some(pki.ca.clone());
    let (out, summary) = run(&p);
    assert_eq!(out.stats.completed, 200);
    assert_eq!(server.requests(), 200);
    assert_eq!(summary.config.tls.as_deref(), Some("verified"));
    assert_eq!(summary.config.protocol, "HTTP/2");
    assert_eq!((out.stats.conns.h2, out.stats.conns.h1), (4, 0));
    assert_eq!(
        out.stats.tls.len(),
        4,
        "one handshake per connection, timed apart"
    );
}

#[test]
fn a_name_mismatch_fails_in_the_tls_class() {
    let pki = Pki::new("mismatch");
    let server = tls_server(&pki.wrong_name_cert, &pki.wrong_name_key, None, false);
    let mut p = plan(&server.url(), 2, requests(4));
    p.tls.cacert = Some(pki.ca.clone());
    match engine::run(&p) {
        Err(RunError::Unreachable { class, reason, .. }) => {
            assert_eq!(class, Failure::Tls);
            assert!(
                reason.contains("not valid for 127.0.0.1 (it is for other.test)"),
                "{reason}"
            );
            assert!(reason.contains("issued for"), "{reason}");
        }
        other => panic!("expected a TLS failure, got {other:?}"),
    }
    assert_eq!(server.requests(), 0);
}

#[test]
fn an_unknown_issuer_fails_with_a_hint_and_exit_1() {
    let pki = Pki::new("unknown");
    let server = tls_server(&pki.server_cert, &pki.server_key, None, false);
    let o = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(["-n", "4", "-c", "2", &server.url()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("not signed by a CA spate trusts") && err.contains("--cacert FILE"),
        "{err}"
    );
}

#[test]
fn insecure_succeeds_and_says_so() {
    let pki = Pki::new("insecure");
    let server = tls_server(&pki.wrong_name_cert, &pki.wrong_name_key, None, false);
    let o = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(["-n", "50", "-c", "2", "--insecure", &server.url()])
        .output()
        .unwrap();
    crate::support::succeeded(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("certificate NOT verified: --insecure"),
        "{text}"
    );
    assert!(text.contains("TLS handshake"), "{text}");
}

#[test]
fn mtls_with_and_without_a_client_certificate() {
    let pki = Pki::new("mtls");
    let server = tls_server(&pki.server_cert, &pki.server_key, Some(&pki.ca), false);
    let mut p = plan(&server.url(), 2, requests(20));
    p.tls.cacert = Some(pki.ca.clone());
    p.tls.cert = Some(pki.client_cert.clone());
    p.tls.key = Some(pki.client_key.clone());
    let (out, _) = run(&p);
    assert_eq!(out.stats.completed, 20);

    // Without one the server refuses: during the handshake, or (TLS 1.3) with an alert that
    // arrives with the first response. Either way the class is TLS.
    p.tls.cert = None;
    p.tls.key = None;
    match engine::run(&p) {
        Err(RunError::Unreachable { class, .. }) => assert_eq!(class, Failure::Tls),
        Ok(out) => {
            assert!(out.stats.is_balanced());
            assert_eq!(out.stats.completed, 0);
            assert_eq!(
                out.stats.failures.get(Failure::Tls),
                out.stats.failed(),
                "{:?}",
                out.stats.failures
            );
            assert!(out.stats.failed() > 0);
        }
        Err(e) => panic!("{e}"),
    }
    assert_eq!(
        server.requests(),
        20,
        "only the authenticated run was served"
    );
}

#[test]
fn alpn_picks_http1_when_the_server_offers_only_http1() {
    let pki = Pki::new("alpn1");
    let server = tls_server(&pki.server_cert, &pki.server_key, None, true);
    let mut p = plan(&server.url(), 2, requests(50));
    p.tls.cacert = Some(pki.ca.clone());
    let (out, summary) = run(&p);
    assert_eq!(summary.config.protocol, "HTTP/1.1");
    assert_eq!((out.stats.conns.h1, out.stats.conns.h2), (2, 0));
    assert_eq!(out.stats.completed, 50);

    // Forcing HTTP/2 against it: the handshake finds no common ALPN protocol.
    p.protocol = Protocol::Http2;
    match engine::run(&p) {
        Err(RunError::Unreachable { class, reason, .. }) => {
            assert_eq!(class, Failure::Tls);
            assert!(
                reason.contains("no_application_protocol") && reason.contains("drop --http2"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn forced_http1_on_an_h2_server() {
    let pki = Pki::new("force1");
    let server = tls_server(&pki.server_cert, &pki.server_key, None, false);
    let mut p = plan(&server.url(), 2, requests(50));
    p.tls.cacert = Some(pki.ca.clone());
    p.protocol = Protocol::Http1;
    let (out, summary) = run(&p);
    assert_eq!(summary.config.protocol, "HTTP/1.1");
    assert_eq!(out.stats.conns.h1, 2);
}

#[test]
fn reconnects_resume_tls_sessions() {
    let pki = Pki::new("resume");
    let server = tls_server(&pki.server_cert, &pki.server_key, None, false);
    for protocol in [Protocol::Http1, Protocol::Http2] {
        let mut p = plan(&server.url(), 2, requests(40));
        p.tls.cacert = Some(pki.ca.clone());
        p.keep_alive = false;
        p.protocol = protocol;
        let (out, summary) = run(&p);
        assert_eq!(out.stats.completed, 40, "{protocol:?}");
        assert_eq!(
            out.stats.conns.reconnects, 38,
            "{protocol:?}: a connection per request"
        );
        assert!(
            out.stats.conns.tls_resumed >= 30,
            "{protocol:?}: {} resumed",
            out.stats.conns.tls_resumed
        );
        assert_eq!(summary.connections.tls_resumed, out.stats.conns.tls_resumed);
    }
}

#[test]
fn duration_runs_over_tls_end() {
    let pki = Pki::new("duration");
    let server = tls_server(&pki.server_cert, &pki.server_key, None, false);
    let mut p = plan(
        &server.url(),
        4,
        Stop::Duration(std::time::Duration::from_millis(300)),
    );
    p.tls.cacert = Some(pki.ca.clone());
    p.h2.streams = 4;
    let (out, _) = run(&p);
    assert!(out.stats.completed > 0);
    assert_eq!(out.stats.failed(), 0);
}

#[test]
fn cacert_cert_and_key_files_from_the_command_line() {
    let pki = Pki::new("cli");
    let server = tls_server(&pki.server_cert, &pki.server_key, Some(&pki.ca), false);
    let o = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(["-n", "20", "-c", "2", "--format", "json"])
        .args([
            "--cacert",
            &pki.path("ca.pem"),
            "--cert",
            &pki.path("client.pem"),
            "--key",
            &pki.path("client-key.pem"),
        ])
        .arg(server.url())
        .output()
        .unwrap();
    crate::support::succeeded(&o);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["config"]["tls"], "verified");
    assert_eq!(doc["requests"]["completed"], 20);
    assert_eq!(doc["connections"]["tls"]["count"], 2);
    // A file that is not PEM is an input error, before anything is sent.
    let o = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args([
            "-n",
            "4",
            "-c",
            "1",
            "--cacert",
            &pki.path("missing.pem"),
            &server.url(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read --cacert /"));
    std::fs::write(pki.dir.join("junk.pem"), b"not a certificate").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args([
            "-n",
            "4",
            "-c",
            "1",
            "--cacert",
            &pki.path("junk.pem"),
            &server.url(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("--cacert: no PEM certificate found"));
}

#[test]
fn more_connections_than_one_poll_can_write_are_all_served_over_tls() {
    // One thread polls every connection's first request in one turn of its task set, past
    // tokio's cooperative budget, which TLS socket calls spend: the set must end its turn there
    // rather than put every other member off, and what rustls kept of a write refused for the
    // budget must be flushed. Without both, most connections were never served.
    let n = 300u64;
    let pki = Pki::new("budget");
    let server = tls_server(&pki.server_cert, &pki.server_key, None, false);
    for protocol in [Protocol::Http1, Protocol::Http2] {
        let before = server.requests();
        let mut p = plan(&server.url(), n as u32, requests(3 * n));
        p.tls.cacert = Some(pki.ca.clone());
        p.threads = 1;
        p.protocol = protocol;
        let (out, _) = run(&p);
        let per = &out.stats.per_client;
        assert_eq!(per.len(), n as usize, "{protocol:?}");
        assert!(
            per.iter().all(|&k| k > 0),
            "{protocol:?}: {} of {n} connections were never served",
            per.iter().filter(|&&k| k == 0).count()
        );
        assert_eq!(out.stats.completed, 3 * n, "{protocol:?}");
        assert_eq!(server.requests() - before, 3 * n, "{protocol:?}");
    }
}

#[test]
fn uploads_larger_than_the_socket_buffers_arrive_whole_over_tls() {
    // A body far larger than the socket takes at once: rustls accepts the last of it while the
    // socket is still full, and only a flush sends those records.
    let pki = Pki::new("upload");
    let server = tls_server(&pki.server_cert, &pki.server_key, None, false);
    for (protocol, streams) in [(Protocol::Http1, 1), (Protocol::Http2, 4)] {
        let before = server.requests();
        let mut p = plan(&server.url(), 2, requests(24));
        p.tls.cacert = Some(pki.ca.clone());
        p.protocol = protocol;
        p.h2.streams = streams;
        p.method = "POST".into();
        p.body = vec![b'x'; 4 << 20];
        let (out, _) = run(&p);
        assert_eq!(
            out.stats.failed(),
            0,
            "{protocol:?}: {:?}",
            out.stats.failures
        );
        assert_eq!(out.stats.completed, 24, "{protocol:?}");
        assert_eq!(server.requests() - before, 24, "{protocol:?}");
    }
}

#[test]
fn bodies_larger_than_the_socket_buffers_arrive_whole_over_tls() {
    // End to end, both sides' large writes and reads over TLS; that the server flushes what
    // rustls holds is pinned exactly by `serve::conn`'s unit test.
    let pki = Pki::new("download");
    let server = Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        body_size: 8 << 20,
        tls: Some(ServeTls {
            cert: pki.server_cert.clone(),
            key: pki.server_key.clone(),
            client_ca: None,
            http1_only: true,
        }),
        ..ServeConfig::default()
    })
    .unwrap();
    let mut p = plan(&server.url(), 2, requests(16));
    p.tls.cacert = Some(pki.ca.clone());
    let (out, _) = run(&p);
    assert_eq!(out.stats.failed(), 0, "{:?}", out.stats.failures);
    assert_eq!(out.stats.body_bytes, 16 * (8 << 20));
}
