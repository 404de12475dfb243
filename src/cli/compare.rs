//! `spate compare`: the targets (URL or NAME=URL, on the command line or in a --targets file
//! with flags of their own), each made into its own plan, the reference among them and the
//! verdict's settings. Runs nothing.

use std::ffi::OsString;
use std::path::Path;

use clap::{CommandFactory as _, FromArgMatches as _, Parser};

use super::args::{Cli, CompareArgs, CompareFormat, CompareOrder, LoadArgs, Sub};
use super::load::plan;
use super::{Command, Compare, Exit, error_text, one_line};
use crate::report::versus::CompareForm;

/// A --targets file is a short list written by hand.
const TARGETS_LIMIT: u64 = 1 << 20;

/// A line of a --targets file: its TARGET word, the flags for that target alone, and where it
/// was written (FILE:LINE) for messages.
#[derive(Debug, PartialEq)]
struct Line {
    target: String,
    flags: Vec<String>,
    at: String,
}

/// The flags a --targets line may carry: load flags and nothing else.
#[derive(Debug, Parser)]
#[command(
    name = "a --targets line",
    no_binary_name = true,
    disable_help_flag = true
)]
struct LineFlags {
    #[command(flatten)]
    _load: LoadArgs,
}

/// The targets of a --targets file, each line checked on its own.
fn read_lines(path: &Path) -> Result<Vec<Line>, Exit> {
    let bytes = crate::files::read("--targets", path, TARGETS_LIMIT).map_err(Exit::usage)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Exit::usage(format!("--targets {}: not UTF-8 text", path.display())))?;
    let mut out = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let at = format!("{}:{}", path.display(), n + 1);
        let mut words = shlex::split(raw)
            .ok_or_else(|| Exit::usage(format!("{at}: a quote is not closed")))?
            .into_iter();
        let Some(target) = words.next() else { continue };
        if target.starts_with('-') {
            return Err(Exit::usage(format!(
                "{at}: a line starts with its target (URL or NAME=URL), then its flags"
            )));
        }
        let flags: Vec<String> = words.collect();
        LineFlags::try_parse_from(&flags)
            .map_err(|e| Exit::usage(format!("{at}: {}", one_line(&error_text(&e)))))?;
        out.push(Line { target, flags, at });
    }
    Ok(out)
}

/// The load flags of a --targets line: the command line's with the line's flags after them,
/// where a later flag replaces an earlier one (and -H adds to the headers), as do the flags
/// that exclude each other: -n and -z, and the HTTP versions.
fn line_load(argv: &[OsString], line: &Line) -> Result<LoadArgs, Exit> {
    let mut words = argv.to_vec();
    let at = words.iter().position(|w| w == "--").unwrap_or(words.len());
    words.splice(at..at, line.flags.iter().map(OsString::from));
    let either = |c: clap::Command, a: &'static str, b: &'static str| {
        c.mut_arg(a, |x| x.overrides_with(b))
            .mut_arg(b, |x| x.overrides_with(a))
    };
    let matches = Cli::command()
        .mut_subcommand("compare", |c| {
            let mut c = either(c.args_override_self(true), "requests", "duration");
            let versions = ["http1", "http2", "http3", "http_version"];
            for (i, a) in versions.iter().enumerate() {
                for b in &versions[i + 1..] {
                    c = either(c, a, b);
                }
            }
            c
        })
        .try_get_matches_from(words)
        .and_then(|m| Cli::from_arg_matches(&m))
        .map_err(|e| Exit::usage(format!("{}: {}", line.at, one_line(&error_text(&e)))))?;
    match matches.command {
        Some(Sub::Compare(c)) => Ok(c.load),
        _ => unreachable!("the command line parsed as spate compare before"),
    }
}

/// A target's name: as given in NAME=URL, else its host and port (or its place, when two
/// targets share one).
fn named(targets: &[String]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = targets
        .iter()
        .map(|t| match t.split_once('=') {
            Some((name, url)) if !name.contains("://") && !name.is_empty() => {
                (name.to_owned(), url.to_owned())
            }
            _ => {
                let host = t
                    .split_once("://")
                    .map_or(t.as_str(), |(_, rest)| rest)
                    .split('/')
                    .next()
                    .unwrap_or(t);
                (host.to_owned(), t.clone())
            }
        })
        .collect();
    let names: Vec<String> = out.iter().map(|(n, _)| n.clone()).collect();
    for (i, (name, _)) in out.iter_mut().enumerate() {
        if names.iter().filter(|n| **n == *name).count() > 1 {
            *name = format!("{name}#{}", i + 1);
        }
    }
    out
}

pub fn command(c: CompareArgs, argv: &[OsString]) -> Result<Command, Exit> {
    let lines = match &c.targets_file {
        Some(path) => read_lines(path)?,
        None => Vec::new(),
    };
    let mut loads: Vec<LoadArgs> = vec![c.load.clone(); c.targets.len()];
    for line in &lines {
        loads.push(line_load(argv, line)?);
    }
    let all: Vec<String> = c
        .targets
        .iter()
        .cloned()
        .chain(lines.into_iter().map(|l| l.target))
        .collect();
    if all.len() < 2 {
        return Err(Exit::usage(
            "spate compare needs at least two targets (URL or NAME=URL); to run one, use spate URL",
        ));
    }
    let mcp = super::mcp::calls(&c.mcp).map_err(|e| Exit::usage(format!("compare: {e}")))?;
    let mcp = match (mcp.calls.is_empty(), c.mcp.speaking()) {
        (false, _) => Some(mcp),
        (true, None) => None,
        (true, Some(flag)) => {
            return Err(Exit::usage(format!(
                "compare: {flag} is for MCP servers: name the calls too (--tool, --args-file, --resource, --prompt or --tools-list)"
            )));
        }
    };
    if loads.iter().any(|l| l.verbose) {
        return Err(Exit::usage(
            "-v shows one exchange of one URL: use it with spate URL, not spate compare",
        ));
    }
    let named = named(&all);
    let reference = match &c.reference {
        None => 0,
        Some(r) => named
            .iter()
            .position(|(n, u)| n == r || u == r)
            .ok_or_else(|| {
                let names: Vec<&str> = named.iter().map(|(n, _)| n.as_str()).collect();
                Exit::usage(format!(
                    "--reference {r}: not one of the targets ({})",
                    names.join(", ")
                ))
            })?,
    };
    if let Some(dir) = &c.save_dir {
        super::check_save_dir(dir)?;
        let names: Vec<&str> = named.iter().map(|(n, _)| n.as_str()).collect();
        if let Some((a, b)) = crate::series::same_file(&names) {
            return Err(Exit::usage(format!(
                "--save-dir: targets {a:?} and {b:?} would be saved to the same files (names keep only letters, digits, '.', '_' and '-', and case may fold): name one NAME=URL"
            )));
        }
    }
    if let Some(path) = &c.html {
        crate::report::save::check(path).map_err(|e| {
            Exit::usage(format!(
                "--html {}: cannot write there: {e}",
                path.display()
            ))
        })?;
    }
    let mut targets = Vec::new();
    for ((name, url), load) in named.into_iter().zip(loads) {
        if mcp.is_some() {
            super::mcp::http_flags(&load).map_err(|e| Exit::usage(format!("{name}: {e}")))?;
        }
        let super::load::Planned {
            plan: mut p,
            script,
            notes,
        } = plan(load, &url).map_err(|e| {
            let why = e.message.strip_prefix("spate: ").unwrap_or(&e.message);
            Exit::usage(format!("{name}: {why}"))
        })?;
        if mcp.is_some() {
            super::mcp::spoken(&mut p);
        }
        for n in notes {
            crate::ui::say(&n);
        }
        super::load::series_script(script.as_ref(), "compare")?;
        targets.push(super::CompareTarget {
            name,
            plan: p,
            script,
        });
    }
    if c.seed.is_some() && c.order != CompareOrder::Random {
        return Err(Exit::usage(
            "--seed shuffles --order random; add it, or drop --seed",
        ));
    }
    let shuffle = (c.order == CompareOrder::Random).then(|| {
        c.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
    });
    if c.load.dry_run {
        let plans: Vec<_> = targets
            .iter()
            .map(|t| (t.name.clone(), &t.plan, t.script.as_ref()))
            .collect();
        return super::dry_run::dry_runs(
            &format!("spate compare ({} rounds)", c.rounds),
            &plans,
            mcp.is_some(),
        );
    }
    Ok(Command::Compare(Compare {
        targets,
        rounds: c.rounds,
        shuffle,
        reference,
        alpha: c.alpha,
        noise: c.noise,
        format: match c.format {
            CompareFormat::Text => CompareForm::Text,
            CompareFormat::Markdown => CompareForm::Markdown,
            CompareFormat::Json => CompareForm::Json,
        },
        save_dir: c.save_dir,
        html: c.html,
        progress: !c.no_progress,
        mcp,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_named_by_their_name_or_host() {
        let n = named(&[
            "new=http://127.0.0.1:8081/".into(),
            "http://127.0.0.1:8080/x".into(),
            "http://127.0.0.1:8080/y".into(),
        ]);
        assert_eq!(n[0], ("new".into(), "http://127.0.0.1:8081/".into()));
        assert_eq!(n[1].0, "127.0.0.1:8080#2");
        assert_eq!(n[2].0, "127.0.0.1:8080#3");
    }
}

#[cfg(test)]
mod flags {
    use crate::cli::{Command, parse};

    fn compare(args: &[&str]) -> crate::cli::Compare {
        let argv = ["spate", "compare"].into_iter().chain(args.iter().copied());
        match parse(argv) {
            Ok(Command::Compare(c)) => c,
            other => panic!("expected a comparison, got {other:?}"),
        }
    }

    #[test]
    fn the_judging_flags_reach_the_comparison() {
        let c = compare(&["http://a/", "b=http://b/"]);
        assert_eq!(
            (c.rounds, c.reference, c.alpha, c.noise),
            (5, 0, 0.05, 0.02)
        );
        assert_eq!(c.shuffle, None);
        let c = compare(&[
            "--rounds",
            "7",
            "--reference",
            "b",
            "--alpha",
            "0.2",
            "--noise",
            "5%",
            "--order",
            "random",
            "--seed",
            "9",
            "-c",
            "3",
            "http://a/",
            "b=http://b/",
        ]);
        assert_eq!((c.rounds, c.reference, c.alpha, c.noise), (7, 1, 0.2, 0.05));
        assert_eq!(c.shuffle, Some(9));
        assert!(
            c.targets.iter().all(|t| t.plan.connections == 3),
            "the load flags reach every target"
        );
        assert_eq!(
            compare(&["--reference", "http://b/", "http://a/", "http://b/"]).reference,
            1
        );
    }

    #[test]
    fn calls_make_each_target_an_mcp_server_sent_posts() {
        assert!(compare(&["http://a/", "http://b/"]).mcp.is_none());
        let c = compare(&[
            "--tool",
            "add:2",
            "--args",
            r#"add={"a":1}"#,
            "--session",
            "shared",
            "http://a/mcp",
            "b=http://b/mcp",
        ]);
        let m = c.mcp.expect("MCP calls");
        assert_eq!(m.calls.len(), 1);
        assert_eq!(m.session, crate::mcp::SessionMode::Shared);
        for p in c.targets.iter().map(|t| &t.plan) {
            assert_eq!(p.method, "POST");
            assert!(!p.compression, "answers are read as JSON");
        }
    }

    #[test]
    fn mcp_flags_without_calls_or_with_http_flags_are_refused() {
        let err = |args: &[&str]| {
            let argv = ["spate", "compare"].into_iter().chain(args.iter().copied());
            let e = parse(argv).unwrap_err();
            assert_eq!(e.code, crate::exit::EXIT_USAGE, "{args:?}");
            assert_eq!(e.message.lines().count(), 1, "{}", e.message);
            e.message
        };
        for flag in [
            &["--session", "per-request"][..],
            &["--transport", "sse"],
            &["--protocol-version", "2025-11-25"],
            &["--progress"],
        ] {
            let e = err(&[flag, &["http://a/", "http://b/"]].concat());
            assert!(e.contains("is for MCP servers: name the calls"), "{e}");
            assert!(e.contains(flag[0]), "{e}");
        }
        let e = err(&["--tool", "add", "-m", "PUT", "http://a/", "b=http://b/"]);
        assert!(e.contains("a: -m does not apply"), "{e}");
        let e = err(&[
            "--tool",
            "add",
            "--args",
            "add=[1]",
            "http://a/",
            "http://b/",
        ]);
        assert!(e.starts_with("spate: compare: --args add: "), "{e}");
    }
}

#[cfg(test)]
mod targets_file {
    use crate::cli::{Command, parse};
    use crate::plan::{Protocol, Stop};

    fn file(name: &str, text: &str) -> crate::scratch::ScratchFile {
        crate::scratch::ScratchFile::new(name, text)
    }

    fn compare(args: &[&str]) -> Result<crate::cli::Compare, String> {
        let argv = ["spate", "compare"].into_iter().chain(args.iter().copied());
        match parse(argv) {
            Ok(Command::Compare(c)) => Ok(c),
            Ok(other) => panic!("expected a comparison, got {other:?}"),
            Err(e) => Err(e.message),
        }
    }

    #[test]
    fn a_line_flags_replace_the_common_ones_for_that_target_alone() {
        let path = file(
            "targets-ok",
            "# targets\n\n  h2=http://127.0.0.1:1/ --http2 -c 7 -n 9 -H 'X-Side: b c' # h2c\n",
        );
        let c = compare(&[
            "-c",
            "3",
            "-z",
            "1s",
            "--http1.1",
            "-H",
            "X-All: 1",
            "a=http://127.0.0.1:2/",
            "--targets",
            path.to_str().unwrap(),
        ])
        .unwrap();
        let names: Vec<&str> = c.targets.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "h2"]);
        let (a, b) = (&c.targets[0].plan, &c.targets[1].plan);
        assert_eq!((a.connections, b.connections), (3, 7));
        assert!(matches!(a.protocol, Protocol::Http1));
        assert_eq!(a.stop, Stop::Duration(std::time::Duration::from_secs(1)));
        assert_eq!(b.stop, Stop::Requests(9));
        assert!(matches!(b.protocol, Protocol::Http2), "{:?}", b.protocol);
        let header = |n: &str, v: &str| (n.to_owned(), v.to_owned());
        assert_eq!(a.headers, [header("X-All", "1")]);
        assert_eq!(b.headers, [header("X-All", "1"), header("X-Side", "b c")]);
    }

    #[test]
    fn a_bad_line_is_named_by_its_file_and_number() {
        let cases = [
            (
                "quote",
                "http://a/\nhttp://b/ -H 'X: y\n",
                ":2: a quote is not closed",
            ),
            (
                "flag-first",
                "--http2 http://a/\n",
                ":1: a line starts with its target",
            ),
            (
                "rounds",
                "http://a/\nhttp://b/ --rounds 3\n",
                ":2: unexpected argument '--rounds'",
            ),
            (
                "extra",
                "http://a/ http://b/\n",
                ":1: unexpected argument 'http://b/'",
            ),
            (
                "value",
                "http://a/\nhttp://b/ -c lots\n",
                ":2: invalid value 'lots'",
            ),
            (
                "verbose",
                "http://a/\nhttp://b/ -v\n",
                "-v shows one exchange",
            ),
        ];
        for (name, text, expected) in cases {
            let path = file(name, text);
            let e = compare(&["--targets", path.to_str().unwrap()]).unwrap_err();
            assert!(e.contains(expected), "{name}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        let one = file("one", "http://a/\n");
        let e = compare(&["--targets", one.to_str().unwrap()]).unwrap_err();
        assert!(e.contains("at least two targets"), "{e}");
        let e = compare(&["--targets", "/nonexistent/targets"]).unwrap_err();
        assert!(
            e.contains("cannot read --targets /nonexistent/targets"),
            "{e}"
        );
    }
}
