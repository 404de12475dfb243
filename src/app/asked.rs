//! The commands that ask the server something before their load test: `spate mcp` (its tools)
//! and `spate grpc` without --proto (its schema, by reflection). A server that cannot say is
//! one line and a result that says why, as a run that could not start.

use super::{emit, load_test, print_bytes};
use crate::cli::{self, Command};
use crate::exit::EXIT_USAGE;
use crate::report::{self, Report};
use crate::stats::RunFailure;
use crate::ui::say;

/// `spate mcp`: asks the server for its tools, then prints them (`--list`) or runs the calls.
pub(super) fn mcp_test(m: &cli::McpRun) -> u8 {
    // As a run that could not start: one line, and a document for programs reading the JSON.
    let refuse = |r: crate::mcp::stage::Refused| {
        say(&format!("spate: mcp: {}", r.message));
        let failure = RunFailure {
            kind: r.kind.into(),
            message: r.message,
        };
        emit(
            &Report::not_run(&m.plan, failure, &m.show.summary),
            &m.show,
            r.code,
        )
    };
    let listing = match crate::mcp::stage::probe(&m.plan, &m.mcp) {
        Ok(l) => l,
        Err(r) => return refuse(r),
    };
    if m.list_only {
        let url = crate::redact::url(&m.plan.target.url);
        let text = match m.show.output.format {
            report::Format::Json => crate::mcp::plan::tools_json(&listing, &url),
            _ => crate::mcp::plan::tools_text(&listing, &url),
        };
        return print_bytes(text.as_bytes());
    }
    let staged = match crate::mcp::stage::stage(&m.plan, &listing, &m.mcp) {
        Ok(s) => s,
        Err(r) => return refuse(r),
    };
    let code = load_test(&staged.plan, None, &m.show);
    staged.end();
    code
}

/// `spate grpc` without --proto: the server's schema by reflection, then its services listed,
/// or the call made under load. A server that cannot say is one line, exit 1 (as an
/// unreachable one); a call its schema does not have, exit 2.
pub(super) fn grpc_test(g: &cli::GrpcRun) -> u8 {
    let refuse = |kind: &str, message: String, code: u8| {
        say(&format!("spate: grpc: {message}"));
        let failure = RunFailure {
            kind: kind.into(),
            message,
        };
        emit(
            &Report::not_run(&g.plan, failure, &g.show.summary),
            &g.show,
            code,
        )
    };
    let (services, schema) = match crate::grpc::ask::reflect(&g.plan, &g.metadata) {
        Ok(found) => found,
        Err(e) => return refuse("unreachable", e, crate::exit::EXIT_NO_SUCCESS),
    };
    if g.list_only {
        let listed: Vec<(String, Vec<String>)> = schema
            .services()
            .into_iter()
            .filter(|(s, _)| services.contains(s))
            .collect();
        return print_bytes(cli::grpc_listing(&listed).as_bytes());
    }
    match g.command(&schema, true) {
        Ok(Command::Run { plan, show, .. }) => load_test(&plan, None, &show),
        Ok(Command::Print(text)) => print_bytes(&text),
        Ok(_) => unreachable!("a gRPC call runs or is printed"),
        Err(e) => refuse("plan", e, EXIT_USAGE),
    }
}
