//! Trusting what the user passed and saying why a handshake failed: the self-signed certificate
//! `openssl req -x509` makes (CA:TRUE) is trusted as itself with --cacert, within its validity
//! and for its names only; and every failure is a sentence with a hint (a TLS-1.0-only OpenSSL
//! server, a close during the handshake, a close without close_notify, an HTTP/2 server that
//! never answers the PING). OpenSSL is required in CI (SPATE_REQUIRE_TOOLS=1).

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::process::{Child, Command, Output};
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair, date_time_ymd};
use spate::engine::{self, RunError};
use spate::plan::Protocol;
use spate::serve::{ServeConfig, ServeTls, Server};

use crate::support::{Scripted, free_addr, have, plan, requests, run, spawn_listening};

fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("spate-trust-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn tls_server(cert: &[u8], key: &[u8]) -> Server {
    Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        tls: Some(ServeTls {
            cert: cert.to_vec(),
            key: key.to_vec(),
            client_ca: None,
            http1_only: false,
        }),
        ..ServeConfig::default()
    })
    .unwrap()
}

/// A self-signed certificate that says CA:TRUE, as `openssl req -x509` makes them.
fn self_signed_ca(names: &[&str], expired: bool) -> (Vec<u8>, Vec<u8>) {
    let key = KeyPair::generate().unwrap();
    let mut params =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    if expired {
        params.not_before = date_time_ymd(2020, 1, 1);
        params.not_after = date_time_ymd(2021, 1, 1);
    }
    let cert = params.self_signed(&key).unwrap();
    (cert.pem().into_bytes(), key.serialize_pem().into_bytes())
}

fn spate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(args)
        .output()
        .unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn the_self_signed_certificate_openssl_makes_is_trusted_with_cacert() {
    if !have("openssl") {
        return;
    }
    let dir = scratch("openssl");
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
        ])
        .args(["-nodes", "-days", "30", "-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", err(&made));
    let server = tls_server(
        &std::fs::read(&cert).unwrap(),
        &std::fs::read(&key).unwrap(),
    );
    let url = format!("https://127.0.0.1:{}/", server.addr().port());
    let o = spate(&[
        "-n",
        "20",
        "-c",
        "2",
        "--cacert",
        cert.to_str().unwrap(),
        &url,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(server.requests(), 20);
    // Without it, the failure says what to do.
    let o = spate(&["-n", "2", "-c", "1", &url]);
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("--cacert FILE"), "{}", err(&o));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_pinned_certificate_is_still_checked_for_its_names_and_validity() {
    let check = |names: &[&str], expired: bool, want: &str| {
        let (cert, key) = self_signed_ca(names, expired);
        let server = tls_server(&cert, &key);
        let mut p = plan(
            &format!("https://127.0.0.1:{}/", server.addr().port()),
            1,
            requests(4),
        );
        p.tls.cacert = Some(cert);
        match (want, engine::run(&p)) {
            ("", Ok(out)) => assert_eq!(out.stats.completed, 4),
            (want, Err(RunError::Unreachable { reason, .. })) if !want.is_empty() => {
                assert!(reason.contains(want), "{names:?} {expired}: {reason}");
            }
            (_, other) => panic!("{names:?} {expired}: {other:?}"),
        }
        assert_eq!(server.requests(), if want.is_empty() { 4 } else { 0 });
    };
    check(&["127.0.0.1"], false, "");
    check(
        &["other.test"],
        false,
        "not valid for 127.0.0.1 (it is for other.test)",
    );
    // WebPKI checks the period before the CA flag: an expired pinned certificate stays refused.
    check(&["127.0.0.1"], true, "expired at 2021-01-01");
    // Another certificate with the same shape is not the one the server presents.
    let (other, _) = self_signed_ca(&["127.0.0.1"], false);
    let (cert, key) = self_signed_ca(&["127.0.0.1"], false);
    let server = tls_server(&cert, &key);
    let mut p = plan(
        &format!("https://127.0.0.1:{}/", server.addr().port()),
        1,
        requests(2),
    );
    p.tls.cacert = Some(other);
    match engine::run(&p) {
        Err(RunError::Unreachable { reason, .. }) => {
            assert!(reason.contains("CA certificate as its own"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

/// `openssl s_server` on a free loopback port, with `args`; killed on drop.
struct OpenSsl(Child, SocketAddr);

impl OpenSsl {
    fn start(dir: &std::path::Path, args: &[&str]) -> OpenSsl {
        let (cert, key) = self_signed_ca(&["127.0.0.1"], false);
        std::fs::write(dir.join("c.pem"), cert).unwrap();
        std::fs::write(dir.join("k.pem"), key).unwrap();
        let addr = free_addr();
        let mut cmd = Command::new("openssl");
        cmd.arg("s_server")
            .args(["-accept", &addr.to_string(), "-www", "-quiet"])
            .arg("-cert")
            .arg(dir.join("c.pem"))
            .arg("-key")
            .arg(dir.join("k.pem"))
            .args(args);
        OpenSsl(spawn_listening(&mut cmd, addr), addr)
    }
}

impl OpenSsl {
    /// A short run against it, without verification: what spate says of its TLS.
    fn probe(&self) -> Output {
        spate(&["-n", "2", "-c", "1", "-k", &format!("https://{}/", self.1)])
    }
}

impl Drop for OpenSsl {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_server_that_speaks_only_tls_1_0_is_named_as_such() {
    if !have("openssl") {
        return;
    }
    let dir = scratch("tls10");
    let server = OpenSsl::start(&dir, &["-tls1", "-cipher", "DEFAULT@SECLEVEL=0"]);
    let o = server.probe();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(err(&o).lines().count(), 1, "{}", err(&o));
    assert!(err(&o).contains("only older versions"), "{}", err(&o));
    drop(server);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_server_that_wants_a_client_certificate_says_so() {
    if !have("openssl") {
        return;
    }
    let dir = scratch("mtls");
    for version in ["-tls1_3", "-tls1_2"] {
        let o = OpenSsl::start(&dir, &["-Verify", "1", version]).probe();
        assert_ne!(o.status.code(), Some(0));
        let text = format!("{}{}", err(&o), String::from_utf8_lossy(&o.stdout));
        assert!(text.contains("--cert FILE --key FILE"), "{version}: {text}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_close_during_the_handshake_is_a_sentence() {
    // Closed after the whole ClientHello (an EOF), and after part of it (a reset: data unread).
    let whole = Scripted::start(|p| {
        let _ = p.stream.set_read_timeout(Some(Duration::from_millis(200)));
        let mut hello = [0u8; 4096];
        while matches!(p.stream.read(&mut hello), Ok(n) if n > 0) {}
    });
    let part = Scripted::start(|p| {
        let mut hello = [0u8; 16];
        let _ = p.stream.read(&mut hello);
    });
    for s in [whole, part] {
        let p = plan(&format!("https://{}/", s.addr), 1, requests(2));
        match engine::run(&p) {
            Err(RunError::Unreachable { reason, .. }) => {
                assert!(reason.contains("during the TLS handshake"), "{reason}");
                assert!(reason.contains("TLS 1.0 or 1.1"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_close_without_close_notify_is_a_sentence_without_a_link() {
    let (cert, key) = self_signed_ca(&["127.0.0.1"], false);
    let config = spate::net::server_config(&cert, &key, vec![b"http/1.1".to_vec()], None).unwrap();
    let s = Scripted::start(move |p| {
        let Ok(tcp) = p.stream.try_clone() else {
            return;
        };
        let conn = rustls::ServerConnection::new(config.clone()).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let mut buf = [0u8; 1024];
        // The handshake, then the request; then the socket closes with no alert.
        if tls.read(&mut buf).is_ok() {
            let _ = tls.flush();
        }
        let _ = p.stream.shutdown(std::net::Shutdown::Both);
    });
    let mut p = plan(&format!("https://{}/", s.addr), 1, requests(2));
    p.tls.insecure = true;
    let (_, summary) = run(&p);
    let example = summary.errors[0].example.clone().unwrap_or_default();
    assert!(example.contains("without close_notify"), "{example}");
    assert!(example.contains("--cert FILE"), "{example}");
    assert!(!example.contains("https://"), "{example}");
}

#[test]
fn an_http2_server_that_never_answers_the_ping_is_not_a_connect_timeout() {
    // SETTINGS, then silence: TCP is up, the HTTP/2 handshake never completes.
    let s = Scripted::start(|p| {
        let mut preface = [0u8; 24];
        if p.stream.read_exact(&mut preface).is_ok() {
            let _ = p.stream.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
            let mut sink = [0u8; 1024];
            let _ = p.stream.set_read_timeout(Some(Duration::from_secs(3)));
            while matches!(p.stream.read(&mut sink), Ok(n) if n > 0) {}
        }
    });
    let mut p = plan(&s.url(), 1, requests(2));
    p.protocol = Protocol::Http2;
    p.connect_timeout = Duration::from_millis(300);
    match engine::run(&p) {
        Err(RunError::Unreachable { reason, .. }) => {
            assert!(
                reason.contains("did not complete the HTTP/2 handshake"),
                "{reason}"
            );
            assert!(!reason.contains("connect timed out"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_key_of_another_certificate_is_named_by_its_flags() {
    let dir = scratch("pair");
    let (cert, _) = self_signed_ca(&["client.test"], false);
    let (_, other_key) = self_signed_ca(&["client.test"], false);
    std::fs::write(dir.join("c.pem"), cert).unwrap();
    std::fs::write(dir.join("k.pem"), other_key).unwrap();
    std::fs::write(dir.join("junk.pem"), "junk").unwrap();
    let path = |f: &str| dir.join(f).to_string_lossy().into_owned();
    let cases = [
        (
            "k.pem",
            "the private key of --key does not belong to the certificate of --cert",
        ),
        ("junk.pem", "--key: no PEM private key found"),
    ];
    for (key, want) in cases {
        let o = spate(&[
            "--cert",
            &path("c.pem"),
            "--key",
            &path(key),
            "https://127.0.0.1:1/",
        ]);
        assert_eq!(o.status.code(), Some(2));
        assert!(err(&o).contains(want), "{}", err(&o));
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_wrong_scheme_or_protocol_for_the_port_is_named() {
    let (cert, key) = self_signed_ca(&["127.0.0.1"], false);
    let tls = tls_server(&cert, &key);
    let h2c = Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        h2c: true,
        ..ServeConfig::default()
    })
    .unwrap();
    let plain = Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        ..ServeConfig::default()
    })
    .unwrap();
    // http:// to a TLS port, and HTTP/1.1 to an h2c-only port: every request says why.
    for (url, want) in [
        (
            format!("http://127.0.0.1:{}/", tls.addr().port()),
            "answered in TLS: use https://",
        ),
        (
            format!("http://127.0.0.1:{}/", h2c.addr().port()),
            "as HTTP/2 does: use --http2",
        ),
    ] {
        let (_, summary) = run(&plan(&url, 1, requests(2)));
        let example = summary.errors[0].example.clone().unwrap_or_default();
        assert!(example.contains(want), "{url}: {example}");
    }
    // https:// to a plain port: the run cannot start, and the line says what to use.
    let mut p = plan(
        &format!("https://127.0.0.1:{}/", plain.addr().port()),
        1,
        requests(2),
    );
    p.tls.insecure = true;
    match engine::run(&p) {
        Err(RunError::Unreachable { reason, .. }) => {
            assert!(reason.contains("did not answer in TLS"), "{reason}");
            assert!(reason.contains("use http://"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}
