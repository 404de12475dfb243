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
        output: output(r.forms, None)?,
    })
}

/// A saved result (the JSON, or an `--html` page with the JSON inside), or why it is not one
/// this spate can show.
pub fn parse_result(bytes: &[u8]) -> Result<crate::report::Report, String> {
    use crate::stats::SCHEMA_VERSION;
    let page = std::str::from_utf8(bytes)
        .ok()
        .filter(|t| t.trim_start().starts_with("<!DOCTYPE html"));
    let bytes = match page {
        Some(page) => crate::report::embedded_json(page)
            .ok_or("an HTML page without a spate result in it")?
            .as_bytes(),
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
