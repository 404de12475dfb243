//! `--redirect N` against Debian's nginx, which no one here wrote: `return 301/302/303/307/308`
//! chains within an origin and across origins (another port, another host name, https://), with
//! exact counts in each server's access log; credentials only at the URL's own origin; 303 (and a
//! moved POST) as a GET, 307 as the same POST; a loop failing as `redirect` after N hops, never a
//! hang; a Location that cannot be followed; and the flags it cannot be combined with. nginx is
//! required in CI (SPATE_REQUIRE_TOOLS=1).

use serde_json::Value;

use crate::nginx::Nginx;
use crate::pki::Pki;
use crate::support::{failed_json, free_addr, have, spate, spate_json};

/// What nginx logs of each request: port, method, URI, status, the credentials it was sent, the
/// Host header and the body's length.
const LOG: &str = "log_format rd '$server_port $request_method $request_uri $status \
                   auth=$http_authorization cookie=$http_cookie host=$http_host len=$content_length'; \
                   access_log {dir}/rd.log rd;";

/// How many lines of `log` contain every one of `parts`.
fn lines_with(log: &[String], parts: &[&str]) -> usize {
    log.iter()
        .filter(|l| parts.iter().all(|p| l.contains(p)))
        .count()
}

fn error_count(doc: &Value, class: &str) -> u64 {
    doc["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["class"] == class)
        .map_or(0, |e| e["count"].as_u64().unwrap())
}

#[test]
fn a_chain_across_origins_is_followed_with_credentials_only_at_home() {
    if !have("nginx") {
        return;
    }
    // B is another origin twice over: another port, and named `localhost` rather than 127.0.0.1;
    // it sends the chain home. One nginx serves both, logging the port of each request.
    let (a_addr, b_port) = (free_addr(), free_addr().port());
    let a_port = a_addr.port();
    let b = format!(
        "server {{ listen 127.0.0.1:{b_port}; location = /c {{ return 308 http://127.0.0.1:{a_port}/end; }} }}"
    );
    let a = Nginx::start_on(
        a_addr,
        "redirect-chain",
        "",
        &format!("{LOG} {b}"),
        &format!(
            "location = /a {{ return 301 /b; }} \
             location = /b {{ return 302 http://localhost:{b_port}/c; }} \
             location = /end {{ return 200 \"end\\n\"; }}"
        ),
    );
    let url = format!("http://127.0.0.1:{}/a", a.addr.port());
    let doc = spate_json(&[
        "-n",
        "200",
        "-c",
        "4",
        "--redirect",
        "5",
        "-H",
        "Authorization: Bearer s3cr3t",
        "-H",
        "Cookie: id=42",
        &url,
    ]);
    assert_eq!(doc["requests"]["completed"], 200);
    assert_eq!(doc["requests"]["redirects_followed"], 600);
    assert_eq!(doc["status_codes"][0]["code"], 200);
    assert_eq!(doc["status_codes"][0]["count"], 200);
    assert_eq!(doc["config"]["redirects"], 5);
    // One connection to B per client, kept for every later chain.
    assert_eq!(doc["connections"]["reconnects"], 4);

    let log = a.log("rd.log");
    let (home, away): (Vec<String>, Vec<String>) = log
        .into_iter()
        .partition(|l| l.starts_with(&format!("{a_port} ")));
    assert_eq!(home.len(), 600, "{:?}", &home[..3]);
    let with_secrets = ["auth=Bearer s3cr3t", "cookie=id=42"];
    for (path, status) in [("/a", "301"), ("/b", "302"), ("/end", "200")] {
        let mut want = vec![path, status];
        want.extend(with_secrets);
        assert_eq!(lines_with(&home, &want), 200, "{path}: {:?}", &home[..3]);
    }
    assert_eq!(away.len(), 200);
    let host = format!("host=localhost:{b_port}");
    assert_eq!(
        lines_with(&away, &["GET /c 308 auth=- cookie=- ", &host]),
        200,
        "{:?}",
        &away[..3]
    );
}

#[test]
fn see_other_is_a_get_and_a_temporary_redirect_repeats_the_post() {
    if !have("nginx") {
        return;
    }
    let nginx = Nginx::start(
        "redirect-methods",
        "",
        LOG,
        "location = /see-other { return 303 /done; } \
         location = /temporary { return 307 /done; } \
         location = /done { return 200 \"done\\n\"; }",
    );
    let base = format!("http://127.0.0.1:{}", nginx.addr.port());
    for path in ["/see-other", "/temporary"] {
        let url = format!("{base}{path}");
        let doc = spate_json(&[
            "-n",
            "20",
            "-c",
            "2",
            "--redirect",
            "1",
            "-m",
            "POST",
            "-d",
            "x=1",
            "-T",
            "text/plain",
            &url,
        ]);
        assert_eq!(doc["requests"]["completed"], 20, "{path}");
        assert_eq!(doc["requests"]["redirects_followed"], 20, "{path}");
    }
    let log = nginx.log("rd.log");
    assert_eq!(lines_with(&log, &["POST /see-other 303", "len=3"]), 20);
    assert_eq!(lines_with(&log, &["GET /done 200", "len=-"]), 20);
    assert_eq!(lines_with(&log, &["POST /temporary 307", "len=3"]), 20);
    assert_eq!(lines_with(&log, &["POST /done 200", "len=3"]), 20);
    assert_eq!(log.len(), 80);
}

#[test]
fn a_loop_fails_as_redirect_after_n_hops_and_never_hangs() {
    if !have("nginx") {
        return;
    }
    for (listen, flags) in [("", &[][..]), ("http2", &["--http2", "-p", "3"][..])] {
        let nginx = Nginx::start(
            &format!("redirect-loop{listen}"),
            listen,
            LOG,
            "location = /loop { return 302 /loop; } \
             location = /ftp { return 302 ftp://127.0.0.1/file; }",
        );
        let base = format!("http://127.0.0.1:{}", nginx.addr.port());
        let mut args = vec!["-n", "30", "-c", "3", "--redirect", "3"];
        args.extend(flags);
        let url = format!("{base}/loop");
        args.push(&url);
        let doc = failed_json(&args);
        assert_eq!(doc["requests"]["failed"], 30, "{listen}");
        assert_eq!(error_count(&doc, "redirect"), 30, "{listen}");
        assert_eq!(doc["requests"]["redirects_followed"], 90, "{listen}");
        // The request and its three redirects, each once.
        assert_eq!(nginx.log("rd.log").len(), 120, "{listen}");

        let mut args = vec!["-n", "5", "--redirect", "3"];
        args.extend(flags);
        let url = format!("{base}/ftp");
        args.push(&url);
        let doc = failed_json(&args);
        assert_eq!(error_count(&doc, "redirect"), 5, "{listen}");
        let example = doc["errors"][0]["example"].as_str().unwrap();
        assert!(
            example.contains("ftp://127.0.0.1/file")
                && example.contains("only http:// and https://"),
            "{example}"
        );
    }
}

#[test]
fn a_redirect_to_https_checks_the_new_origins_certificate() {
    if !have("nginx") {
        return;
    }
    let pki = Pki::new("redirect");
    for (name, cert, key) in [
        ("good", &pki.server_cert, &pki.server_key),
        ("other", &pki.wrong_name_cert, &pki.wrong_name_key),
    ] {
        std::fs::write(pki.dir.join(format!("{name}.pem")), cert).unwrap();
        std::fs::write(pki.dir.join(format!("{name}-key.pem")), key).unwrap();
    }
    let tls = |name: &str| {
        format!(
            "ssl_certificate {0}/{name}.pem; ssl_certificate_key {0}/{name}-key.pem; \
             location / {{ return 200 \"secure\\n\"; }}",
            pki.dir.display()
        )
    };
    let good = Nginx::start("redirect-tls", "ssl", LOG, &tls("good"));
    let other = Nginx::start("redirect-tls-other", "ssl", LOG, &tls("other"));
    let plain = Nginx::start(
        "redirect-plain",
        "",
        LOG,
        &format!(
            "location = /good {{ return 302 https://localhost:{}/s; }} \
             location = /other {{ return 302 https://localhost:{}/s; }}",
            good.addr.port(),
            other.addr.port()
        ),
    );
    let ca = pki.dir.join("ca.pem");
    let ca = ca.to_str().unwrap();
    let base = format!("http://127.0.0.1:{}", plain.addr.port());
    let doc = spate_json(&[
        "-n",
        "40",
        "-c",
        "2",
        "--redirect",
        "1",
        "--cacert",
        ca,
        &format!("{base}/good"),
    ]);
    assert_eq!(doc["requests"]["completed"], 40);
    assert_eq!(good.log("rd.log").len(), 40);

    // Its certificate names other.test, not localhost: refused, never sent.
    let doc = failed_json(&[
        "-n",
        "10",
        "-c",
        "1",
        "--redirect",
        "1",
        "--cacert",
        ca,
        &format!("{base}/other"),
    ]);
    assert_eq!(error_count(&doc, "tls"), 10, "{doc}");
    assert!(other.log("rd.log").is_empty());
}

#[test]
fn over_a_unix_socket_every_hop_goes_to_the_socket() {
    if !have("nginx") {
        return;
    }
    let nginx = Nginx::start(
        "redirect-unix",
        "",
        LOG,
        "listen unix:{dir}/s.sock; \
         location = /a { return 307 http://elsewhere.test/b; } \
         location = /b { return 200 \"b\\n\"; }",
    );
    let socket = nginx.dir.join("s.sock");
    let doc = spate_json(&[
        "-n",
        "30",
        "-c",
        "3",
        "--redirect",
        "1",
        "--unix-socket",
        socket.to_str().unwrap(),
        "http://sidecar.local/a",
    ]);
    assert_eq!(doc["requests"]["completed"], 30);
    let log = nginx.log("rd.log");
    assert_eq!(lines_with(&log, &["GET /a 307", "host=sidecar.local "]), 30);
    assert_eq!(
        lines_with(&log, &["GET /b 200", "host=elsewhere.test "]),
        30
    );
    // The text report says how many were followed.
    let out = spate(&[
        "--no-progress",
        "-n",
        "6",
        "-c",
        "1",
        "--redirect",
        "1",
        "--unix-socket",
        socket.to_str().unwrap(),
        "http://sidecar.local/a",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Redirects       6 followed (--redirect 1); latency covers each chain"),
        "{text}"
    );
}

/// A chain over h2c with prior knowledge through GOAWAYs: nginx ends each connection after
/// `keepalive_requests` streams, so hops find their connection gone mid-chain and their chains
/// go again from the start. Every count is the server's: each redirect spate says it followed is a
/// 3xx nginx logged, each completed chain one `/end`.
#[test]
fn a_chain_over_http2_follows_on_the_connections_streams_and_through_goaways() {
    if !have("nginx") {
        return;
    }
    let log = "log_format rd2 '$server_port $request_method $request_uri $status \
               $server_protocol auth=$http_authorization host=$http_host'; \
               access_log {dir}/rd.log rd2; keepalive_requests 20;";
    let (a_addr, b_port) = (free_addr(), free_addr().port());
    let a_port = a_addr.port();
    let b = format!(
        "server {{ listen 127.0.0.1:{b_port}; location = /c {{ return 308 http://127.0.0.1:{a_port}/end; }} }}"
    );
    let a = Nginx::start_on(
        a_addr,
        "redirect-h2",
        "http2",
        &format!("{log} {b}"),
        &format!(
            "location = /a {{ return 301 /b; }} \
             location = /b {{ return 302 http://localhost:{b_port}/c; }} \
             location = /end {{ return 200 \"end\\n\"; }}"
        ),
    );
    let url = format!("http://127.0.0.1:{a_port}/a");
    let doc = spate_json(&[
        "-n",
        "300",
        "-c",
        "2",
        "-p",
        "4",
        "--http2",
        "--redirect",
        "5",
        "-H",
        "Authorization: Bearer s3cr3t",
        &url,
    ]);
    crate::schema::validate(&doc);
    assert_eq!(doc["requests"]["completed"], 300, "{doc}");
    assert_eq!(doc["status_codes"][0]["code"], 200);
    assert_eq!(doc["status_codes"][0]["count"], 300);
    // The hops away went over HTTP/1.1, and the report says both.
    assert_eq!(doc["config"]["protocol"], "HTTP/1.1 and HTTP/2 (h2c)");

    let log = a.log("rd.log");
    let (home, away): (Vec<String>, Vec<String>) = log
        .into_iter()
        .partition(|l| l.starts_with(&format!("{a_port} ")));
    assert!(
        home.iter().all(|l| l.contains(" HTTP/2.0 ")),
        "{:?}",
        &home[..3]
    );
    assert!(
        away.iter().all(|l| l.contains(" HTTP/1.1 ")),
        "{:?}",
        &away[..3]
    );
    let secret = "auth=Bearer s3cr3t";
    assert_eq!(lines_with(&home, &["GET /end 200", secret]), 300);
    let (a301, b302, c308) = (
        lines_with(&home, &["GET /a 301", secret]),
        lines_with(&home, &["GET /b 302", secret]),
        lines_with(&away, &["GET /c 308 HTTP/1.1 auth=- "]),
    );
    // A chain whose hop was refused went again from /a, so the hops before it were served
    // twice; every /b led to /c.
    assert!(
        a301 >= 300 && b302 >= 300 && c308 == b302,
        "{a301} {b302} {c308}"
    );
    assert_eq!(
        doc["requests"]["redirects_followed"],
        (a301 + b302 + c308) as u64,
        "{doc}"
    );
    assert_eq!(home.len(), a301 + b302 + 300);
    // nginx closed connections after 20 streams: the chains went on over new ones.
    assert!(
        doc["connections"]["reconnects"].as_u64().unwrap() >= 10,
        "{doc}"
    );
}
