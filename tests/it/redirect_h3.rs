//! `--redirect N` over HTTP/3 and over h2 negotiated by ALPN, against Debian's caddy, which no one
//! here wrote: a chain that stays on the run's origin (new streams on the slot's QUIC or TLS
//! connection), leaves it for an http:// origin (HTTP/1.1 on a connection of its own) or an
//! https:// one (HTTP/2 by ALPN, as the run speaks) and comes back. Caddy's access logs are the
//! count. caddy is required in CI (SPATE_REQUIRE_TOOLS=1).

use std::collections::BTreeMap;

use crate::h3::Caddy;
use crate::pki::Pki;
use crate::support::{free_addr, have, spate_json};

/// Caddy answering `/a` with a 301 to `/b`, `/b` with a 302 to another origin's `/c` (plain
/// HTTP, or HTTPS when `tls`), which answers with a 308 back to `/end`; the two origins log to
/// files of their own.
fn caddy_chain(pki: &Pki, tls: bool) -> (Caddy, u16) {
    let (addr, other) = (free_addr(), free_addr().port());
    let dir = pki.dir.join(format!("caddy-redirect-{}", addr.port()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cert.pem"), &pki.server_cert).unwrap();
    std::fs::write(dir.join("key.pem"), &pki.server_key).unwrap();
    let (d, port) = (dir.display(), addr.port());
    let (scheme, host, other_tls) = match tls {
        true => (
            "https",
            "localhost",
            format!("\ttls {d}/cert.pem {d}/key.pem\n"),
        ),
        false => ("http", "127.0.0.1", String::new()),
    };
    let config = format!(
        "{{\n\tadmin off\n\tauto_https off\n\tskip_install_trust\n\tservers {{\n\t\tprotocols h1 h2 h3\n\t}}\n}}\n\
         https://localhost:{port} {{\n\tbind 127.0.0.1\n\ttls {d}/cert.pem {d}/key.pem\n\
         \tredir /a /b 301\n\tredir /b {scheme}://{host}:{other}/c 302\n\trespond /end \"end\" 200\n\
         \tlog {{\n\t\toutput file {d}/access.log\n\t}}\n}}\n\
         {scheme}://{host}:{other} {{\n\tbind 127.0.0.1\n{other_tls}\tredir /c https://localhost:{port}/end 308\n\
         \tlog {{\n\t\toutput file {d}/other.log\n\t}}\n}}\n"
    );
    (Caddy::run(dir, addr, &config), other)
}

/// `n` chains of `url` with `flags` (-c 2 -p 2, up to 3 redirects, `ca` trusted) after emptying
/// both origins' logs: the run's result, checked against the schema.
fn chains(caddy: &Caddy, ca: &str, url: &str, n: &str, flags: &[&str]) -> serde_json::Value {
    // Emptied, not removed: caddy appends to the files it holds open.
    for log in ["access.log", "other.log"] {
        std::fs::write(caddy.dir.join(log), "").unwrap();
    }
    let mut args = vec![
        "-n",
        n,
        "-c",
        "2",
        "-p",
        "2",
        "--redirect",
        "3",
        "--cacert",
        ca,
    ];
    args.extend(flags);
    args.push(url);
    let v = spate_json(&args);
    crate::schema::validate(&v);
    v
}

#[test]
fn a_chain_over_http3_and_over_alpn_h2_stays_on_the_connection_at_home() {
    if !have("caddy") {
        return;
    }
    let pki = Pki::new("redirect-h3");
    let (caddy, _) = caddy_chain(&pki, false);
    let (ca, port) = (pki.path("ca.pem"), caddy.addr.port());
    let url = format!("https://localhost:{port}/a");
    for (flags, proto, said) in [
        (
            &["--http3", "--connect-timeout", "10s"][..],
            "HTTP/3.0",
            "HTTP/1.1 and HTTP/3",
        ),
        (&[][..], "HTTP/2.0", "HTTP/1.1 and HTTP/2"),
    ] {
        let v = chains(&caddy, &ca, &url, "200", flags);
        assert_eq!(v["requests"]["completed"], 200, "{proto}: {v}");
        assert_eq!(v["requests"]["failed"], 0, "{proto}");
        assert_eq!(v["requests"]["redirects_followed"], 600, "{proto}");
        assert_eq!(v["status_codes"][0]["code"], 200, "{proto}");
        assert_eq!(v["config"]["protocol"], said);
        let home = caddy.logged_in("access.log", true);
        let want: BTreeMap<String, u64> = [
            (format!("GET /a {proto} 301"), 200),
            (format!("GET /b {proto} 302"), 200),
            (format!("GET /end {proto} 200"), 200),
        ]
        .into_iter()
        .collect();
        assert_eq!(home, want, "{proto}");
        let away = caddy.logged_in("other.log", true);
        assert_eq!(
            away,
            [("GET /c HTTP/1.1 308".to_string(), 200)]
                .into_iter()
                .collect(),
            "{proto}"
        );
        // The run's own connections carried every hop at home: -c 2, and one connection of
        // its own to the other origin per slot that went there.
        let c = &v["connections"];
        assert!(c["reconnects"].as_u64().unwrap() <= 4, "{proto}: {c}");
    }
}

/// A hop to another https:// origin goes over HTTP/2 when the run speaks it (by ALPN or
/// `--http2`): a connection of its own to that origin, one stream at a time; a run over HTTP/3
/// goes there over HTTP/1.1 (TCP). Counted by that origin's log.
#[test]
fn a_hop_to_another_https_origin_speaks_h2_as_the_run_does() {
    if !have("caddy") {
        return;
    }
    let pki = Pki::new("redirect-away-h2");
    let (caddy, _) = caddy_chain(&pki, true);
    let (ca, port) = (pki.path("ca.pem"), caddy.addr.port());
    let url = format!("https://localhost:{port}/a");
    for (flags, away, said) in [
        (&[][..], "HTTP/2.0", "HTTP/2"),
        (&["--http2"][..], "HTTP/2.0", "HTTP/2"),
        (
            &["--http3", "--connect-timeout", "10s"][..],
            "HTTP/1.1",
            "HTTP/1.1 and HTTP/3",
        ),
    ] {
        let v = chains(&caddy, &ca, &url, "100", flags);
        assert_eq!(v["requests"]["completed"], 100, "{flags:?}: {v}");
        assert_eq!(v["requests"]["redirects_followed"], 300, "{flags:?}");
        assert_eq!(v["config"]["protocol"], said, "{flags:?}");
        let other = caddy.logged_in("other.log", true);
        assert_eq!(
            other,
            [(format!("GET /c {away} 308"), 100)].into_iter().collect(),
            "{flags:?}"
        );
        assert_eq!(
            caddy.logged_in("access.log", true).values().sum::<u64>(),
            300,
            "{flags:?}"
        );
    }
}
