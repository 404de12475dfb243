//! `spate merge`: the shards' results merged into the job's, printed and judged. Runs no load.

use super::print_bytes;
use crate::cli;
use crate::exit::{EXIT_NO_SUCCESS, EXIT_OK, EXIT_THRESHOLDS, EXIT_USAGE};
use crate::report;
use crate::ui::say;

/// `spate merge`: the shards' results merged into the job's, or why they are not one job's.
pub(super) fn merge(m: &cli::Merge) -> u8 {
    let merged = match crate::merge::merge(&m.runs, m.force, m.slo.as_ref()) {
        Ok(merged) => merged,
        Err(why) => {
            say(&format!("spate merge: {why}"));
            return EXIT_USAGE;
        }
    };
    for w in &merged.warnings {
        say(&format!("spate merge: warning: {w}"));
    }
    let json = report::merge::json(&merged);
    if let Some(path) = &m.html {
        let results: Vec<&crate::stats::Summary> = m
            .runs
            .iter()
            .filter(|(name, _)| merged.shards.iter().any(|r| r.file == *name))
            .map(|(_, s)| s)
            .collect();
        let page = report::merge_page(&merged, &results, &json);
        if let Err(e) = report::save::write(path, page.as_bytes()) {
            say(&format!("spate merge: --html {}: {e}", path.display()));
            return EXIT_USAGE;
        }
    }
    let text = match m.json {
        true => json,
        false => report::merge::text(&merged),
    };
    match print_bytes(text.as_bytes()) {
        EXIT_OK if merged.requests.successful == 0 => EXIT_NO_SUCCESS,
        EXIT_OK if merged.thresholds.iter().any(|v| !v.pass) => EXIT_THRESHOLDS,
        code => code,
    }
}
