//! From the calls to a run's plan against one server: ask the server for its tools (the probe),
//! check the session mode against what it speaks, open the shared session, build the request
//! list. For `spate mcp` and for each target of `spate compare`. Prints nothing and runs no
//! load; the caller ends what it staged.

use std::sync::Arc;

use super::SessionMode;
use super::call::Call;
use super::plan::{self, Sessions};
use super::probe::{self, Era, Listing, ProbeError, Transport};
use super::shared::{self, Opened};
use crate::plan::Plan;
use crate::request_list::Order;

/// The calls of a run or of each target of a comparison, and how to speak to the server.
#[derive(Debug, Clone)]
pub struct Calls {
    /// The calls, in the order given.
    pub calls: Vec<Call>,
    /// `--progress`: each call asks for progress notifications.
    pub progress: bool,
    /// `--protocol-version`: which revision to speak.
    pub era: Era,
    /// `--transport`: over which transport.
    pub transport: Transport,
    /// `--session`: how calls and sessions go together.
    pub session: SessionMode,
}

/// Why no run could be made: the failure's kind (as the JSON report names it), one line, and
/// the exit code.
#[derive(Debug)]
pub struct Refused {
    pub kind: &'static str,
    pub message: String,
    pub code: u8,
}

impl Refused {
    fn probe(plan: &Plan, e: ProbeError) -> Refused {
        let url = crate::redact::url(&plan.target.url);
        Refused {
            kind: match e {
                ProbeError::Unreachable(_) => "unreachable",
                ProbeError::NotMcp(_) => "not_mcp",
            },
            message: format!("{url}: {e}"),
            code: crate::exit::EXIT_NO_SUCCESS,
        }
    }

    fn plan(message: String) -> Refused {
        Refused {
            kind: "plan",
            message,
            code: crate::exit::EXIT_USAGE,
        }
    }
}

/// Asks the server at `plan`'s URL for its tools, in the revision and over the transport
/// `calls` ask for: the tools the calls name, or every tool when there are no calls
/// (`spate mcp --list`).
pub fn probe(plan: &Plan, calls: &Calls) -> Result<Listing, Refused> {
    let want = (!calls.calls.is_empty()).then(|| {
        calls
            .calls
            .iter()
            .filter_map(|c| match &c.method {
                super::call::Method::Tool { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect()
    });
    probe::list_tools(plan, calls.era, calls.transport, want).map_err(|e| Refused::probe(plan, e))
}

/// A run's plan with its calls, and the session it shares, if any.
#[derive(Debug)]
pub struct Staged {
    pub plan: Plan,
    shared: Option<Opened>,
}

impl Staged {
    /// Whether the run has a session of its own that [`Staged::end`] ends: it serves one run.
    pub fn once(&self) -> bool {
        self.shared.is_some()
    }

    /// Ends the shared session, if any (a DELETE, as a client should).
    pub fn end(self) {
        if let Some(s) = &self.shared {
            shared::end(&self.plan, s);
        }
    }
}

/// The plan of a run of `calls` against the server `listing` describes: `base` with the request
/// list, and with `--session shared` a session opened for it.
pub fn stage(base: &Plan, listing: &Listing, calls: &Calls) -> Result<Staged, Refused> {
    shared::check(calls.session, listing).map_err(Refused::plan)?;
    let mut sessions = Sessions {
        mode: calls.session,
        shared: None,
    };
    if calls.session == SessionMode::Shared {
        let opened = shared::open(base, listing).map_err(|e| Refused::probe(base, e))?;
        sessions.shared = Some(opened);
    }
    let staged = |list| -> Result<Plan, Refused> {
        let plan = Plan {
            list: Some(Arc::new(list)),
            ..base.clone()
        };
        plan.validate().map_err(|e| Refused::plan(e.to_string()))?;
        Ok(plan)
    };
    let made = plan::list(
        &calls.calls,
        listing,
        base,
        Order::RoundRobin,
        calls.progress,
        &sessions,
    )
    .map_err(Refused::plan)
    .and_then(staged);
    match made {
        Ok(plan) => Ok(Staged {
            plan,
            shared: sessions.shared,
        }),
        Err(r) => {
            if let Some(s) = &sessions.shared {
                shared::end(base, s);
            }
            Err(r)
        }
    }
}
