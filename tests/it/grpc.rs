//! `spate grpc` against PyPI's grpcio (tests/it/servers/grpc/server.py, kv.proto compiled at
//! its start): the server executes exactly the calls spate counts, over several connections and
//! streams; a status other than OK is a failure of its code's class with the server's message;
//! a server-streaming call succeeds with its messages, each timed as a stream's event, and
//! --max-events ends a long one as a success; metadata and the deadline reach the
//! server; calls over TLS speak h2 by ALPN; and what the schema does not have is one line,
//! exit 2, before anything is sent.
//! grpcio is required in CI (SPATE_REQUIRE_TOOLS); elsewhere the tests say they were skipped.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::{Child, spate, test_python};

/// The grpcio server, and the log of the calls it executed.
struct Server {
    _child: Child,
    url: String,
    log: PathBuf,
}

impl Server {
    fn start(tag: &str) -> Option<Server> {
        Server::start_with(tag, None)
    }

    /// As `start`, over TLS with `tls`'s server certificate and key (PEM files) when given.
    fn start_with(tag: &str, tls: Option<(&str, &str)>) -> Option<Server> {
        Server::spawn(tag, tls, &[])
    }

    /// As `start_with`, with `env` set for the server (its switches: SPATE_TEST_NO_REFLECTION,
    /// SPATE_TEST_GZIP).
    fn spawn(tag: &str, tls: Option<(&str, &str)>, env: &[(&str, &str)]) -> Option<Server> {
        let python = test_python("grpc_tools")?;
        let log = std::env::temp_dir().join(format!("spate-grpc-{tag}-{}.log", std::process::id()));
        let port_file = log.with_extension("log.port");
        let _ = (std::fs::remove_file(&log), std::fs::remove_file(&port_file));
        let mut cmd = std::process::Command::new(python);
        cmd.args([
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/it/servers/grpc/server.py"
            ),
            log.to_str().unwrap(),
        ]);
        if let Some((cert, key)) = tls {
            cmd.args([cert, key]);
        }
        cmd.envs(env.iter().copied());
        let child = Child(
            cmd.stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap(),
        );
        // The server takes a port of its own and says which once it listens.
        let t = std::time::Instant::now();
        let port: u16 = loop {
            if let Ok(p) = std::fs::read_to_string(&port_file) {
                break p.trim().parse().unwrap();
            }
            assert!(
                t.elapsed() < std::time::Duration::from_secs(30),
                "the gRPC server never listened"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let _ = std::fs::remove_file(&port_file);
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let scheme = if tls.is_some() { "https" } else { "http" };
        Some(Server {
            _child: child,
            url: format!("{scheme}://{addr}"),
            log,
        })
    }

    /// The calls executed: (method, key, tenant, had a deadline).
    fn calls(&self) -> Vec<(String, String, String, bool)> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                (f[0].into(), f[1].into(), f[2].into(), f[3] == "1")
            })
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.log);
    }
}

const PROTO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/it/servers/grpc/kv.proto"
);
const IMPORTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/servers/grpc/imports");

fn grpc_args<'a>(call: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["grpc", "--proto", PROTO, "-i", IMPORTS, "--call", call];
    args.extend_from_slice(extra);
    args
}

/// `spate grpc` with `args` (after `grpc`), its JSON result; the run must succeed.
fn grpc_json(args: &[&str]) -> Value {
    let all: Vec<&str> = [
        &args[..1],
        &["--no-progress", "--format", "json"][..],
        &args[1..],
    ]
    .concat();
    let out = spate(&all);
    crate::support::succeeded(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_server_executes_exactly_the_calls_spate_counts() {
    let Some(server) = Server::start("exact") else {
        return;
    };
    let mut args = grpc_args(
        "kv.v1.Store/Get",
        &["-d", r#"{"key":"k","page":{"size":3}}"#],
    );
    args.extend([
        "-n",
        "300",
        "-c",
        "3",
        "-p",
        "2",
        "-m",
        "tenant=acme",
        "--deadline",
        "5s",
    ]);
    args.push(&server.url);
    let doc = grpc_json(&args);
    crate::schema::validate(&doc);
    assert_eq!(doc["requests"]["completed"], 300, "{}", doc["requests"]);
    assert_eq!(doc["requests"]["successful"], 300);
    assert_eq!(doc["config"]["protocol"], "HTTP/2 (h2c)");
    assert_eq!(doc["connections"]["http2"], 3);
    let g = &doc["grpc"];
    assert_eq!(g["call"], "kv.v1.Store/Get");
    assert_eq!(
        g["statuses"],
        serde_json::json!([{"code": 0, "name": "OK", "count": 300, "first_message": null}])
    );
    let calls = server.calls();
    assert_eq!(
        calls.len(),
        300,
        "the server executed every call spate counted"
    );
    assert!(
        calls
            .iter()
            .all(|(m, k, t, d)| m == "Get" && k == "k" && t == "acme" && *d),
        "the message, the metadata and the deadline reached the server: {:?}",
        &calls[0]
    );
}

#[test]
fn a_status_other_than_ok_is_a_failure_of_its_codes_class() {
    let Some(server) = Server::start("status") else {
        return;
    };
    for (key, class, message) in [
        (
            "missing",
            "grpc_not_found",
            "NOT_FOUND: no such key: missing",
        ),
        ("down", "grpc_unavailable", "UNAVAILABLE: the store is down"),
    ] {
        let data = format!(r#"{{"key":"{key}"}}"#);
        let mut args = grpc_args("kv.v1.Store/Get", &["--format", "json", "-d", &data]);
        args.extend(["--no-progress", "-n", "40", "-c", "2", &server.url]);
        let out = spate(&args);
        assert_eq!(out.status.code(), Some(1), "no call succeeded");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        crate::schema::validate(&doc);
        let r = &doc["requests"];
        assert_eq!(
            (r["completed"].as_u64(), r["failed"].as_u64()),
            (Some(0), Some(40))
        );
        let errors = doc["errors"].as_array().unwrap();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0]["class"], class);
        assert_eq!(errors[0]["count"], 40);
        assert_eq!(errors[0]["example"], message);
        // The status table, as ghz's: OK, then the code with its first message.
        let statuses = doc["grpc"]["statuses"].as_array().unwrap();
        assert_eq!(statuses.len(), 2, "{statuses:?}");
        assert_eq!(statuses[0]["name"], "OK");
        assert_eq!(statuses[0]["count"], 0);
        assert_eq!(
            statuses[1]["name"],
            class["grpc_".len()..].to_ascii_uppercase()
        );
        assert_eq!(statuses[1]["count"], 40);
        assert_eq!(
            statuses[1]["first_message"],
            message.split_once(": ").unwrap().1
        );
    }
    // And in the text report.
    let mut args = grpc_args(
        "kv.v1.Store/Get",
        &["-d", r#"{"key":"missing"}"#, "-n", "5"],
    );
    args.extend(["--no-progress", &server.url]);
    let text = String::from_utf8_lossy(&spate(&args).stdout).into_owned();
    assert!(
        text.contains(
            "gRPC status (kv.v1.Store/Get)\n  OK                            0\n  NOT_FOUND                     5  (first: no such key: missing)\n"
        ),
        "{text}"
    );
    assert_eq!(server.calls().len(), 85);
}

#[test]
fn a_server_streaming_call_succeeds_with_its_messages() {
    let Some(server) = Server::start("stream") else {
        return;
    };
    // The message from a file (-D), as from -d.
    let file = std::env::temp_dir().join(format!("spate-grpc-watch-{}.json", std::process::id()));
    std::fs::write(&file, r#"{"key":"w","count":5}"#).unwrap();
    let mut args = grpc_args("kv.v1.Store/Watch", &["-D", file.to_str().unwrap()]);
    args.extend(["-n", "30", "-c", "2"]);
    args.push(&server.url);
    let doc = grpc_json(&args);
    assert_eq!(doc["requests"]["successful"], 30, "{}", doc["requests"]);
    let _ = std::fs::remove_file(&file);
    let calls = server.calls();
    assert_eq!(calls.len(), 30);
    assert!(calls.iter().all(|(m, k, _, _)| m == "Watch" && k == "w"));
    // Five items of 6 bytes, framed: 55 bytes of body each.
    assert_eq!(
        doc["totals"]["body_bytes"].as_u64().map(|b| b / 30),
        Some(55),
        "{}",
        doc["totals"]
    );
    // Each message is a stream's event: timed to the first, and between them.
    let st = &doc["streaming"];
    assert_eq!(st["mode"], "grpc", "{st}");
    assert_eq!(
        (
            &st["responses"],
            &st["events"],
            &st["max_events_per_response"]
        ),
        (&30.into(), &150.into(), &5.into()),
        "{st}"
    );
    assert_eq!(st["events_per_response"], 5.0);
    assert_eq!(st["first_event"]["count"], 30, "{st}");
    assert_eq!(st["gap"]["count"], 120, "four gaps a call: {st}");
    assert_eq!(st["ends"]["server"], 30);
    assert!(
        doc["insight"].as_array().is_some_and(|i| i.iter().any(|s| s
            .as_str()
            .is_some_and(|s| s.starts_with("Server-streaming calls: the first message")))),
        "{}",
        doc["insight"]
    );
    crate::schema::validate(&doc);
}

#[test]
fn a_long_stream_ends_at_max_events_as_a_success() {
    let Some(server) = Server::start("cap") else {
        return;
    };
    let mut args = grpc_args(
        "kv.v1.Store/Watch",
        &["-d", r#"{"key":"w","count":100000}"#, "--max-events", "3"],
    );
    args.extend(["-n", "12", "-c", "2", "-p", "2"]);
    args.push(&server.url);
    let doc = grpc_json(&args);
    assert_eq!(doc["requests"]["successful"], 12, "{}", doc["requests"]);
    let st = &doc["streaming"];
    assert_eq!(
        (
            &st["events"],
            &st["ends"]["max_events"],
            &st["ends"]["server"]
        ),
        (&36.into(), &12.into(), &0.into()),
        "{st}"
    );
    assert_eq!(server.calls().len(), 12);
    // The text report names them as messages.
    let mut args = grpc_args(
        "kv.v1.Store/Watch",
        &["-d", r#"{"key":"w","count":2}"#, "-n", "4", "--no-progress"],
    );
    args.push(&server.url);
    let out = spate(&args);
    crate::support::succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "Streaming (gRPC messages)",
        "Messages        8, 2.0 per stream",
        "first message",
        "gap between messages",
    ] {
        assert!(text.contains(line), "{line} in:\n{text}");
    }
    // A unary call answers one message: the stream's caps are refused.
    let mut args = grpc_args("kv.v1.Store/Get", &["--max-events", "2"]);
    args.push(&server.url);
    let out = spate(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("answers one message"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn what_the_schema_does_not_have_is_one_line_and_exit_2() {
    for (call, extra, says) in [
        (
            "kv.v1.Store/Delete",
            &[][..],
            "kv.v1.Store has no method Delete (it has: Get, Watch, Put, Chat)",
        ),
        ("kv.v1.Nope/Get", &[][..], "no service kv.v1.Nope"),
        (
            "kv.v1.Store/Get",
            &["-d", r#"{"ky":"k"}"#][..],
            "unrecognized field name 'ky'",
        ),
        (
            "kv.v1.Store/Get",
            &["-d", r#"{"page":{"size":"x"}}"#][..],
            "(at page.size)",
        ),
        (
            "kv.v1.Store/Get",
            &["-m", "grpc-timeout=1S"][..],
            "reserves",
        ),
        ("kv.v1.Store/Get", &["--http3"][..], "--http3"),
        (
            "kv.v1.Store/Get",
            &["-d", r#"[{"key":"a"},{"ky":"b"}]"#][..],
            "-d: message 2 of the array: not a kv.v1.GetRequest message",
        ),
        ("kv.v1.Store/Get", &["-d", "[]"][..], "-d: an empty array"),
        ("kv.v1.Store/Get", &["--stream", "sse"][..], "--stream"),
        (
            "kv.v1.Store/Get",
            &["--save", PROTO][..],
            "is the file --proto reads",
        ),
    ] {
        let mut args = grpc_args(call, extra);
        args.push("http://127.0.0.1:9");
        let out = spate(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{call} {extra:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{call} {extra:?}: {err}");
    }
    // ghz's HOST:PORT: what to give instead.
    let out = spate(&grpc_args("kv.v1.Store/Get", &["127.0.0.1:9"]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "give http://127.0.0.1:9 (HTTP/2 without TLS, ghz's --insecure) or https://127.0.0.1:9"
        ),
        "{err}"
    );
    // Without --proto the server is asked, and one that cannot be reached says so.
    let out = spate(&["grpc", "--call", "kv.v1.Store/Get", "http://127.0.0.1:9"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("(reflection): cannot connect to 127.0.0.1:9"),
        "{err}"
    );
    let out = spate(&[
        "grpc",
        "--proto",
        PROTO,
        "--call",
        "kv.v1.Store/Get",
        "http://127.0.0.1:9",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("common.proto"),
        "an import not found names it: {err}"
    );
}

/// Over TLS the connection offers ALPN h2 alone, and the calls are counted as over h2c.
#[test]
fn calls_over_tls_speak_h2_by_alpn() {
    let pki = crate::pki::Pki::new("grpc");
    std::fs::write(pki.dir.join("server.pem"), &pki.server_cert).unwrap();
    std::fs::write(pki.dir.join("server-key.pem"), &pki.server_key).unwrap();
    let (cert, key) = (pki.path("server.pem"), pki.path("server-key.pem"));
    let Some(server) = Server::start_with("tls", Some((&cert, &key))) else {
        return;
    };
    let ca = pki.path("ca.pem");
    let mut args = grpc_args(
        "kv.v1.Store/Get",
        &["-d", r#"{"key":"t"}"#, "--cacert", &ca],
    );
    args.extend(["-n", "60", "-c", "2", "-p", "3", &server.url]);
    let doc = grpc_json(&args);
    assert_eq!(doc["requests"]["successful"], 60, "{}", doc["requests"]);
    assert_eq!(doc["connections"]["http2"], 2);
    assert!(
        doc["config"]["protocol"]
            .as_str()
            .unwrap()
            .starts_with("HTTP/2")
    );
    assert_eq!(server.calls().len(), 60);
}

/// Without --proto the server's reflection service gives the schema: --list prints its
/// services and methods, and a run calls as with the files. A server without reflection, or a
/// method it does not have, is one line.
#[test]
fn reflection_gives_the_schema_without_a_proto() {
    let Some(server) = Server::start("reflect") else {
        return;
    };
    let out = spate(&["grpc", "--list", &server.url]);
    crate::support::succeeded(&out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "kv.v1.Store\n  kv.v1.Store/Get\n  kv.v1.Store/Watch\n  kv.v1.Store/Put\n  kv.v1.Store/Chat\n"
    );
    let doc = grpc_json(&[
        "grpc",
        "--call",
        "kv.v1.Store/Get",
        "-d",
        r#"{"key":"r","page":{"size":2}}"#,
        "-m",
        "tenant=refl",
        "-n",
        "40",
        "-c",
        "2",
        &server.url,
    ]);
    assert_eq!(doc["requests"]["successful"], 40, "{}", doc["requests"]);
    let calls = server.calls();
    assert_eq!(
        calls.len(),
        40,
        "reflection itself is no call of the store's"
    );
    assert!(
        calls
            .iter()
            .all(|(m, k, t, _)| m == "Get" && k == "r" && t == "refl")
    );
    let out = spate(&["grpc", "--call", "kv.v1.Store/Delete", &server.url]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("kv.v1.Store has no method Delete"));

    let Some(silent) = Server::spawn("no-reflect", None, &[("SPATE_TEST_NO_REFLECTION", "1")])
    else {
        return;
    };
    let out = spate(&["grpc", "--list", &silent.url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("no reflection service") && err.contains("--proto"),
        "{err}"
    );
}

#[test]
fn verbose_shows_the_call_and_its_answer_as_json_and_dry_run_sends_nothing() {
    let Some(server) = Server::start("verbose") else {
        return;
    };
    let text = |out: &std::process::Output| String::from_utf8_lossy(&out.stderr).into_owned();
    let mut args = grpc_args(
        "kv.v1.Store/Get",
        &[
            "-d",
            r#"{"key":"k","page":{"size":3}}"#,
            "-m",
            "tenant=acme",
            "-m",
            "authorization=Bearer sesame",
            "-v",
            "-n",
            "4",
            "--no-progress",
        ],
    );
    args.push(&server.url);
    let out = spate(&args);
    crate::support::succeeded(&out);
    let shown = text(&out);
    for line in [
        "* gRPC call kv.v1.Store/Get",
        "> :path: /kv.v1.Store/Get",
        "> content-type: application/grpc",
        "> tenant: acme",
        "> authorization: ***",
        r#"> message (7 bytes): {"key":"k","page":{"size":3}}"#,
        "< :status: 200",
        r#"< message 1 (6 bytes): {"key":"k","value":"dg=="}"#,
        "* trailers:",
        "< grpc-status: 0",
        "* status OK: the run counts this call a success",
    ] {
        assert!(shown.lines().any(|l| l == line), "{line} in:\n{shown}");
    }
    assert!(!shown.contains("sesame"), "{shown}");
    // The call -v makes is its own, not one of the run's four.
    assert_eq!(server.calls().len(), 5);

    // A status other than OK (here in a Trailers-Only head), as the run counts it.
    let mut args = grpc_args("kv.v1.Store/Get", &["-d", r#"{"key":"missing"}"#, "-v"]);
    args.extend(["-n", "1", "--no-progress", &server.url]);
    let shown = text(&spate(&args));
    assert!(
        shown.lines().any(|l| l
            == "* status NOT_FOUND (no such key: missing): the run counts this call a failure (grpc_not_found)"),
        "{shown}"
    );

    // A long stream shows its first ten messages, then is cancelled.
    let mut args = grpc_args(
        "kv.v1.Store/Watch",
        &["-d", r#"{"key":"w","count":100000}"#],
    );
    args.extend([
        "-v",
        "-n",
        "1",
        "--max-events",
        "1",
        "--no-progress",
        &server.url,
    ]);
    let shown = text(&spate(&args));
    assert!(shown.contains("< message 10 (6 bytes)"), "{shown}");
    assert!(!shown.contains("< message 11 "), "{shown}");
    assert!(
        shown.contains("the stream was cancelled after them"),
        "{shown}"
    );

    // --dry-run: the call as it would go, and nothing sent.
    let before = server.calls().len();
    let mut args = grpc_args("kv.v1.Store/Get", &["-d", r#"{"key":"k"}"#, "--dry-run"]);
    args.push(&server.url);
    let out = spate(&args);
    crate::support::succeeded(&out);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.starts_with("spate --dry-run: the command line is valid; nothing was sent\n"));
    assert!(printed.contains("> :path: /kv.v1.Store/Get\n"), "{printed}");
    assert!(
        printed.contains(r#"> message (3 bytes): {"key":"k"}"#),
        "{printed}"
    );
    assert_eq!(server.calls().len(), before);
}

#[test]
fn a_list_of_messages_is_sent_in_turn_and_counted_by_message() {
    let Some(server) = Server::start("list") else {
        return;
    };
    // JSON lines, one of them written over several lines, and a key the server refuses.
    let file = std::env::temp_dir().join(format!("spate-grpc-list-{}.ndjson", std::process::id()));
    std::fs::write(
        &file,
        "{\"key\":\"a\"}\n{\n  \"key\": \"b\"\n}\n\n{\"key\":\"missing\"}\n",
    )
    .unwrap();
    let mut args = grpc_args("kv.v1.Store/Get", &["-D", file.to_str().unwrap()]);
    args.extend(["-n", "60", "-c", "3", "-p", "2", &server.url]);
    let all: Vec<&str> = [
        &args[..1],
        &["--no-progress", "--format", "json"][..],
        &args[1..],
    ]
    .concat();
    let out = spate(&all);
    let _ = std::fs::remove_file(&file);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The server executed each message exactly as often as spate counted it (the threads
    // take turns through the list each from its start, so the shares differ by a call or so).
    let calls = server.calls();
    let of = |key: &str| calls.iter().filter(|(_, k, _, _)| k == key).count() as u64;
    let rows = doc["per_url"].as_array().unwrap();
    let row = |i: usize| {
        (
            rows[i]["request"].as_str().unwrap().to_owned(),
            rows[i]["completed"].as_u64().unwrap(),
            rows[i]["failed"].as_u64().unwrap(),
        )
    };
    assert_eq!(row(0), (r#"#1 {"key":"a"}"#.into(), of("a"), 0));
    assert_eq!(row(1), (r#"#2 {"key":"b"}"#.into(), of("b"), 0));
    assert_eq!(row(2), (r#"#3 {"key":"missing"}"#.into(), 0, of("missing")));
    assert_eq!(calls.len(), 60);
    assert!(
        [of("a"), of("b"), of("missing")]
            .iter()
            .all(|&n| (18..=22).contains(&n)),
        "{calls:?}"
    );
    assert_eq!(
        doc["requests"]["successful"].as_u64(),
        Some(of("a") + of("b"))
    );
    assert_eq!(
        doc["errors"][0]["class"], "grpc_not_found",
        "{}",
        doc["errors"]
    );

    // ghz's array, to a server-streaming method: each call's messages are timed.
    let mut args = grpc_args(
        "kv.v1.Store/Watch",
        &["-d", r#"[{"key":"w","count":1},{"key":"x","count":3}]"#],
    );
    args.extend(["-n", "10", &server.url]);
    let doc = grpc_json(&args);
    assert_eq!(doc["requests"]["successful"], 10);
    let rows = doc["per_url"].as_array().unwrap();
    let (ones, threes) = (&rows[0]["completed"], &rows[1]["completed"]);
    assert_eq!(ones.as_u64().unwrap() + threes.as_u64().unwrap(), 10);
    assert_eq!(
        doc["streaming"]["events"].as_u64(),
        Some(ones.as_u64().unwrap() + 3 * threes.as_u64().unwrap()),
        "{}",
        doc["streaming"]
    );
    assert_eq!(doc["streaming"]["max_events_per_response"], 3);
    // The text names the rows as messages.
    let mut args = grpc_args("kv.v1.Store/Get", &["-d", r#"[{"key":"a"},{"key":"b"}]"#]);
    args.extend(["-n", "4", "--no-progress", &server.url]);
    let out = spate(&args);
    crate::support::succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("a list of messages, Per message below"),
        "{text}"
    );
    assert!(text.contains("Per message (completed"), "{text}");
}

#[test]
fn compressed_messages_go_both_ways_with_enable_compression() {
    let Some(server) = Server::spawn("gzip", None, &[("SPATE_TEST_GZIP", "1")]) else {
        return;
    };
    // A key long enough that the server compresses its answer.
    let key = "k".repeat(300);
    let data = format!(r#"{{"key":"{key}"}}"#);
    let mut args = grpc_args("kv.v1.Store/Get", &["-e", "-d", &data, "-v"]);
    args.extend([
        "-n",
        "20",
        "-c",
        "2",
        "--no-progress",
        "--format",
        "json",
        &server.url,
    ]);
    let out = spate(&args);
    crate::support::succeeded(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["requests"]["successful"], 20, "{}", doc["requests"]);
    // The server read the key out of each compressed message: the run's 20 and -v's one.
    let calls = server.calls();
    assert_eq!(calls.len(), 21);
    assert!(calls.iter().all(|(_, k, _, _)| *k == key));
    let shown = String::from_utf8_lossy(&out.stderr);
    for line in [
        "> grpc-encoding: gzip",
        "> grpc-accept-encoding: gzip",
        "< grpc-encoding: gzip",
    ] {
        assert!(shown.lines().any(|l| l == line), "{line} in:\n{shown}");
    }
    assert!(shown.contains(", gzip of 303): {\"key\":\"kkk"), "{shown}");
    assert!(
        shown.contains(" bytes, compressed): {\"key\":\"kkk"),
        "{shown}"
    );
}

#[test]
fn a_client_stream_sends_every_message_in_one_call() {
    let Some(server) = Server::start("client-stream") else {
        return;
    };
    // Client streaming: the array is one call's stream, answered with one message.
    let mut args = grpc_args(
        "kv.v1.Store/Put",
        &["-d", r#"[{"key":"a"},{"key":"b"},{"key":"c"}]"#],
    );
    args.extend(["-n", "12", "-c", "2", "-p", "2", &server.url]);
    let doc = grpc_json(&args);
    assert_eq!(doc["requests"]["successful"], 12, "{}", doc["requests"]);
    assert!(
        doc["per_url"].as_array().is_none_or(Vec::is_empty),
        "one call, not a list"
    );
    let calls = server.calls();
    assert_eq!(calls.len(), 12);
    assert!(
        calls.iter().all(|(m, k, _, _)| m == "Put" && k == "a,b,c"),
        "{calls:?}"
    );
    // Bidirectional: each message answered with itself, timed as a stream's events.
    let mut args = grpc_args(
        "kv.v1.Store/Chat",
        &["-d", r#"[{"key":"x"},{"key":"y"}]"#, "-v"],
    );
    args.extend(["-n", "10", "--no-progress", "--format", "json", &server.url]);
    let out = spate(&args);
    crate::support::succeeded(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["requests"]["successful"], 10);
    assert_eq!(doc["streaming"]["events"], 20, "{}", doc["streaming"]);
    // -v shows each message of the client's stream.
    let shown = String::from_utf8_lossy(&out.stderr);
    for line in [
        r#"> message 1 (3 bytes): {"key":"x"}"#,
        r#"> message 2 (3 bytes): {"key":"y"}"#,
        r#"< message 2 (3 bytes): {"key":"y"}"#,
    ] {
        assert!(shown.lines().any(|l| l == line), "{line} in:\n{shown}");
    }
    // The run's 10 and -v's one, each with both keys.
    let chats: Vec<_> = server
        .calls()
        .into_iter()
        .filter(|c| c.0 == "Chat")
        .collect();
    assert_eq!(chats.len(), 11);
    assert!(chats.iter().all(|c| c.1 == "x,y"), "{chats:?}");
}

#[test]
fn a_protoset_and_a_metadata_file_as_ghz_takes_them() {
    let Some(server) = Server::start("protoset") else {
        return;
    };
    let python = test_python("grpc_tools").unwrap();
    let dir = crate::support::ScratchDir::new("protoset");
    let set = dir.0.join("kv.protoset");
    let made = std::process::Command::new(python)
        .args(["-m", "grpc_tools.protoc", &format!("-I{IMPORTS}")])
        .arg(format!(
            "-I{}",
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/servers/grpc")
        ))
        .arg(format!("--descriptor_set_out={}", set.display()))
        .args(["--include_imports", "kv.proto"])
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let set = set.to_str().unwrap();
    let out = spate(&["grpc", "--protoset", set, "--list", "http://127.0.0.1:9"]);
    crate::support::succeeded(&out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "kv.v1.Store\n  kv.v1.Store/Get\n  kv.v1.Store/Watch\n  kv.v1.Store/Put\n  kv.v1.Store/Chat\n"
    );
    let meta = dir.0.join("meta.json");
    std::fs::write(&meta, r#"{"tenant": "from-file"}"#).unwrap();
    let doc = grpc_json(&[
        "grpc",
        "--protoset",
        set,
        "-M",
        meta.to_str().unwrap(),
        "--call",
        "kv.v1.Store/Get",
        "-d",
        r#"{"key":"p"}"#,
        "-n",
        "6",
        &server.url,
    ]);
    assert_eq!(doc["requests"]["successful"], 6);
    let calls = server.calls();
    assert_eq!(calls.len(), 6);
    assert!(
        calls
            .iter()
            .all(|(_, k, t, _)| k == "p" && t == "from-file"),
        "{calls:?}"
    );
    // A file that is no descriptor set, or metadata that is no object, is one line, exit 2.
    let out = spate(&[
        "grpc",
        "--protoset",
        meta.to_str().unwrap(),
        "--list",
        "http://127.0.0.1:9",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--protoset "));
    std::fs::write(&meta, "tenant=x").unwrap();
    let out = spate(&[
        "grpc",
        "--protoset",
        set,
        "-M",
        meta.to_str().unwrap(),
        "--call",
        "kv.v1.Store/Get",
        "http://127.0.0.1:9",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a JSON object of metadata"));
}
