//! Secrets: credentials reach the server but never the report, the JSON, the saved file or an
//! error message.

use std::sync::{Arc, Mutex};

use crate::support::{Scripted, spate};

const SECRETS: [&str; 4] = [
    "s3cr3t-bearer",
    "s3cr3t-cookie",
    "s3cr3t-proxy",
    "s3cr3t-pass",
];

fn leaks(text: &str) -> Vec<&'static str> {
    // The base64 of "alice:s3cr3t-pass", as it travels in the Authorization header.
    let basic = "YWxpY2U6czNjcjN0LXBhc3M=";
    SECRETS
        .into_iter()
        .chain([basic])
        .filter(|s| text.contains(s))
        .collect()
}

#[test]
fn credentials_reach_the_server_and_nothing_else() {
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    // Every third response is garbage, so that the report has error examples to show too.
    let server = Scripted::start(move |p| {
        let mut n = 0;
        while let Some(req) = p.read_request() {
            seen.lock().unwrap().push(req.head);
            n += 1;
            let reply: &[u8] = if n % 3 == 0 {
                b"HTTP/1.1 200 OK\r\nContent-Length: nope\r\n\r\n"
            } else {
                b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n"
            };
            if !p.write(reply) || n % 3 == 0 {
                return;
            }
        }
    });
    let dir = std::env::temp_dir().join(format!("spate-secrets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let saved = dir.join("run.json");
    let (save, url) = (saved.to_str().unwrap(), server.url());
    let mut outputs = Vec::new();
    for format in ["text", "json"] {
        let o = spate(&[
            "-n",
            "30",
            "-c",
            "3",
            "--format",
            format,
            "--save",
            save,
            "-H",
            "Authorization: Bearer s3cr3t-bearer",
            "-H",
            "cookie: sid=s3cr3t-cookie",
            "-H",
            "Proxy-Authorization: Basic s3cr3t-proxy",
            "-a",
            "alice:s3cr3t-pass",
            &url,
        ]);
        assert_eq!(o.status.code(), Some(1), "no success: every status is 401");
        outputs.push(String::from_utf8_lossy(&o.stdout).into_owned());
        outputs.push(String::from_utf8_lossy(&o.stderr).into_owned());
        outputs.push(std::fs::read_to_string(&saved).unwrap());
    }
    assert!(outputs[0].contains("parse"), "error examples are shown");
    for out in &outputs {
        assert_eq!(leaks(out), Vec::<&str>::new(), "{out}");
    }
    let heads = heads.lock().unwrap();
    assert!(heads.len() >= 30);
    // -H Authorization replaces the one -a would add; the others arrive as given.
    let all = heads.join("");
    assert_eq!(
        leaks(&all),
        ["s3cr3t-bearer", "s3cr3t-cookie", "s3cr3t-proxy"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn basic_auth_is_sent_and_masked() {
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    let server = Scripted::start(move |p| {
        while let Some(req) = p.read_request() {
            seen.lock().unwrap().push(req.head);
            if !p.write(b"HTTP/1.1 204 No Content\r\n\r\n") {
                return;
            }
        }
    });
    let o = spate(&[
        "-n",
        "4",
        "-c",
        "1",
        "--format",
        "json",
        "-a",
        "alice:s3cr3t-pass",
        &server.url(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(leaks(&text).is_empty(), "{text}");
    let heads = heads.lock().unwrap();
    assert!(
        heads[0].contains("Authorization: Basic YWxpY2U6czNjcjN0LXBhc3M="),
        "{}",
        heads[0]
    );
}

#[test]
fn bad_values_never_echo_a_secret() {
    let cases: &[&[&str]] = &[
        &[
            "-H",
            "Authorization Bearer s3cr3t-bearer",
            "http://127.0.0.1:1/",
        ],
        &["--header=Cookie s3cr3t-cookie", "http://127.0.0.1:1/"],
        &[
            "-H",
            "Proxy Authorization: s3cr3t-proxy",
            "http://127.0.0.1:1/",
        ],
        &["-a", "s3cr3t-pass", "http://127.0.0.1:1/"],
        &["http://alice:s3cr3t-pass@127.0.0.1:1/"],
        &["http://alice:s3cr3t-pass@127.0.0.1:99999/"],
        &["http://alice:s3cr3t-pass@exa mple/"],
    ];
    for args in cases {
        let o = spate(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(leaks(&err).is_empty(), "{args:?} leaked: {err}");
    }
}
