//! `spate sweep`'s runs: at each concurrency level the target once (and with --vs the
//! reference, the two alternating which goes first); then the knee and the report. Ctrl-C ends
//! the sweep after the run in progress and reports the whole levels so far.

use crate::cli::Sweep;
use crate::exit::EXIT_OK;
use crate::report::sweep::{json, markdown, text};
use crate::report::versus::CompareForm;
use crate::series::{Ended, Series};
use crate::stats::Summary;

/// Runs the sweep and prints its report; returns the exit code.
pub fn run(s: &Sweep) -> u8 {
    let per_level = 1 + usize::from(s.vs.is_some());
    let mut series = Series::new(
        "spate sweep",
        s.levels.len() * per_level,
        s.save_dir.clone(),
        s.progress,
    );
    let mut done: Vec<(u32, Summary, Option<Summary>)> = Vec::new();
    let mut interrupted = false;
    for (i, &c) in s.levels.iter().enumerate() {
        let mut target = None;
        let mut reference = None;
        // With --vs the reference goes first at every other level, so that a drift of the
        // machine falls on neither side.
        let sides = if i % 2 == 1 {
            [true, false]
        } else {
            [false, true]
        };
        for is_reference in sides {
            let (label, file, plan, script) = match (is_reference, &s.vs) {
                (false, _) => (format!("c={c}"), format!("c-{c}"), &s.runs[i], &s.script),
                (true, Some(vs)) => (format!("c={c} vs"), format!("vs-{c}"), &vs[i], &s.vs_script),
                (true, None) => continue,
            };
            match series.run("", &label, &file, plan, script.as_ref()) {
                Ok(r) if is_reference => reference = Some(r),
                Ok(r) => target = Some(r),
                Err(Ended::Interrupted) => {
                    interrupted = true;
                    break;
                }
                Err(Ended::Failed(code)) => return code,
            }
        }
        if interrupted {
            break;
        }
        if let Some(t) = target {
            done.push((c, t, reference));
        }
    }
    if done.is_empty() {
        crate::ui::say("spate sweep: stopped before a level was complete");
        return crate::exit::EXIT_INTERRUPTED;
    }
    let sweep = crate::analysis::sweep(&done);
    let url = crate::redact::url(&s.runs[0].target.url).into_owned();
    let vs =
        s.vs.as_ref()
            .map(|v| crate::redact::url(&v[0].target.url).into_owned());
    let doc = json(&sweep, &url, vs.as_deref());
    if let Some(path) = &s.html {
        let each = crate::report::sweep::each(&s.runs[0]);
        let page = crate::report::sweep_page(&sweep, &url, vs.as_deref(), &each, &doc);
        if let Err(e) = crate::report::save::write(path, page.as_bytes()) {
            crate::ui::say(&format!("spate sweep: --html {}: {e}", path.display()));
            return crate::exit::EXIT_USAGE;
        }
    }
    let out = match s.format {
        CompareForm::Text => text(&sweep, &url, vs.as_deref(), &s.runs[0]),
        CompareForm::Markdown => markdown(&sweep, &url, vs.as_deref()),
        CompareForm::Json => doc,
    };
    print!("{out}");
    if interrupted {
        crate::ui::say(&format!(
            "spate sweep: stopped by a signal; {} of {} levels swept",
            done.len(),
            s.levels.len()
        ));
        return crate::exit::EXIT_INTERRUPTED;
    }
    EXIT_OK
}
