//! `spate compare` of MCP servers: every target asked for its tools before the first round (a
//! target that is not one, or lacks a tool, stops the comparison before any load), then each
//! run's plan staged with the calls. With `--session shared` each run opens its own session and
//! ends it after, as `spate mcp` does; otherwise a target's plan serves all its rounds.

use crate::cli::CompareTarget;
use crate::mcp::stage::{self, Calls, Refused, Staged};
use crate::plan::Plan;

/// The targets' staged plans, ready for their next run.
pub struct Servers<'a> {
    calls: &'a Calls,
    listings: Vec<crate::mcp::probe::Listing>,
    ready: Vec<Option<Staged>>,
}

fn refused(name: &str, r: Refused) -> u8 {
    crate::ui::say(&format!("spate compare: {name}: {}", r.message));
    r.code
}

impl<'a> Servers<'a> {
    /// Asks each target for its tools and stages its first run; prints what each speaks. On
    /// the first target that cannot be run: its line printed, the exit code.
    pub fn ask(targets: &[CompareTarget], calls: &'a Calls) -> Result<Servers<'a>, u8> {
        let mut servers = Servers {
            calls,
            listings: Vec::new(),
            ready: Vec::new(),
        };
        for CompareTarget { name, plan, .. } in targets {
            let listing = stage::probe(plan, calls).map_err(|r| refused(name, r))?;
            let staged = stage::stage(plan, &listing, calls).map_err(|r| refused(name, r))?;
            if let Some(m) = staged.plan.list.as_ref().and_then(|l| l.mcp.as_ref()) {
                let server = m
                    .server
                    .as_deref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default();
                crate::ui::say(&format!(
                    "spate compare: {name}: MCP {} over {}{server}",
                    m.version, m.transport
                ));
            }
            servers.listings.push(listing);
            servers.ready.push(Some(staged));
        }
        Ok(servers)
    }

    /// The staged plan of target `i`'s next run.
    pub fn take(&mut self, i: usize, name: &str, base: &Plan) -> Result<Staged, u8> {
        match self.ready[i].take() {
            Some(s) => Ok(s),
            None => stage::stage(base, &self.listings[i], self.calls).map_err(|r| refused(name, r)),
        }
    }

    /// Target `i`'s run is over: its session ended if it had one of its own, its plan kept
    /// for the next round otherwise.
    pub fn done(&mut self, i: usize, staged: Staged) {
        if staged.once() {
            staged.end();
        } else {
            self.ready[i] = Some(staged);
        }
    }
}

/// Sessions staged for runs that did not happen (a comparison stopped early) are ended too.
impl Drop for Servers<'_> {
    fn drop(&mut self) {
        for s in self.ready.iter_mut().filter_map(Option::take) {
            if s.once() {
                s.end();
            }
        }
    }
}
