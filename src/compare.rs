//! `spate compare`'s runs: every target once a round, in the order given, each an ordinary run
//! of its own plan; then one judgement of all rounds and its report. Ctrl-C ends the comparison
//! after the run in progress (whose part-run is left out) and reports the whole rounds so far.
//! Targets that are MCP servers get their runs' plans from `mcp`.

mod mcp;

use crate::cli::Compare;
use crate::exit::EXIT_OK;
use crate::report;
use crate::report::versus::CompareForm;
use crate::series::{Ended, Series};
use crate::stats::Summary;

/// Runs the comparison and prints its report; returns the exit code.
pub fn run(c: &Compare) -> u8 {
    let mut rounds: Vec<Vec<Summary>> = vec![Vec::new(); c.targets.len()];
    let total = c.rounds as usize * c.targets.len();
    if let Some(seed) = c.shuffle {
        crate::ui::say(&format!(
            "spate compare: targets in a random order each round (--seed {seed} repeats it)"
        ));
    }
    let mut servers = match &c.mcp {
        Some(calls) => match mcp::Servers::ask(&c.targets, calls) {
            Ok(s) => Some(s),
            Err(code) => return code,
        },
        None => None,
    };
    let mut series = Series::new("spate compare", total, c.save_dir.clone(), c.progress);
    'rounds: for round in 1..=c.rounds {
        for i in order(c.targets.len(), round, c.shuffle) {
            let crate::cli::CompareTarget { name, plan, script } = &c.targets[i];
            let (step, file) = (format!("round {round} "), format!("{name}-{round}"));
            let staged = match &mut servers {
                Some(s) => match s.take(i, name, plan) {
                    Ok(staged) => Some(staged),
                    Err(code) => return code,
                },
                None => None,
            };
            let run = series.run(
                &step,
                name,
                &file,
                staged.as_ref().map_or(plan, |s| &s.plan),
                script.as_ref(),
            );
            if let (Some(s), Some(staged)) = (&mut servers, staged) {
                s.done(i, staged);
            }
            match run {
                Ok(s) => rounds[i].push(s),
                Err(Ended::Interrupted) => break 'rounds,
                Err(Ended::Failed(code)) => return code,
            }
        }
    }
    drop(servers);
    // Whole rounds only: a round cut short would compare some targets and not others.
    let whole = rounds.iter().map(Vec::len).min().unwrap_or(0);
    let interrupted = whole < c.rounds as usize;
    if whole < 2 {
        crate::ui::say(&format!(
            "spate compare: stopped after {whole} whole round(s); at least 2 are needed to compare"
        ));
        return crate::exit::EXIT_INTERRUPTED;
    }
    for r in &mut rounds {
        r.truncate(whole);
    }
    let runs: Vec<(String, String, Vec<Summary>)> = c
        .targets
        .iter()
        .zip(&rounds)
        .map(|(t, r)| {
            let url = crate::redact::url(&t.plan.target.url).into_owned();
            (t.name.clone(), url, r.clone())
        })
        .collect();
    let v = crate::analysis::versus(&runs, c.reference, c.alpha, c.noise);
    let json = report::versus::json(&v, c.shuffle);
    if let Some(path) = &c.html {
        let page = report::compare_page(&v, &rounds, &json);
        if let Err(e) = report::save::write(path, page.as_bytes()) {
            crate::ui::say(&format!("spate compare: --html {}: {e}", path.display()));
            return crate::exit::EXIT_USAGE;
        }
    }
    let text = match c.format {
        CompareForm::Text => {
            // What each round ran: the load line of the run's own header.
            let loads: Vec<String> = c
                .targets
                .iter()
                .map(|t| {
                    report::plan_words(&t.plan)
                        .get(1)
                        .cloned()
                        .unwrap_or_default()
                })
                .collect();
            report::versus::text(&v, &loads)
        }
        CompareForm::Markdown => report::versus::markdown(&v),
        CompareForm::Json => json,
    };
    print!("{text}");
    if interrupted {
        crate::ui::say(&format!(
            "spate compare: stopped by a signal; {whole} of {} rounds compared",
            c.rounds
        ));
        return crate::exit::EXIT_INTERRUPTED;
    }
    EXIT_OK
}

/// The order of the targets in `round`: as given, or shuffled (Fisher-Yates) with draws from
/// SplitMix64 started at `seed` and the round, the same for the same seed.
fn order(n: usize, round: u16, seed: Option<u64>) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    let Some(seed) = seed else { return v };
    let mut state = seed ^ u64::from(round).wrapping_mul(0xd1b5_4a32_d192_ed03);
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for i in (1..n).rev() {
        v.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_repeats_its_order_and_rounds_differ() {
        assert_eq!(order(3, 1, None), [0, 1, 2]);
        let runs: Vec<Vec<usize>> = (1..=20).map(|r| order(4, r, Some(42))).collect();
        for (r, o) in runs.iter().enumerate() {
            assert_eq!(*o, order(4, r as u16 + 1, Some(42)), "repeatable");
            let mut sorted = o.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, [0, 1, 2, 3], "a permutation");
        }
        let distinct: std::collections::BTreeSet<_> = runs.iter().collect();
        assert!(distinct.len() > 5, "shuffled anew each round: {runs:?}");
        let firsts: std::collections::BTreeSet<_> = runs.iter().map(|o| o[0]).collect();
        assert_eq!(
            firsts.len(),
            4,
            "every target goes first sometimes: {runs:?}"
        );
    }
}
