//! Where a run's results go, checked before anything runs: the forms and files of `Output`, a
//! directory that is not there, two outputs naming one file, an output naming a file the run
//! reads. Writes nothing.

use std::path::PathBuf;

use super::args::{FormatArg, Forms, LoadArgs};
use super::{Exit, Show};
use crate::report::{Format, Output, save};

/// What says two paths are one file: the path with its directory resolved (links followed),
/// as it is now or will be once written.
pub(super) fn same_file(p: &std::path::Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    match (std::fs::canonicalize(dir), p.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => p.to_path_buf(),
    }
}

/// The files a run's load flags read: what no output of it may name.
pub(super) fn load_inputs(l: &LoadArgs) -> Vec<(&'static str, PathBuf)> {
    [
        ("-D", &l.body_file),
        ("--script", &l.script),
        ("--cacert", &l.cacert),
        ("--cert", &l.cert),
        ("--key", &l.key),
    ]
    .into_iter()
    .filter_map(|(flag, p)| p.clone().map(|p| (flag, p)))
    .collect()
}

/// An output that names a file the run reads would destroy it (`--live-json` as the run starts,
/// the others when it ends): refused before anything runs.
pub(super) fn outputs_spare_inputs(show: &Show, inputs: &[(&str, PathBuf)]) -> Result<(), Exit> {
    let o = &show.output;
    let outputs = [
        ("--save", &o.save),
        ("--csv-timeline", &o.csv_timeline),
        ("--csv-stages", &o.csv_stages),
        ("--html", &o.html),
        ("--hdr-log", &o.hdr_log),
        ("--live-json", &show.live_json),
    ];
    for (out_flag, path) in outputs {
        let Some(path) = path.as_ref().filter(|p| p.as_os_str() != "-") else {
            continue;
        };
        let id = same_file(path);
        if let Some((in_flag, _)) = inputs.iter().find(|(_, i)| same_file(i) == id) {
            return Err(Exit::usage(format!(
                "{out_flag} {} is the file {in_flag} reads: writing there would destroy it; give {out_flag} a path of its own",
                path.display()
            )));
        }
    }
    Ok(())
}

/// Where and how a result is shown, each file it is to be written to checked before anything
/// runs (a directory that does not exist is exit 2, not a lost result).
pub(super) fn output(
    f: Forms,
    hdr_log: Option<PathBuf>,
    live_json: Option<PathBuf>,
) -> Result<Output, Exit> {
    let files = [
        ("--save", &f.save),
        ("--csv-timeline", &f.csv_timeline),
        ("--csv-stages", &f.csv_stages),
        ("--html", &f.html),
        ("--hdr-log", &hdr_log),
        ("--live-json", &live_json),
    ];
    // One file for two forms would hold only the last one written.
    let named: Vec<(&str, &PathBuf, PathBuf)> = files
        .iter()
        .filter_map(|(flag, p)| p.as_ref().map(|p| (*flag, p, same_file(p))))
        .collect();
    for (i, (flag, path, id)) in named.iter().enumerate() {
        if let Some((other, _, _)) = named[..i].iter().find(|(_, _, o)| o == id) {
            return Err(Exit::usage(format!(
                "{other} and {flag} name the same file ({}): each writes a form of its own, so give each its own path",
                path.display()
            )));
        }
    }
    for (flag, path) in files {
        if let Some(path) = path {
            save::check(path).map_err(|e| {
                Exit::usage(format!(
                    "{flag} {}: cannot write there: {e}",
                    path.display()
                ))
            })?;
        }
    }
    Ok(Output {
        format: match f.format {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
            FormatArg::Csv => Format::Csv,
        },
        save: f.save,
        csv_timeline: f.csv_timeline,
        csv_stages: f.csv_stages,
        html: f.html,
        hdr_log,
        no_color: f.no_color,
        log_result: false,
        print: true,
    })
}
