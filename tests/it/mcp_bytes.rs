//! `spate mcp` against MCP servers written byte by byte here, for what the official SDK never
//! sends: an answer with another id, an event stream that ends before the answer, answers
//! longer than spate keeps, and a server that answers JSON to one call and an event stream to
//! the next. Each is the stateless revision on one connection, so the calls come in order.

use serde_json::{Value, json};

use crate::support::{Peer, Scripted, spate};

/// How the scripted server answers `tools/call` number `n` (from 0) of a connection, whose id
/// is `id`: the response's content type and body.
type Answer = fn(n: u64, id: u64) -> (&'static str, Vec<u8>);

/// A stateless MCP server that lists one tool, `t`, and answers its calls with `answer`.
fn server(answer: Answer) -> Scripted {
    Scripted::start(move |p: &mut Peer| {
        let mut calls = 0;
        while let Some(req) = p.read_request() {
            let Ok(msg) = serde_json::from_slice::<Value>(&req.body) else {
                return;
            };
            let id = msg["id"].as_u64().unwrap_or(0);
            let (kind, body) = match msg["method"].as_str() {
                Some("tools/list") => (
                    "application/json",
                    serde_json::to_vec(&json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]},
                    }))
                    .unwrap(),
                ),
                _ => {
                    calls += 1;
                    answer(calls - 1, id)
                }
            };
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            if !p.write(head.as_bytes()) || !p.write(&body) {
                return;
            }
        }
    })
}

fn result(id: u64) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}})).unwrap()
}

/// `spate mcp` with `n` calls of `t` on one connection: the exit code and the JSON.
fn run(srv: &Scripted, n: &str) -> (Option<i32>, Value) {
    let url = format!("{}mcp", srv.url());
    let out = spate(&[
        "mcp",
        "--no-progress",
        "--format",
        "json",
        "-c",
        "1",
        "-n",
        n,
        "--protocol-version",
        "2026-07-28",
        "--tool",
        "t",
        &url,
    ]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    crate::schema::validate(&doc);
    (out.status.code(), doc)
}

/// The example message of the run's only error class, which must be `protocol`.
fn protocol_example(doc: &Value, n: u64) -> String {
    let errors = doc["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["class"], "protocol");
    assert_eq!(errors[0]["count"], n);
    assert_eq!(doc["mcp"]["tools"][0]["protocol_errors"], n);
    errors[0]["example"].as_str().unwrap().to_string()
}

#[test]
fn an_answer_with_another_id_is_a_protocol_failure() {
    let srv = server(|_, id| ("application/json", result(id + 1000)));
    let (code, doc) = run(&srv, "5");
    assert_eq!(code, Some(1));
    let why = protocol_example(&doc, 5);
    assert!(why.contains("another id"), "{why}");
}

#[test]
fn an_event_stream_that_ends_before_the_answer_is_a_protocol_failure() {
    let srv = server(|_, _| {
        let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;
        (
            "text/event-stream",
            format!("id: p\ndata:\n\ndata: {progress}\n\n").into_bytes(),
        )
    });
    let (code, doc) = run(&srv, "4");
    assert_eq!(code, Some(1));
    let why = protocol_example(&doc, 4);
    assert!(why.contains("ended without the response"), "{why}");
}

#[test]
fn answers_longer_than_spate_keeps_are_protocol_failures_not_a_crash() {
    // 17 MiB of JSON, then an event of 2 MiB: both beyond what is kept.
    let srv = server(|n, id| match n % 2 {
        0 => {
            let text = "x".repeat(17 << 20);
            let body = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}});
            ("application/json", serde_json::to_vec(&body).unwrap())
        }
        _ => {
            let text = "y".repeat(2 << 20);
            let body = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}});
            (
                "text/event-stream",
                format!("data: {body}\n\n").into_bytes(),
            )
        }
    });
    let (code, doc) = run(&srv, "2");
    assert_eq!(code, Some(1));
    let why = protocol_example(&doc, 2);
    assert!(why.contains("longer than spate keeps"), "{why}");
    // The calls were read to their end: the connection carried both.
    assert_eq!(srv.connections(), 2, "the probe's and the run's");
}

#[test]
fn json_and_event_stream_answers_may_alternate_on_one_connection() {
    let srv = server(|n, id| match n % 2 {
        0 => ("application/json", result(id)),
        _ => {
            let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
            let answer = String::from_utf8(result(id)).unwrap();
            (
                "text/event-stream",
                format!(": hi\r\nid: 1\r\ndata:\r\n\r\ndata: {note}\r\n\r\nevent: message\r\ndata: {answer}\r\n\r\n")
                    .into_bytes(),
            )
        }
    });
    let (code, doc) = run(&srv, "6");
    assert_eq!(code, Some(0), "{}", doc["errors"]);
    let t = &doc["mcp"]["tools"][0];
    assert_eq!(t["succeeded"], 6);
    // One notification on each of the three streams, none in the JSON answers.
    assert_eq!(t["notifications_per_call"], 0.5);
}

#[test]
fn a_result_that_is_no_object_or_no_result_at_all_is_a_protocol_failure() {
    // In turn: a null result, a string, an array, neither result nor error, as JSON and as an
    // event of a stream.
    let srv = server(|n, id| {
        let body = match n % 4 {
            0 => json!({"jsonrpc": "2.0", "id": id, "result": null}),
            1 => json!({"jsonrpc": "2.0", "id": id, "result": "done"}),
            2 => json!({"jsonrpc": "2.0", "id": id, "result": []}),
            _ => json!({"jsonrpc": "2.0", "id": id}),
        };
        match n % 8 < 4 {
            true => ("application/json", serde_json::to_vec(&body).unwrap()),
            false => (
                "text/event-stream",
                format!("data: {body}\n\n").into_bytes(),
            ),
        }
    });
    let (code, doc) = run(&srv, "8");
    assert_eq!(code, Some(1));
    assert_eq!(doc["requests"]["successful"], 0, "{doc}");
    protocol_example(&doc, 8);
}
