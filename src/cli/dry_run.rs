//! `--dry-run` of the commands of several runs (compare, sweep, mcp): each run's plan as a run's
//! `--dry-run` shows it, under one title. Prints nothing itself: it returns what to print.

use super::{Command, Exit};
use crate::plan::Plan;
use crate::script::Loaded;

/// `--dry-run` of a command of several runs: `title`, then each run's plan (named, with its
/// script) as a run's
/// `--dry-run` shows it. `mcp`: the requests are MCP calls, built from the server's tools when
/// the run starts, so none is shown.
pub(super) fn dry_runs(
    title: &str,
    plans: &[(String, &Plan, Option<&Loaded>)],
    mcp: bool,
) -> Result<Command, Exit> {
    use std::fmt::Write as _;
    let mut out = format!("{title} --dry-run: the command line is valid; nothing was sent\n");
    for &(ref name, plan, script) in plans {
        if !name.is_empty() {
            let _ = writeln!(out, "{}:", crate::escape::term(name));
        }
        match mcp {
            true => {
                for l in crate::report::plan_words(plan) {
                    let _ = writeln!(out, "  {}", crate::escape::term(&l));
                }
                out.push_str(MCP_DRY);
            }
            false => {
                // A run's own first line is this command's title.
                let shown = crate::verbose::dry_run(plan, script).map_err(Exit::usage)?;
                out.push_str(shown.split_once('\n').map_or("", |(_, rest)| rest));
            }
        }
    }
    Ok(Command::Print(out.into_bytes()))
}

/// What `--dry-run` says of MCP calls instead of a request.
const MCP_DRY: &str = "  The calls are built from the server's tools/list when the run starts (its \
     revision decides their form); -v shows the handshake and the first call then.\n";
