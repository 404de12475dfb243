//! The HTML report's comparison with `--baseline`: the same rows, changes and gate sentences as
//! the text report's (shared from `report::baseline`), each figure marked with its JSON field.

use std::fmt::Write as _;

use super::esc;
use super::tables::{Table, val};
use crate::report::Report;
use crate::report::baseline::{change, gate_sentence, value};

pub fn section(r: &Report) -> Option<String> {
    let c = r.baseline.as_ref()?;
    let mut tb = Table::new("num", &["metric", "baseline", "this run", "change", "gate"]);
    for (i, d) in c.rows.iter().enumerate() {
        let k = format!("baseline.rows.{i}");
        let gate = match (d.limit, d.pass) {
            (None, _) => "<td></td>".to_owned(),
            (Some(_), true) => r#"<td class="pass">PASS</td>"#.to_owned(),
            (Some(_), false) => r#"<td class="fail">FAIL</td>"#.to_owned(),
        };
        tb.row(
            &d.metric,
            &[
                val(&format!("{k}.baseline"), value(&d.unit, d.baseline)),
                val(&format!("{k}.now"), value(&d.unit, d.now)),
                format!("<td>{}</td>", esc(&change(d))),
                gate,
            ],
        );
    }
    let mut out = format!(
        r#"<p class="note">Against {}.</p>"#,
        esc(&match c.files.as_slice() {
            [one] => one.clone(),
            many => format!(
                "the median of {} saved runs ({})",
                many.len(),
                many.join(", ")
            ),
        })
    );
    out.push_str(&tb.finish());
    let mut notes = String::new();
    for d in c.rows.iter().filter(|d| d.limit.is_some()) {
        let verdict = if d.pass { "PASS" } else { "FAIL" };
        let class = if d.pass { "pass" } else { "fail" };
        let _ = write!(
            notes,
            r#"<li><span class="{class}">{verdict}</span> {}</li>"#,
            esc(&gate_sentence(d))
        );
    }
    for d in &c.differences {
        let _ = write!(
            notes,
            "<li>{} was {} in the baseline and is {} here</li>",
            esc(&d.setting),
            esc(&d.baseline),
            esc(&d.now)
        );
    }
    if !notes.is_empty() {
        let _ = write!(out, r#"<ul class="insight">{notes}</ul>"#);
    }
    Some(out)
}
