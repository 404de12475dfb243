//! `spate report`: a saved result read back, checked to be one this spate writes, and shown
//! again through the same report code as a run. Must not run anything.

use super::args::ReportArgs;
use super::{Command, Exit, output};

/// Saved results larger than this are refused: a 10-minute run's is well under a megabyte.
pub(super) const RESULT_LIMIT: u64 = 256 << 20;

/// `spate report FILE`: the saved result, which must be one this spate writes (its
/// `schema_version`), and where to show it.
pub fn command(r: ReportArgs) -> Result<Command, Exit> {
    let shown = r.file.display().to_string();
    let bytes = crate::files::read("the result", &r.file, RESULT_LIMIT).map_err(Exit::usage)?;
    let summary = parse_result(&bytes).map_err(|e| Exit::usage(format!("{shown}: {e}")))?;
    Ok(Command::Report {
        summary: Box::new(summary),
        output: output(r.forms, None, None)?,
    })
}

/// The documents spate writes that are not one run's result: what each is, the id of its JSON
/// in its HTML page, and what to do instead.
const OTHERS: [(&str, &str, &str); 3] = [
    (
        "a spate compare result",
        "spate-compare",
        "spate report shows one run's result; compare --save-dir keeps each round's",
    ),
    (
        "a spate sweep result",
        "spate-sweep",
        "spate report shows one run's result; sweep --save-dir keeps each level's",
    ),
    (
        "a spate merge result",
        "spate-merge",
        "spate report shows one run's result; spate merge shows the job again from its shards' files",
    ),
];

/// Which of `OTHERS` the JSON `bytes` is, by the members only it has.
fn other_result(bytes: &[u8]) -> Option<(&'static str, &'static str, &'static str)> {
    #[derive(serde::Deserialize)]
    struct Members {
        targets: Option<serde::de::IgnoredAny>,
        alpha: Option<serde::de::IgnoredAny>,
        knee: Option<serde::de::IgnoredAny>,
        levels: Option<serde::de::IgnoredAny>,
        job: Option<serde::de::IgnoredAny>,
        shards: Option<serde::de::IgnoredAny>,
    }
    let m: Members = serde_json::from_slice(bytes).ok()?;
    let index = match m {
        Members {
            targets: Some(_),
            alpha: Some(_),
            ..
        } => 0,
        Members {
            knee: Some(_),
            levels: Some(_),
            ..
        } => 1,
        Members {
            job: Some(_),
            shards: Some(_),
            ..
        } => 2,
        _ => return None,
    };
    Some(OTHERS[index])
}

/// A saved result (the JSON, or an `--html` page with the JSON inside), or why it is not one
/// this spate can show.
pub fn parse_result(bytes: &[u8]) -> Result<crate::report::Report, String> {
    use crate::stats::SCHEMA_VERSION;
    let page = std::str::from_utf8(bytes)
        .ok()
        .filter(|t| t.trim_start().starts_with("<!DOCTYPE html"));
    let bytes = match page {
        Some(page) => match crate::report::embedded_json(page) {
            Some(json) => json.as_bytes(),
            None => {
                let other = OTHERS
                    .iter()
                    .find(|(_, id, _)| page.contains(&format!(r#"id="{id}""#)));
                return Err(match other {
                    Some((what, _, instead)) => {
                        format!("the HTML page of {what}, not of one run: {instead}")
                    }
                    None => "an HTML page without a spate result in it".into(),
                });
            }
        },
        None => bytes,
    };
    /// What says which spate wrote a result, read before the rest.
    #[derive(serde::Deserialize)]
    struct Version {
        schema_version: Option<u64>,
        spate_version: Option<String>,
    }
    let v: Version = serde_json::from_slice(bytes)
        .map_err(|e| format!("not a spate result: it is not JSON of one ({e})"))?;
    if let Some((what, _, instead)) = other_result(bytes) {
        return Err(format!("{what}, not one run's: {instead}"));
    }
    match v.schema_version {
        Some(n) if n == u64::from(SCHEMA_VERSION) => {}
        Some(n) => {
            return Err(format!(
                "its schema_version is {n}; this spate reads {SCHEMA_VERSION} (spate {} wrote it)",
                v.spate_version.as_deref().unwrap_or("unknown")
            ));
        }
        None => return Err("not a spate result: it has no schema_version".into()),
    }
    let report =
        crate::report::Report::from_json(bytes).map_err(|e| format!("not a spate result: {e}"))?;
    match report.run.inconsistency() {
        Some(why) => Err(why),
        None => Ok(report),
    }
}
