//! --http3 against HTTP/3 servers no one here wrote: Debian's caddy (its access log is the
//! server's own count) and PyPI's hypercorn on aioquic. Exact counts in the closed and the open
//! model, -p streams, verified certificates and refused ones, mTLS, and bad input. Both servers
//! are required in CI (SPATE_REQUIRE_TOOLS=1); they bind loopback only.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::pki::Pki;
use crate::support::{Child, free_addr, have, spate, spate_json, test_python, usage_error};

/// A caddy serving "hi!" over HTTP/1.1, HTTP/2 and HTTP/3 on one loopback port with the test
/// PKI's certificate, logging each request as a JSON line.
pub(crate) struct Caddy {
    _child: Child,
    pub(crate) dir: PathBuf,
    pub(crate) addr: SocketAddr,
}

impl Caddy {
    /// `tls_extra`: more lines for caddy's `tls` block (mTLS).
    fn start(pki: &Pki, cert: &[u8], key: &[u8], tls_extra: &str) -> Caddy {
        let addr = free_addr();
        let dir = pki.dir.join(format!("caddy-{}", addr.port()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cert.pem"), cert).unwrap();
        std::fs::write(dir.join("key.pem"), key).unwrap();
        let d = dir.display();
        let config = format!(
            "{{\n\tadmin off\n\tauto_https off\n\tskip_install_trust\n\tservers {{\n\t\tprotocols h1 h2 h3\n\t\t{sni}\n\t}}\n}}\n\
             https://localhost:{port} {{\n\tbind 127.0.0.1\n\ttls {d}/cert.pem {d}/key.pem {{\n{tls_extra}\n\t}}\n\
             \trespond \"hi!\" 200\n\tlog {{\n\t\toutput file {d}/access.log\n\t}}\n}}\n",
            port = addr.port(),
            // Caddy 2.6 does not hand an HTTP/3 request's TLS state (its SNI) to the check
            // that a client-authenticated request's Host matches its SNI, and answers 421.
            sni = match tls_extra.is_empty() {
                true => "",
                false => "strict_sni_host insecure_off",
            },
        );
        Caddy::run(dir, addr, &config)
    }

    /// Caddy with `config` (a Caddyfile) kept in `dir`, listening on `addr` once this returns.
    pub(crate) fn run(dir: PathBuf, addr: SocketAddr, config: &str) -> Caddy {
        std::fs::write(dir.join("Caddyfile"), config).unwrap();
        let child = Command::new("caddy")
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(dir.join("Caddyfile"))
            .env("HOME", &dir)
            .env("XDG_DATA_HOME", &dir)
            .env("XDG_CONFIG_HOME", &dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let caddy = Caddy {
            _child: Child(child),
            dir,
            addr,
        };
        caddy.wait_listening();
        caddy
    }

    fn url(&self) -> String {
        format!("https://localhost:{}/", self.addr.port())
    }

    /// Waits until caddy's TCP port answers: its UDP listener starts beside it, and the runs
    /// below wait for it through --connect-timeout.
    fn wait_listening(&self) {
        let t = Instant::now();
        while std::net::TcpStream::connect(self.addr).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "caddy never listened"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Requests caddy logged, by protocol ("HTTP/3.0").
    fn logged(&self, proto: &str) -> usize {
        let log = std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default();
        log.lines()
            .filter(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v["request"]["proto"] == proto
            })
            .count()
    }

    /// Requests caddy logged, counted by `METHOD URI PROTO`.
    pub(crate) fn logged_by_request(&self) -> std::collections::BTreeMap<String, u64> {
        self.logged_in("access.log", false)
    }

    /// Requests caddy logged in its log `name`, counted by `METHOD URI PROTO` (and `STATUS`,
    /// if `status`).
    pub(crate) fn logged_in(
        &self,
        name: &str,
        status: bool,
    ) -> std::collections::BTreeMap<String, u64> {
        let log = std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
        let mut by = std::collections::BTreeMap::new();
        for l in log.lines() {
            let v: Value = serde_json::from_str(l).unwrap();
            let r = &v["request"];
            let mut key = format!(
                "{} {} {}",
                r["method"].as_str().unwrap(),
                r["uri"].as_str().unwrap(),
                r["proto"].as_str().unwrap()
            );
            if status {
                key = format!("{key} {}", v["status"]);
            }
            *by.entry(key).or_default() += 1;
        }
        by
    }
}

fn caddy_pki(tag: &str) -> Option<(Pki, Caddy)> {
    if !have("caddy") {
        return None;
    }
    let pki = Pki::new(tag);
    let caddy = Caddy::start(&pki, &pki.server_cert, &pki.server_key, "");
    Some((pki, caddy))
}

/// A run's JSON, which must have succeeded and must match the schema.
fn run_json(args: &[&str]) -> Value {
    let v = spate_json(args);
    crate::schema::validate(&v);
    v
}

/// The first run against a server that just started may wait for its UDP port; a generous
/// connect timeout covers that without a sleep.
const PATIENT: [&str; 2] = ["--connect-timeout", "10s"];

#[test]
fn caddy_logs_exactly_the_requests_of_a_count_run_over_streams() {
    let Some((pki, caddy)) = caddy_pki("h3-count") else {
        return;
    };
    let (ca, url) = (pki.path("ca.pem"), caddy.url());
    let html = pki.path("run.html");
    let mut args = vec![
        "--http3", "-n", "1000", "-c", "4", "-p", "4", "--cacert", &ca,
    ];
    args.extend(["--html", &html]);
    args.extend(PATIENT);
    args.push(&url);
    let v = run_json(&args);
    let page = std::fs::read_to_string(&html).unwrap();
    for row in [
        "HTTP/3 connections",
        "QUIC handshake p99",
        "QUIC packets lost",
    ] {
        assert!(page.contains(row), "{row} in the HTML page");
    }
    assert_eq!(v["config"]["protocol"], "HTTP/3");
    assert_eq!(v["config"]["streams"], 4);
    assert_eq!(v["requests"]["completed"], 1000);
    assert_eq!(v["requests"]["failed"], 0);
    assert_eq!(v["status_codes"][0]["count"], 1000, "{}", v["status_codes"]);
    let c = &v["connections"];
    assert_eq!(
        (c["http3"].as_u64(), c["http1"].as_u64()),
        (Some(4), Some(0))
    );
    assert_eq!(c["tls"]["count"], 4, "one QUIC handshake per connection");
    assert_eq!(c["connect"]["count"], 0, "no TCP connect");
    let q = &c["quic"];
    assert!(q["packets_sent"].as_u64().unwrap() > 0, "{q}");
    assert!(q["datagrams_received"].as_u64().unwrap() > 0, "{q}");
    assert!(
        v["totals"]["bytes_in"].as_u64().unwrap() > 1000 * 3,
        "{}",
        v["totals"]
    );
    assert_eq!(caddy.logged("HTTP/3.0"), 1000);
    assert_eq!(caddy.logged("HTTP/2.0") + caddy.logged("HTTP/1.1"), 0);
}

/// A request list over HTTP/3, then over HTTP/2 as ALPN chooses it: caddy logs each entry's
/// requests as often as the report counts them.
#[test]
fn a_request_list_reaches_caddy_exactly_over_http3_and_over_h2() {
    let Some((pki, caddy)) = caddy_pki("h3-list") else {
        return;
    };
    let ca = pki.path("ca.pem");
    let origin = caddy.url();
    let origin = origin.trim_end_matches('/');
    let urls = pki.path("urls.txt");
    std::fs::write(
        &urls,
        format!("{origin}/a\nPOST {origin}/b {{\"x\":1}}\n{origin}/c\n"),
    )
    .unwrap();
    let mut by_proto = Vec::new();
    for (protocol, flag, proto) in [
        ("HTTP/3", "--http3", "HTTP/3.0"),
        ("HTTP/2", "--http2", "HTTP/2.0"),
    ] {
        let mut args = vec![
            "--urls-from-file",
            &urls,
            flag,
            "-n",
            "600",
            "-c",
            "2",
            "-p",
            "4",
        ];
        args.extend(["--cacert", &ca]);
        args.extend(PATIENT);
        let v = run_json(&args);
        assert_eq!(v["config"]["protocol"], protocol);
        assert_eq!(v["requests"]["completed"], 600, "{}", v["requests"]);
        for e in v["per_url"].as_array().unwrap() {
            assert_eq!(e["completed"], 200, "{protocol}: {e}");
        }
        by_proto.push(proto);
    }
    let seen = caddy.logged_by_request();
    for proto in by_proto {
        for request in ["GET /a", "POST /b", "GET /c"] {
            assert_eq!(
                seen.get(&format!("{request} {proto}")),
                Some(&200),
                "{seen:?}"
            );
        }
    }
    assert_eq!(seen.values().sum::<u64>(), 1200, "{seen:?}");
}

/// wrk's Lua API over HTTP/3: `request()` makes each stream's request and `response()` hears
/// each response's status, fields (in any case) and body; caddy logs what was made.
#[test]
fn a_script_makes_and_hears_each_http3_request() {
    let Some((pki, caddy)) = caddy_pki("h3-script") else {
        return;
    };
    let ca = pki.path("ca.pem");
    let script = pki.path("h3.lua");
    std::fs::write(
        &script,
        r#"
threads = {}
setup = function(thread) table.insert(threads, thread) end
n = 0
heard = 0
request = function()
  n = n + 1
  if n % 2 == 0 then return wrk.format("POST", "/p/" .. (n % 4), nil, "body") end
  return wrk.format("GET", "/g")
end
response = function(status, headers, body)
  if status ~= 200 or body ~= "hi!" then error("status " .. status .. " body " .. body) end
  if headers["Server"] ~= "Caddy" then error("Server " .. tostring(headers["Server"])) end
  heard = heard + 1
end
done = function()
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("heard") end
  io.write("heard " .. total .. "\n")
end
"#,
    )
    .unwrap();
    let url = caddy.url();
    let mut args = vec![
        "--no-progress",
        "--http3",
        "-n",
        "400",
        "-c",
        "2",
        "-p",
        "4",
    ];
    args.extend(["--threads", "1", "--cacert", &ca, "-s", &script]);
    args.extend(PATIENT);
    args.push(&url);
    let out = spate(&args);
    crate::support::succeeded(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("heard 400\n"), "{stdout}");
    let seen = caddy.logged_by_request();
    let want: std::collections::BTreeMap<String, u64> = [
        ("GET /g HTTP/3.0", 200),
        ("POST /p/0 HTTP/3.0", 100),
        ("POST /p/2 HTTP/3.0", 100),
    ]
    .into_iter()
    .map(|(k, n)| (k.to_string(), n))
    .collect();
    assert_eq!(seen, want);
}

#[test]
fn caddy_logs_exactly_the_requests_of_an_open_model_run() {
    let Some((pki, caddy)) = caddy_pki("h3-open") else {
        return;
    };
    let (ca, url) = (pki.path("ca.pem"), caddy.url());
    let mut args = vec![
        "--http3", "-q", "300", "-z", "2s", "-c", "4", "-p", "2", "--cacert", &ca,
    ];
    args.extend(PATIENT);
    args.push(&url);
    let v = run_json(&args);
    let r = &v["requests"];
    assert_eq!(v["config"]["model"], "open");
    assert_eq!(r["failed"], 0, "{r}");
    let sent = r["attempted"].as_u64().unwrap();
    assert_eq!(r["completed"].as_u64(), Some(sent));
    assert!((595..=601).contains(&sent), "300/s for 2 s: {sent}");
    assert_eq!(caddy.logged("HTTP/3.0") as u64, sent);
    // QUIC's bytes reach the timeline every second, not only when the connections close.
    let seconds = v["timeline"].as_array().unwrap();
    assert_eq!(seconds.len(), 2, "{seconds:?}");
    for s in seconds {
        assert!(s["bytes_in"].as_u64().unwrap() > 150 * 3, "{s}");
    }
}

#[test]
fn certificates_are_verified_over_quic_and_bad_ones_refused() {
    let Some((pki, caddy)) = caddy_pki("h3-certs") else {
        return;
    };
    let url = caddy.url();
    // No --cacert: the test CA is unknown.
    let out = spate(&[
        "--http3",
        "-n",
        "4",
        "-c",
        "1",
        "--connect-timeout",
        "10s",
        &url,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not signed by a CA spate trusts"), "{err}");
    // -k: the same server, unverified, says so.
    let out = spate(&["--http3", "-k", "-n", "4", "-c", "1", &url]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("HTTP/3 over QUIC (certificate NOT verified"),
    );
    assert_eq!(caddy.logged("HTTP/3.0"), 4, "the refused run sent nothing");
    // A certificate for another name.
    let other = Caddy::start(&pki, &pki.wrong_name_cert, &pki.wrong_name_key, "");
    let ca = pki.path("ca.pem");
    let other_url = other.url();
    let out = spate(&[
        "--http3",
        "-n",
        "4",
        "-c",
        "1",
        "--cacert",
        &ca,
        "--connect-timeout",
        "10s",
        &other_url,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not valid for localhost"), "{err}");
    assert_eq!(other.logged("HTTP/3.0"), 0);
}

#[test]
fn mtls_over_quic_sends_the_client_certificate() {
    if !have("caddy") {
        return;
    }
    let pki = Pki::new("h3-mtls");
    let ca = pki.path("ca.pem");
    let extra = format!(
        "\t\tclient_auth {{\n\t\t\tmode require_and_verify\n\t\t\ttrusted_ca_cert_file {ca}\n\t\t}}"
    );
    let caddy = Caddy::start(&pki, &pki.server_cert, &pki.server_key, &extra);
    let url = caddy.url();
    let (cert, key) = (pki.path("client.pem"), pki.path("client-key.pem"));
    let mut args = vec!["--http3", "-n", "20", "-c", "2", "--cacert", &ca];
    args.extend(["--cert", &cert, "--key", &key]);
    args.extend(PATIENT);
    args.push(&url);
    let v = run_json(&args);
    assert_eq!(v["requests"]["completed"], 20);
    assert_eq!(caddy.logged("HTTP/3.0"), 20);
    // Without the client certificate the server ends the handshake with an alert.
    let v = crate::support::failed_json(&["--http3", "-n", "4", "-c", "1", "--cacert", &ca, &url]);
    // TLS 1.3 lets the client finish first: the alert ends either the handshake (no connection
    // opened) or the connection before its first answer.
    let said = match v["errors"][0]["class"].as_str() {
        Some(class) => {
            assert_eq!(class, "tls", "{}", v["errors"]);
            assert_eq!(v["requests"]["failed"], 4);
            v["errors"][0]["example"].to_string()
        }
        None => v["error"].to_string(),
    };
    assert!(
        said.contains("refused spate's client certificate"),
        "{said}"
    );
    assert_eq!(caddy.logged("HTTP/3.0"), 20);
}

/// An ASGI app for hypercorn that answers "ok" and appends each request's HTTP version to
/// $H3_LOG.
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

/// PyPI's hypercorn on aioquic with the test PKI's certificate: TCP on `tcp`, QUIC on `udp`
/// (which it advertises with Alt-Svc), each request's HTTP version logged.
pub struct Hypercorn {
    _child: Child,
    log: PathBuf,
}

impl Hypercorn {
    /// `None` when target/test-venv has no hypercorn (a skip, or a failure in CI).
    pub fn start(pki: &Pki, tcp: SocketAddr, udp: SocketAddr) -> Option<Hypercorn> {
        let python = test_python("hypercorn")?;
        let dir = &pki.dir;
        std::fs::write(dir.join("h3app.py"), APP).unwrap();
        std::fs::write(dir.join("cert.pem"), &pki.server_cert).unwrap();
        std::fs::write(dir.join("key.pem"), &pki.server_key).unwrap();
        let log = dir.join("requests.log");
        let child = Command::new(python)
            .args(["-m", "hypercorn", "--bind", &tcp.to_string()])
            .args(["--quic-bind", &udp.to_string()])
            .arg("--certfile")
            .arg(dir.join("cert.pem"))
            .arg("--keyfile")
            .arg(dir.join("key.pem"))
            .arg("h3app:app")
            .current_dir(dir)
            .env("H3_LOG", &log)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
            .spawn()
            .unwrap();
        let server = Hypercorn {
            _child: Child(child),
            log,
        };
        let t = Instant::now();
        while std::net::TcpStream::connect(tcp).is_err() {
            let err = std::fs::read_to_string(dir.join("stderr")).unwrap_or_default();
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "hypercorn never listened: {err}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }

    /// The HTTP versions of the requests it answered, in order.
    pub fn versions(&self) -> Vec<String> {
        let logged = std::fs::read_to_string(&self.log).unwrap_or_default();
        logged.lines().map(str::to_owned).collect()
    }
}

#[test]
fn hypercorn_on_aioquic_counts_every_request() {
    let pki = Pki::new("h3-hypercorn");
    let addr = free_addr();
    let Some(server) = Hypercorn::start(&pki, addr, addr) else {
        return;
    };
    let (ca, url) = (
        pki.path("ca.pem"),
        format!("https://localhost:{}/", addr.port()),
    );
    let mut args = vec![
        "--http3", "-n", "300", "-c", "2", "-p", "3", "--cacert", &ca,
    ];
    args.extend(PATIENT);
    args.push(&url);
    let v = run_json(&args);
    assert_eq!(v["requests"]["completed"], 300);
    assert_eq!(v["requests"]["failed"], 0);
    let versions = server.versions();
    assert_eq!(versions.len(), 300);
    assert!(versions.iter().all(|v| v == "3"), "{versions:?}");
}

#[test]
fn bad_http3_input_is_one_line_and_exit_2() {
    for (args, says) in [
        (
            &["--http3", "http://127.0.0.1:1/"][..],
            "needs an https:// URL",
        ),
        (
            &["--http3", "--http2", "https://127.0.0.1:1/"][..],
            "cannot be used with",
        ),
        (
            &["--http-version", "3", "--http1.1", "https://h/"][..],
            "cannot be used with",
        ),
        (
            &["--http-version", "4", "https://h/"][..],
            "not an HTTP version",
        ),
        (
            &["--http3", "--proxy", "http://127.0.0.1:1", "https://h/"][..],
            "--http3 cannot be combined with --proxy",
        ),
        (
            &["--http3", "--unix-socket", "/tmp/x.sock", "https://h/"][..],
            "--unix-socket",
        ),
        (
            &["--http3", "--h2-max-frame", "20000", "https://h/"][..],
            "--h2-max-frame",
        ),
    ] {
        let err = usage_error(args);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn an_unreachable_udp_port_is_one_line_and_exit_1() {
    let addr = free_addr();
    let url = format!("https://127.0.0.1:{}/", addr.port());
    let out = spate(&[
        "--http3",
        "-k",
        "-n",
        "2",
        "-c",
        "1",
        "--connect-timeout",
        "300ms",
        &url,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("QUIC handshake did not finish"), "{err}");
    assert!(err.contains("UDP port"), "{err}");
}

#[test]
fn rpc_slo_shards_and_merge_work_over_http3() {
    let Some((pki, caddy)) = caddy_pki("h3-more") else {
        return;
    };
    let (ca, url) = (pki.path("ca.pem"), caddy.url());
    // --rpc 10: each connection carries 10 requests, then the next opens inside a request.
    let mut args = vec![
        "--http3", "-n", "100", "-c", "2", "--rpc", "10", "--cacert", &ca,
    ];
    args.extend(["--slo", "p99=10s,errors=0%"]);
    args.extend(PATIENT);
    args.push(&url);
    let v = run_json(&args);
    assert_eq!(v["requests"]["completed"], 100);
    let c = &v["connections"];
    assert_eq!(
        (c["established"].as_u64(), c["reconnects"].as_u64()),
        (Some(2), Some(8))
    );
    assert_eq!(c["requests_per_connection"]["max"], 10, "{c}");
    let verdicts = v["thresholds"].as_array().unwrap();
    assert_eq!(verdicts.len(), 2);
    assert!(verdicts.iter().all(|t| t["pass"] == true), "{verdicts:?}");
    assert_eq!(caddy.logged("HTTP/3.0"), 100);
    // Two shards of one job, merged: the server saw exactly the job's requests.
    let dir = pki.dir.join("shards");
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for i in 0..2 {
        let shard = format!("{i}/2");
        let file = dir.join(format!("{i}.json")).to_string_lossy().into_owned();
        let out = spate(&[
            "--http3",
            "--shard",
            &shard,
            "-n",
            "301",
            "-c",
            "4",
            "-p",
            "2",
            "--cacert",
            &ca,
            "--no-progress",
            "--format",
            "json",
            "--save",
            &file,
            &url,
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        files.push(file);
    }
    let mut merge = vec!["merge", "--format", "json"];
    merge.extend(files.iter().map(String::as_str));
    let out = spate(&merge);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(m["requests"]["completed"], 301, "{}", m["requests"]);
    assert_eq!(caddy.logged("HTTP/3.0"), 100 + 301);
}

#[test]
fn compare_puts_http2_and_http3_of_one_server_side_by_side() {
    let Some((pki, caddy)) = caddy_pki("h3-compare") else {
        return;
    };
    let (ca, url) = (pki.path("ca.pem"), caddy.url());
    let targets = pki.dir.join("targets.txt");
    std::fs::write(&targets, format!("h2={url} --http2\nh3={url} --http3\n")).unwrap();
    let save = pki.dir.join("rounds");
    std::fs::create_dir_all(&save).unwrap();
    let out = spate(&[
        "compare",
        "--rounds",
        "3",
        "-n",
        "100",
        "-c",
        "2",
        "-p",
        "2",
        "--cacert",
        &ca,
        "--connect-timeout",
        "10s",
        "--format",
        "json",
        "--save-dir",
        &save.to_string_lossy(),
        "--targets",
        &targets.to_string_lossy(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (name, protocol) in [("h2", "HTTP/2"), ("h3", "HTTP/3")] {
        for round in 1..=3 {
            let file = save.join(format!("{name}-{round}.json"));
            let v: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
            assert_eq!(v["config"]["protocol"], protocol, "{}", file.display());
            assert_eq!(v["requests"]["completed"], 100);
        }
    }
    assert_eq!(caddy.logged("HTTP/3.0"), 300);
    assert_eq!(caddy.logged("HTTP/2.0"), 300);
}

#[test]
fn verbose_shows_the_http3_exchange_with_secrets_masked() {
    let Some((pki, caddy)) = caddy_pki("h3-verbose") else {
        return;
    };
    let (ca, url) = (pki.path("ca.pem"), caddy.url());
    let out = spate(&[
        "-v",
        "--http3",
        "-n",
        "2",
        "-c",
        "1",
        "--cacert",
        &ca,
        "--connect-timeout",
        "10s",
        "-H",
        "Authorization: Bearer sekrit",
        &url,
    ]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("* QUIC connection to 127.0.0.1:"), "{err}");
    assert!(err.contains("> :authority: localhost:"), "{err}");
    assert!(err.contains("> authorization: ***"), "{err}");
    assert!(!err.contains("sekrit"), "{err}");
    assert!(err.contains("< :status: 200"), "{err}");
    assert!(err.contains("< hi!"), "{err}");
    // The shown exchange is not part of the run: caddy saw it and the run's two.
    assert_eq!(caddy.logged("HTTP/3.0"), 3);
}

#[test]
fn a_closed_run_keeps_each_stream_busy_once_not_p_times_over() {
    let Some((pki, caddy)) = caddy_pki("h3-busy") else {
        return;
    };
    let (ca, url) = (pki.path("ca.pem"), caddy.url());
    let mut args = vec!["--http3", "-z", "2s", "-c", "2", "-p", "4", "--cacert", &ca];
    args.extend(PATIENT);
    args.push(&url);
    let v = run_json(&args);
    // Little's law over the 2 x 4 streams: each is always busy in a closed run.
    let busy = v["generator"]["busy_connections_ratio"].as_f64().unwrap();
    assert!((0.8..=1.05).contains(&busy), "{busy}");
    assert!(caddy.logged("HTTP/3.0") >= 1000);
}

#[test]
fn the_built_in_server_answers_http3_beside_http2_on_one_port() {
    let pki = Pki::new("h3-builtin");
    let server = spate::serve::Server::start(&spate::serve::ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        tls: Some(spate::serve::ServeTls {
            cert: pki.server_cert.clone(),
            key: pki.server_key.clone(),
            client_ca: None,
            http1_only: false,
        }),
        http3: true,
        ..spate::serve::ServeConfig::default()
    })
    .unwrap();
    let ca = pki.path("ca.pem");
    let url = format!("https://localhost:{}/", server.addr().port());
    let v = run_json(&[
        "--http3", "-n", "500", "-c", "2", "-p", "4", "--cacert", &ca, &url,
    ]);
    assert_eq!(v["config"]["protocol"], "HTTP/3");
    assert_eq!(v["requests"]["completed"], 500);
    assert_eq!(v["totals"]["body_bytes"], 500 * 12);
    let v = run_json(&["-n", "100", "-c", "2", "--cacert", &ca, &url]);
    assert_eq!(v["config"]["protocol"], "HTTP/2");
    assert_eq!(server.requests(), 600);
    // Its TCP answers point to its HTTP/3, as a CDN's do: --alt-svc follows them.
    let v = run_json(&["--alt-svc", "-n", "50", "-c", "1", "--cacert", &ca, &url]);
    assert_eq!(v["config"]["protocol"], "HTTP/3");
    let alt = format!("h3=\":{}\"", server.addr().port());
    assert_eq!(v["config"]["alt_svc"], alt.as_str());
    assert_eq!(server.requests(), 600 + 1 + 50);
    assert!(usage_error(&["serve", "--http3"]).contains("--tls-cert"));
}

/// Caddy with a certificate of its own issuer (`tls internal`), which it picks by the name the
/// client sends.
fn caddy_internal(pki: &Pki) -> Caddy {
    let addr = free_addr();
    let dir = pki.dir.join(format!("caddy-internal-{}", addr.port()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = format!(
        "{{\n\tadmin off\n\tskip_install_trust\n\tservers {{\n\t\tprotocols h1 h2 h3\n\t}}\n}}\n\
         https://localhost:{} {{\n\tbind 127.0.0.1\n\ttls internal\n\trespond \"hi!\" 200\n}}\n",
        addr.port()
    );
    Caddy::run(dir, addr, &config)
}

/// A URL by IP sends no server name, and caddy, which picks its certificate by name, ends the
/// handshake (over QUIC and over TCP alike). The line says why, and how to give the name.
#[test]
fn caddy_by_ip_is_refused_with_the_reason_and_the_way_round() {
    if !have("caddy") {
        return;
    }
    let pki = Pki::new("h3-by-ip");
    let caddy = caddy_internal(&pki);
    let port = caddy.addr.port();
    let by_ip = format!("https://127.0.0.1:{port}/");
    for h3 in [true, false] {
        let mut args = vec!["-k", "-n", "5", "-c", "1"];
        if h3 {
            args.push("--http3");
        }
        args.extend(PATIENT);
        args.push(&by_ip);
        let out = spate(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "h3 {h3}: {err}");
        assert!(
            err.contains("the URL's host is an IP address (127.0.0.1), so no server name was sent"),
            "h3 {h3}: {err}"
        );
    }
    // The way round it works: the name in the URL, the address given with --connect-to.
    let connect_to = format!("localhost:{port}:127.0.0.1:{port}");
    let url = format!("https://localhost:{port}/");
    let mut args = vec!["--http3", "-k", "-n", "5", "-c", "1"];
    args.extend(["--connect-to", &connect_to]);
    args.extend(PATIENT);
    args.push(&url);
    let v = run_json(&args);
    assert_eq!(v["requests"]["successful"], 5);
}
