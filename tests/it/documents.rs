//! Every `spate ...` command line in README.md and docs/*.md (in their code blocks) parses as
//! this spate's command line: a renamed flag, a removed subcommand or a wrong value in a
//! document fails here. Commands are parsed in process (`spate::cli::parse`), never run; a file
//! a command names that is not here (a script, a result) is not the document's fault. And no
//! project document names an issue number.

use std::path::Path;

/// The `spate` command lines of the code blocks of `text`: a `$ ` prompt dropped, `\`
/// continuations joined, a pipe or a redirection and what follows cut.
fn commands(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        let line = line.trim();
        let (start, text) = match pending.take() {
            Some((at, before)) => (at, format!("{before} {line}")),
            None => {
                let l = line.strip_prefix("$ ").unwrap_or(line);
                // A report's first line ("spate 0.1.0  GET ...", "spate sweep: ...") is output.
                let second = l.split_whitespace().nth(1).unwrap_or_default();
                let output =
                    second.ends_with(':') || second.starts_with(|c: char| c.is_ascii_digit());
                if !l.starts_with("spate ") || output {
                    continue;
                }
                (i + 1, l.to_string())
            }
        };
        match text.strip_suffix('\\') {
            Some(more) => pending = Some((start, more.trim_end().to_string())),
            None => out.push((start, text)),
        }
    }
    out
}

/// The words of `command` up to a pipe, a redirection, `&&` or a comment.
fn words(command: &str) -> Option<Vec<String>> {
    let all = shlex::split(command)?;
    let end = all
        .iter()
        .position(|w| {
            ["|", "&&", ";", "#"].contains(&w.as_str())
                || w.starts_with('>')
                || w.starts_with("2>")
                || w.starts_with('<')
        })
        .unwrap_or(all.len());
    Some(all[..end].to_vec())
}

/// Whether a refusal is only that a file the command names is not here.
fn missing_file(message: &str) -> bool {
    [
        "cannot read",
        "No such file",
        "no such directory",
        "does not exist",
        "no such socket",
    ]
    .iter()
    .any(|m| message.contains(m))
}

#[test]
fn every_documented_command_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    let (mut checked, mut bad) = (0, Vec::new());
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, command) in commands(&text) {
            let at = format!("{}:{line}", file.strip_prefix(root).unwrap().display());
            let Some(argv) = words(&command) else {
                bad.push(format!("{at}: not shell words: {command}"));
                continue;
            };
            checked += 1;
            match spate::cli::parse(argv) {
                Ok(_) => {}
                Err(e) if e.code == 0 || missing_file(&e.message) => {}
                Err(e) => bad.push(format!("{at}: {command}\n    {}", e.message)),
            }
        }
    }
    assert!(checked > 50, "only {checked} commands found");
    assert!(
        bad.is_empty(),
        "{} of {checked}:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Project documents describe the product, not the tracker: no issue numbers.
#[test]
fn no_document_names_an_issue_number() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = ["README.md", "ROADMAP.md", "CHANGELOG.md", "BENCHMARK.md"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap().to_lowercase();
        for (i, line) in text.lines().enumerate() {
            let words: Vec<&str> = line.split_whitespace().collect();
            for w in words.windows(2) {
                let number = w[1].trim_start_matches('#');
                let named = w[0] == "issue" && number.starts_with(|c: char| c.is_ascii_digit());
                assert!(!named, "{}:{}: {line}", file.display(), i + 1);
            }
        }
    }
}

#[test]
fn commands_are_found_as_written() {
    let doc =
        "text\n```sh\n$ spate -c 2 \\\n  -z 1s http://a/ | jq .\nnot spate\n```\nspate outside\n";
    let found = commands(doc);
    assert_eq!(
        found,
        [(3, "spate -c 2 -z 1s http://a/ | jq .".to_string())]
    );
    assert_eq!(
        words(&found[0].1).unwrap(),
        ["spate", "-c", "2", "-z", "1s", "http://a/"]
    );
}
