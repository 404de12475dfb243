//! `spate mcp` against MCP servers that list their tools to hurt: a hundred thousand tools,
//! endless pages, a schema nested deeper than a JSON parser goes. The listing is bounded, a run
//! keeps only the tools it calls, and a tool that cannot be read is named, not fatal.

use serde_json::{Value, json};

use crate::support::{Peer, Scripted, spate};

/// A stateless MCP server whose `tools/list` answer to page `n` (from 1) is `page(n)`, and
/// whose tools answer every call with an empty result.
fn server(page: fn(u64) -> Value) -> Scripted {
    Scripted::start(move |p: &mut Peer| {
        let mut pages = 0;
        while let Some(req) = p.read_request() {
            let Ok(msg) = serde_json::from_slice::<Value>(&req.body) else {
                return;
            };
            let id = msg["id"].clone();
            let result = match msg["method"].as_str() {
                Some("tools/list") => {
                    pages += 1;
                    page(pages)
                }
                _ => json!({"content": []}),
            };
            let body =
                serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result})).unwrap();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            if !p.write(head.as_bytes()) || !p.write(&body) {
                return;
            }
        }
    })
}

fn mcp(srv: &Scripted, args: &[&str]) -> std::process::Output {
    let url = format!("{}mcp", srv.url());
    let mut all = vec!["mcp", "--no-progress", "--protocol-version", "2026-07-28"];
    all.extend_from_slice(args);
    all.push(&url);
    spate(&all)
}

#[test]
fn a_hundred_thousand_tools_cost_a_run_only_the_one_it_calls() {
    let srv = server(|_| {
        let tools: Vec<Value> = (0..100_000)
            .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
            .collect();
        json!({"tools": tools})
    });
    let out = mcp(&srv, &["-n", "3", "-c", "1", "--tool", "t99999"]);
    crate::support::succeeded(&out);
    // --list shows at most 10,000 tools and says so.
    let list = mcp(&srv, &["--list"]);
    assert_eq!(list.status.code(), Some(1));
    let err = String::from_utf8_lossy(&list.stderr);
    assert!(err.contains("lists more than 10000 tools"), "{err}");
    // A missing tool is named with the count of those it has.
    let missing = mcp(&srv, &["-n", "1", "--tool", "nope"]);
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains("no tool named \"nope\""), "{err}");
    assert!(err.contains("and 99900 more"), "{err}");
}

#[test]
fn endless_pages_of_tools_end_at_the_listings_bound() {
    // 12 MB pages, each with a cursor to the next.
    let srv = server(|n| {
        json!({
            "tools": [{"name": format!("pad{n}"), "description": "x".repeat(12 << 20)}],
            "nextCursor": format!("page{}", n + 1),
        })
    });
    for args in [&["--list"][..], &["-n", "1", "--tool", "t"][..]] {
        let out = mcp(&srv, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("more than 64 MiB together"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn a_tool_nested_too_deep_is_named_and_the_others_are_listed_and_called() {
    let srv = server(|_| {
        let mut deep = json!({"type": "object"});
        for _ in 0..200 {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        json!({"tools": [
            {"name": "ok", "inputSchema": {"type": "object"}},
            {"name": "deep", "inputSchema": deep},
        ]})
    });
    let list = mcp(&srv, &["--list"]);
    crate::support::succeeded(&list);
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(text.contains(": 2 tools"), "{text}");
    assert!(text.contains("\nok\n"), "{text}");
    assert!(
        text.contains("not shown, spate cannot read it: deep: recursion limit"),
        "{text}"
    );
    let run = mcp(&srv, &["-n", "2", "-c", "1", "--tool", "ok"]);
    crate::support::succeeded(&run);
    let deep = mcp(&srv, &["-n", "1", "--tool", "deep"]);
    assert_eq!(deep.status.code(), Some(2));
    let err = String::from_utf8_lossy(&deep.stderr);
    assert!(
        err.contains("lists tool \"deep\", but spate cannot read it"),
        "{err}"
    );
}
