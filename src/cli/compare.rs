//! `spate compare`: the targets (URL or NAME=URL), each with the same load flags made into its
//! own plan, the reference among them and the verdict's settings. Runs nothing.

use super::args::{CompareArgs, CompareFormat, CompareOrder};
use super::load::plan;
use super::{Command, Compare, Exit};
use crate::report::versus::CompareForm;

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

pub fn command(c: CompareArgs) -> Result<Command, Exit> {
    if c.targets.len() < 2 {
        return Err(Exit::usage(
            "spate compare needs at least two targets (URL or NAME=URL); to run one, use spate URL",
        ));
    }
    if c.load.verbose {
        return Err(Exit::usage(
            "-v shows one exchange of one URL: use it with spate URL, not spate compare",
        ));
    }
    let named = named(&c.targets);
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
    if let Some(dir) = &c.save_dir
        && !dir.is_dir()
    {
        return Err(Exit::usage(format!(
            "--save-dir {}: not a directory",
            dir.display()
        )));
    }
    let mut targets = Vec::new();
    for (name, url) in named {
        let (p, notes) = plan(c.load.clone(), &url)
            .map_err(|e| Exit::usage(format!("{name}: {}", e.message)))?;
        for n in notes {
            eprintln!("{n}");
        }
        targets.push((name, p));
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
        progress: !c.no_progress,
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
            c.targets.iter().all(|(_, p)| p.connections == 3),
            "the load flags reach every target"
        );
        assert_eq!(
            compare(&["--reference", "http://b/", "http://a/", "http://b/"]).reference,
            1
        );
    }
}
