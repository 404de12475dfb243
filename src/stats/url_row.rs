//! A request list's rows in the result: each request's counts, percentiles and status codes,
//! from what the load threads recorded by its place in the list. Facts only.

use serde::{Deserialize, Serialize};

use super::StatusRow;
use crate::plan::Plan;

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// One request of a request list (or the rest of them): what became of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UrlRow {
    /// Method and URL, or "other (N requests)" for the rest of a long list.
    pub request: String,
    pub completed: u64,
    pub failed: u64,
    /// Completed with a status of 400 or above.
    pub error_status: u64,
    pub p50_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    pub status_codes: Vec<StatusRow>,
}

/// The names of `list`'s rows, in the order the threads record them: its own labels, or each
/// request's method and URL (credentials masked), then "other (N requests)" past
/// `request_list::MAX_TRACKED`.
pub fn names(plan: &Plan, list: &crate::request_list::RequestList) -> Vec<String> {
    use crate::request_list::MAX_TRACKED;
    let shown = list.entries.len().min(MAX_TRACKED);
    let mut out: Vec<String> = (0..shown)
        .map(|i| {
            let e = &list.entries[i];
            let method = e.method.as_deref().unwrap_or(&plan.method);
            match list.labels.get(i) {
                Some(l) => l.clone(),
                None => format!("{method} {}", crate::redact::url(&e.target.url)),
            }
        })
        .collect();
    if list.entries.len() > MAX_TRACKED {
        out.push(format!(
            "other ({} requests)",
            list.entries.len() - MAX_TRACKED
        ));
    }
    out
}

impl UrlRow {
    /// The rows of `list` from what its requests did (`per_entry`, by place).
    pub(super) fn of(
        plan: &Plan,
        list: &crate::request_list::RequestList,
        per_entry: &[super::EntryStats],
    ) -> Vec<UrlRow> {
        let none = super::EntryStats::default();
        names(plan, list)
            .into_iter()
            .enumerate()
            .map(|(i, label)| UrlRow::from(label, per_entry.get(i).unwrap_or(&none)))
            .collect()
    }

    fn from(request: String, e: &super::EntryStats) -> UrlRow {
        let q = |p: f64| (!e.latency.is_empty()).then(|| ms(e.latency.value_at_quantile(p)));
        let mut status_codes: Vec<StatusRow> = e
            .status
            .iter()
            .map(|&(code, count)| StatusRow { code, count })
            .collect();
        status_codes.sort_by_key(|r| r.code);
        UrlRow {
            request,
            completed: e.completed,
            failed: e.failed,
            error_status: e
                .status
                .iter()
                .filter(|(c, _)| *c >= 400)
                .map(|(_, n)| n)
                .sum(),
            p50_ms: q(0.5),
            p90_ms: q(0.9),
            p99_ms: q(0.99),
            max_ms: (!e.latency.is_empty()).then(|| ms(e.latency.max())),
            status_codes,
        }
    }
}
