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

/// Each top-level module of src/ (a file or a folder) and the top-level modules its code (not
/// its tests) names as `crate::NAME`.
fn module_graph() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" || name == "main" {
            continue;
        }
        let files = match p.is_dir() {
            true => sources(&name),
            false if p.extension().is_some_and(|x| x == "rs") => vec![p.clone()],
            false => continue,
        };
        modules.entry(name).or_default().extend(files);
    }
    let pattern = regex::Regex::new(r"crate::([a-z_0-9]+)").unwrap();
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(name, files)| {
            let mut to = BTreeSet::new();
            for f in files {
                let text = std::fs::read_to_string(f).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or_default();
                for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                    for c in pattern.captures_iter(line) {
                        let target = c[1].to_string();
                        if target != *name && names.contains(&target) {
                            to.insert(target);
                        }
                    }
                }
            }
            (name.clone(), to)
        })
        .collect()
}

/// The modules that import each other in circles: each strongly connected set of more than one.
fn circles(
    graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Vec<Vec<String>> {
    // Reachability by repeated search: the graph has a few dozen modules.
    let reach = |from: &str| {
        let mut seen = std::collections::BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for n in graph.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let reached: std::collections::BTreeMap<&String, _> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for m in graph.keys() {
        let circle: Vec<String> = graph
            .keys()
            .filter(|n| *n == m || (reached[m].contains(*n) && reached[*n].contains(m)))
            .cloned()
            .collect();
        if circle.len() > 1 && !out.contains(&circle) {
            out.push(circle);
        }
    }
    out
}

/// The top-level modules form a DAG: none imports, through any chain, a module that imports
/// it. A module that would close a circle belongs lower, or its shared part does.
#[test]
fn the_top_level_modules_import_each_other_in_no_circle() {
    let graph = module_graph();
    assert!(graph.len() > 30, "{:?}", graph.keys());
    let found = circles(&graph);
    assert!(
        found.is_empty(),
        "modules that import each other in a circle: {found:?}\n{:#?}",
        graph
            .iter()
            .filter(|(m, _)| found.iter().any(|c| c.contains(m)))
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_circle_is_found_where_there_is_one() {
    use std::collections::{BTreeMap, BTreeSet};
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_string(), to.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(circles(&g), [["a", "b", "c"]]);
}

/// src/lib.rs's module map names every top-level module, so a newcomer finds each from it.
#[test]
fn the_module_map_names_every_top_level_module() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let map: String = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join(" ");
    let missing: Vec<String> = module_graph()
        .into_keys()
        .filter(|m| !map.contains(&format!("`{m}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "not in src/lib.rs's module map: {missing:?}"
    );
}
