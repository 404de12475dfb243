//! `spate sweep`: the URL (and --vs reference) with the load flags made into one plan per
//! concurrency level, checked before anything runs. Runs nothing.

use std::time::Duration;

use super::args::SweepArgs;
use super::load::plan;
use super::series_args::CompareFormat;
use super::{Command, Exit, Sweep};
use crate::plan::Plan;
use crate::report::versus::CompareForm;

/// A level's length when neither -n nor -z is given: long enough for a rate at 1000
/// connections, short enough for a sweep of several levels.
pub const DEFAULT_LEVEL: Duration = Duration::from_secs(5);

/// `base` at each level.
fn at_levels(base: &Plan, levels: &[u32]) -> Result<Vec<Plan>, Exit> {
    levels
        .iter()
        .map(|&c| {
            let mut p = base.clone();
            p.connections = c;
            p.validate()
                .map_err(|e| Exit::usage(format!("at {c} connections: {e}")))?;
            Ok(p)
        })
        .collect()
}

pub fn command(s: SweepArgs) -> Result<Command, Exit> {
    let dry_run = s.load.dry_run;
    let mut load = s.load;
    if let Some(c) = load.connections.connections {
        return Err(Exit::usage(format!(
            "-c {c}: --conc sets the connections of each level; drop -c"
        )));
    }
    if load.verbose {
        return Err(Exit::usage(
            "-v shows one exchange of one URL: use it with spate URL, not spate sweep",
        ));
    }
    if let Some(dir) = &s.save_dir {
        super::check_save_dir(dir)?;
    }
    if let Some(path) = &s.html {
        crate::report::save::check(path).map_err(|e| {
            Exit::usage(format!(
                "--html {}: cannot write there: {e}",
                path.display()
            ))
        })?;
    }
    let levels = s.conc.0;
    let most = *levels.last().unwrap_or(&1);
    if let Some(n) = load.requests
        && n < u64::from(most)
    {
        return Err(Exit::usage(format!(
            "-n {n} is fewer requests than the {most} connections of the last level: give each \
             level at least as many (or -z)"
        )));
    }
    if load.requests.is_none() && load.duration.is_none() {
        load.duration = Some(DEFAULT_LEVEL);
    }
    load.connections.connections = Some(most);
    let super::load::Planned {
        plan: target,
        script,
        notes,
    } = plan(load.clone(), &s.url)?;
    let vs = match &s.vs {
        Some(url) => {
            Some(plan(load, url).map_err(|e| Exit::usage(format!("--vs: {}", e.message)))?)
        }
        None => None,
    };
    for n in notes.iter().chain(vs.iter().flat_map(|v| &v.notes)) {
        crate::ui::say(n);
    }
    super::load::series_script(script.as_ref(), "sweep")?;
    if let Some(v) = &vs {
        super::load::series_script(v.script.as_ref(), "sweep")?;
    }
    if dry_run {
        let at: Vec<String> = levels.iter().map(u32::to_string).collect();
        let first = at_levels(&target, &levels[..1])?;
        let mut plans = vec![("the first level".to_string(), &first[0], script.as_ref())];
        let vs_first = match &vs {
            Some(v) => at_levels(&v.plan, &levels[..1])?,
            None => Vec::new(),
        };
        if let (Some(v), Some(first)) = (&vs, vs_first.first()) {
            plans.push((
                "--vs, at the first level".to_string(),
                first,
                v.script.as_ref(),
            ));
        }
        return super::dry_run::dry_runs(
            &format!("spate sweep (levels {})", at.join(", ")),
            &plans,
            false,
        );
    }
    Ok(Command::Sweep(Sweep {
        runs: at_levels(&target, &levels)?,
        script,
        vs: match &vs {
            Some(v) => Some(at_levels(&v.plan, &levels)?),
            None => None,
        },
        vs_script: vs.and_then(|v| v.script),
        levels,
        format: match s.format {
            CompareFormat::Text => CompareForm::Text,
            CompareFormat::Markdown => CompareForm::Markdown,
            CompareFormat::Json => CompareForm::Json,
        },
        save_dir: s.save_dir,
        html: s.html,
        progress: !s.no_progress,
    }))
}
