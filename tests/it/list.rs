//! Request lists: several URLs, or `--urls-from-file`, sent in turn or at random, each request
//! built once, and the report broken down per URL. A recording server checks what was sent.

use std::sync::{Arc, Mutex};

use crate::support::{Peer, Scripted, spate, spate_json, succeeded, usage_error};

/// Each request line the server got, with its body.
type Seen = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A server that records each request line (and body) and answers 404 for paths starting
/// with /missing, 200 otherwise.
fn recorder() -> (Scripted, Seen) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = seen.clone();
    let server = Scripted::start(move |peer: &mut Peer| {
        while let Some(r) = peer.read_request() {
            let line = r.head.lines().next().unwrap_or_default().to_owned();
            let missing = line.contains(" /missing");
            keep.lock().unwrap().push((line, r.body));
            let answer: &[u8] = match missing {
                true => b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n",
                false => b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok",
            };
            if !peer.write(answer) {
                return;
            }
        }
    });
    (server, seen)
}

fn lines(seen: &Seen) -> Vec<String> {
    std::mem::take(&mut *seen.lock().unwrap())
        .into_iter()
        .map(|(l, _)| l)
        .collect()
}

fn count(lines: &[String], line: &str) -> usize {
    lines.iter().filter(|l| *l == line).count()
}

#[test]
fn urls_go_in_turn_and_the_report_breaks_them_down() {
    let (server, seen) = recorder();
    let base = format!("http://{}", server.addr);
    let (a, b, m) = (
        format!("{base}/a"),
        format!("{base}/b?x=1"),
        format!("{base}/missing"),
    );
    let doc = spate_json(&["-c", "2", "--threads", "2", "-n", "30", &a, &b, &m]);
    crate::schema::validate(&doc);
    let got = lines(&seen);
    for l in [
        "GET /a HTTP/1.1",
        "GET /b?x=1 HTTP/1.1",
        "GET /missing HTTP/1.1",
    ] {
        assert_eq!(count(&got, l), 10, "{l}: {got:?}");
    }
    let rows = doc["per_url"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["request"], format!("GET {a}"));
    for (row, errors) in rows.iter().zip([0, 0, 10]) {
        assert_eq!(row["completed"], 10, "{row}");
        assert_eq!(row["error_status"], errors, "{row}");
        assert!(row["p50_ms"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(rows[2]["status_codes"][0]["code"], 404);
    // A count that ends inside a round: the first requests get one more.
    let doc = spate_json(&["-c", "1", "-n", "31", &a, &b, &m]);
    let got = lines(&seen);
    assert_eq!(
        [
            count(&got, "GET /a HTTP/1.1"),
            count(&got, "GET /b?x=1 HTTP/1.1"),
            count(&got, "GET /missing HTTP/1.1")
        ],
        [11, 10, 10]
    );
    assert_eq!(doc["per_url"][0]["completed"], 11);
    // The text report has the section.
    let out = spate(&["--no-progress", "-c", "1", "-n", "6", &a, &b]);
    succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Per URL"), "{text}");
    assert!(text.contains(&format!("GET {b}")), "{text}");
}

#[test]
fn a_file_gives_methods_and_bodies_and_random_order_repeats_with_its_seed() {
    let (server, seen) = recorder();
    let base = format!("http://{}", server.addr);
    let dir = std::env::temp_dir().join(format!("spate-it-list-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("urls.txt");
    std::fs::write(
        &file,
        format!("# requests\n{base}/one\nPOST {base}/two a=1&b=2\n\ndelete {base}/three\n"),
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let doc = spate_json(&["-c", "1", "-n", "9", "--urls-from-file", file]);
    assert_eq!(doc["per_url"][1]["request"], format!("POST {base}/two"));
    let got = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(got.len(), 9);
    for (line, body) in &got {
        match line.as_str() {
            "GET /one HTTP/1.1" | "DELETE /three HTTP/1.1" => assert!(body.is_empty()),
            "POST /two HTTP/1.1" => assert_eq!(body, b"a=1&b=2"),
            other => panic!("{other}"),
        }
    }
    let sequence = |seed: &str| {
        spate_json(&[
            "-c",
            "1",
            "--threads",
            "1",
            "-n",
            "60",
            "--order",
            "random",
            "--seed",
            seed,
            "--urls-from-file",
            file,
        ]);
        lines(&seen)
    };
    let first = sequence("7");
    assert_eq!(first, sequence("7"), "the same seed, the same order");
    assert_ne!(first, sequence("8"));
    for l in [
        "GET /one HTTP/1.1",
        "POST /two HTTP/1.1",
        "DELETE /three HTTP/1.1",
    ] {
        assert!(count(&first, l) > 5, "{l}: {first:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn lists_refuse_what_they_cannot_do_with_one_line() {
    let (a, b) = ("http://127.0.0.1:9/a", "http://127.0.0.1:9/b");
    let dir = std::env::temp_dir().join(format!("spate-it-list-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, format!("{a}\nGE:T {b}\n")).unwrap();
    let script = dir.join("s.lua");
    std::fs::write(&script, "wrk.method = 'PUT'\n").unwrap();
    let bad = bad.to_str().unwrap();
    let script = script.to_str().unwrap();
    for (args, needle) in [
        (vec![a, "http://127.0.0.2:9/b"], "is not on the origin"),
        (vec![a, "https://127.0.0.1:9/b"], "is not on the origin"),
        (
            vec!["--urls-from-file", bad],
            "bad.txt:2: \"GE:T\" is not a method",
        ),
        (
            vec!["--urls-from-file", "/nonexistent/urls"],
            "/nonexistent/urls",
        ),
        (vec!["--urls-from-file", bad, a], "not both"),
        (vec!["--seed", "3", a, b], "--seed is for --order random"),
        (
            vec!["--order", "random", a],
            "--order is for a request list",
        ),
        (vec!["-s", script, a, b], "--script"),
    ] {
        let mut all = vec!["-n", "2"];
        all.extend(args);
        let err = usage_error(&all);
        assert!(err.contains(needle), "{all:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
