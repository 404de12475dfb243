//! The layers read one way (docs/ARCHITECTURE.md, invariant 2): stats knows nothing of analysis
//! or report, and analysis imports neither report nor the number formatters, so it cannot write
//! a sentence the HTML and text reports would each have to repeat; the transport and the
//! protocols know nothing of runs: net imports no HTTP, proto no counting, and the looks
//! before a run (`-v`, `--alt-svc`, MCP's probe) do not go through the engine.

use std::path::{Path, PathBuf};

fn sources(dir: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir)];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            match p.is_dir() {
                true => todo.push(p),
                false if p.extension().is_some_and(|x| x == "rs") => out.push(p),
                false => {}
            }
        }
    }
    assert!(!out.is_empty(), "no sources under src/{dir}");
    out
}

fn uses(dir: &str, forbidden: &[&str]) -> Vec<String> {
    uses_in(sources(dir), forbidden)
}

fn uses_in(files: Vec<PathBuf>, forbidden: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for p in files {
        let text = std::fs::read_to_string(&p).unwrap();
        // The code, not its tests.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (i, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for f in forbidden {
                if line.contains(f) {
                    found.push(format!("{}:{}: {}", p.display(), i + 1, line.trim()));
                }
            }
        }
    }
    found
}

#[test]
fn stats_and_analysis_do_not_reach_up() {
    let stats = uses(
        "stats",
        &["crate::analysis", "crate::report", "crate::numbers"],
    );
    assert!(stats.is_empty(), "stats reaches up:\n{}", stats.join("\n"));
    let analysis = uses("analysis", &["crate::report", "crate::numbers"]);
    assert!(
        analysis.is_empty(),
        "analysis reaches up:\n{}",
        analysis.join("\n")
    );
    // The rules make findings only (the --slo parser's errors and the levels' labels are words
    // of their own).
    let rules = ["finding", "insight", "generator", "fairness", "ports"].map(|f| {
        sources("analysis")
            .into_iter()
            .find(|p| p.file_stem().is_some_and(|s| s == f))
            .unwrap()
    });
    let worded = uses_in(rules.to_vec(), &["format!(", ".into()"]);
    assert!(
        worded.is_empty(),
        "a rule writes words:\n{}",
        worded.join("\n")
    );
}

#[test]
fn transport_and_protocols_do_not_reach_up() {
    let net = uses(
        "net",
        &[
            "crate::proto",
            "crate::engine",
            "crate::stats",
            "crate::plan",
        ],
    );
    assert!(net.is_empty(), "net reaches up:\n{}", net.join("\n"));
    let proto = uses(
        "proto",
        &[
            "crate::engine",
            "crate::stats",
            "crate::report",
            "crate::cli",
            "crate::ui",
        ],
    );
    assert!(proto.is_empty(), "proto reaches up:\n{}", proto.join("\n"));
    let mcp = uses(
        "mcp",
        &["crate::engine", "crate::app", "crate::cli", "crate::ui"],
    );
    assert!(mcp.is_empty(), "mcp reaches up:\n{}", mcp.join("\n"));
    let looks = uses("verbose", &["crate::engine"]);
    assert!(
        looks.is_empty(),
        "-v reaches into the engine:\n{}",
        looks.join("\n")
    );
}
