//! `spate wrk`: wrk's command line made into a plan: its flags, its defaults (-c 10, -d 10s,
//! -t 2, --timeout 2s), HTTP/1.1 only and no Accept-Encoding, as wrk sends; its script with
//! the words after the URL as `init`'s arguments; and wrk's text layout unless another format
//! is asked for. Reads the script, runs nothing.

use super::args::WrkArgs;
use super::{Command, Exit, Show, output};
use crate::plan::{Plan, Protocol, Stop};
use crate::report::{Format, ReportOptions};
use crate::target::Target;

pub(super) fn command(a: WrkArgs) -> Result<Command, Exit> {
    if a.version {
        return Ok(Command::Print(
            format!(
                "spate {} (spate wrk: wrk's command line and layout)\n",
                env!("CARGO_PKG_VERSION")
            )
            .into_bytes(),
        ));
    }
    let Some(url) = a.url else {
        return Err(Exit::usage(
            "wrk: give the URL to load, as with wrk: spate wrk -t2 -c10 -d10s http://127.0.0.1:8080/",
        ));
    };
    if a.threads == 0 || a.connections == 0 {
        return Err(Exit::usage("wrk: -t and -c must be at least 1"));
    }
    // As wrk: every thread needs a connection.
    if a.connections < a.threads {
        return Err(Exit::usage(
            "wrk: the number of connections (-c) must be at least the number of threads (-t)",
        ));
    }
    let (Ok(connections), Ok(threads)) = (u32::try_from(a.connections), u32::try_from(a.threads))
    else {
        return Err(Exit::usage("wrk: -c and -t must be below 2^32"));
    };
    let mut args = a.args;
    if args.first().is_some_and(|w| w == "--") {
        args.remove(0);
    }
    if a.script.is_none() && !args.is_empty() {
        return Err(Exit::usage(format!(
            "wrk: {:?} after the URL is for a script's init(args), and there is no -s",
            args[0]
        )));
    }
    let target = Target::parse(&url).map_err(|e| Exit::usage(e.to_string()))?;
    let mut plan = Plan::new(target);
    plan.connections = connections;
    plan.threads = threads;
    plan.stop = Stop::Duration(a.duration);
    plan.timeout = a.timeout;
    plan.headers = a.headers;
    plan.compression = false;
    plan.protocol = Protocol::Http1;
    let script = match &a.script {
        Some(file) => Some(
            crate::script::Loaded::load(file, &args, &mut plan)
                .map_err(|e| Exit::usage(e.to_string()))?,
        ),
        None => None,
    };
    plan.validate().map_err(|e| Exit::usage(e.to_string()))?;
    let mut output = output(a.forms, None, None)?;
    if output.format == Format::Text {
        output.format = Format::Wrk { latency: a.latency };
    }
    Ok(Command::Run {
        plan: Box::new(plan),
        script,
        show: Show {
            output,
            summary: ReportOptions::default(),
            // wrk shows nothing while it runs.
            progress: false,
            notes: Vec::new(),
            verbose: false,
            live_json: None,
            metrics: None,
            metrics_linger: std::time::Duration::ZERO,
            grpc: None,
        },
    })
}
