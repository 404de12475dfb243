//! `spate mcp`: the server's URL, the calls to measure (`--tool`, `--args`, `--args-file`,
//! `--resource`, `--prompt`, `--tools-list`) and a run's load flags, made into a plan and a list
//! of calls; and the same calls for `spate compare`'s targets. Refuses flags that would change
//! the requests MCP defines. Reads the calls' file, runs nothing: asking the server is the app's.

use serde_json::Map;

use super::args::{LoadArgs, McpArgs, McpCallArgs};
use super::{Command, Exit, load, show};
use crate::mcp::SessionMode;
use crate::mcp::call::{self, Call, Method};
use crate::mcp::probe::{Era, Transport};
use crate::mcp::stage::Calls;
use crate::plan::Plan;

/// What `spate mcp` does once the server has been asked for its tools.
#[derive(Debug)]
pub struct McpRun {
    pub plan: Plan,
    pub show: super::Show,
    /// `--list`: print the tools and run nothing.
    pub list_only: bool,
    /// The calls (none with `--list`) and how to speak to the server.
    pub mcp: Calls,
}

pub(super) fn command(a: McpArgs) -> Result<Command, Exit> {
    let usage = |m: String| Exit::usage(format!("mcp: {m}"));
    let url = match a.urls.as_slice() {
        [] => {
            return Err(usage(
                "give the server's MCP endpoint, e.g. spate mcp --list http://127.0.0.1:8000/mcp"
                    .into(),
            ));
        }
        [url] => url.clone(),
        _ => {
            return Err(usage(
                "one URL: to compare MCP servers, give the same calls to spate compare, e.g. spate compare --tool add A=URL B=URL".into(),
            ));
        }
    };
    http_flags(&a.load).map_err(usage)?;
    let mcp = calls(&a.calls).map_err(usage)?;
    if !a.list && mcp.calls.is_empty() {
        return Err(usage(
            "name the calls to measure: --tool NAME (with --args NAME='{...}'), --args-file, --resource, --prompt or --tools-list; spate does not guess (spate mcp --list URL shows the tools)".into(),
        ));
    }
    if a.list && !mcp.calls.is_empty() {
        return Err(usage(
            "--list prints the tools and runs nothing: give it without calls".into(),
        ));
    }
    if a.list {
        for (given, flag) in [
            (a.load.requests.is_some(), "-n"),
            (a.load.connections.connections.is_some(), "-c"),
            (a.load.duration.is_some(), "-z"),
            (a.load.rate.is_some(), "-q"),
            (a.load.stages.is_some(), "--stages"),
            (a.calls.progress, "--progress"),
            (a.calls.session != "per-connection", "--session"),
        ] {
            if given {
                return Err(usage(format!(
                    "--list prints the tools and runs nothing: {flag} does not apply"
                )));
            }
        }
    }
    let verbose = a.load.verbose;
    let dry_run = a.load.dry_run;
    let mut inputs = super::load_inputs(&a.load);
    if let Some(f) = &a.calls.args_file {
        inputs.push(("--args-file", f.clone()));
    }
    // MCP's runs have no script (`http_flags`).
    let load::Planned {
        mut plan, notes, ..
    } = load::plan(a.load, &url)?;
    spoken(&mut plan);
    if dry_run {
        return super::dry_run::dry_runs("spate mcp", &[(String::new(), &plan, None)], true);
    }
    let mut show = show(a.output)?;
    super::outputs_spare_inputs(&show, &inputs)?;
    super::csv_stages_need_stages(&show, &plan)?;
    show.notes = notes;
    show.verbose = verbose;
    Ok(Command::Mcp(Box::new(McpRun {
        plan,
        show,
        list_only: a.list,
        mcp,
    })))
}

/// Refuses the load flags that would change the requests MCP defines.
pub(super) fn http_flags(load: &LoadArgs) -> Result<(), String> {
    for (given, flag) in [
        (load.method != "GET", "-m"),
        (load.body.is_some(), "-d"),
        (load.body_file.is_some(), "-D"),
        (load.content_type.is_some(), "-T"),
        (load.accept.is_some(), "-A"),
        (load.script.is_some(), "--script"),
        (load.stream.is_some(), "--stream"),
        (load.redirect.is_some(), "--redirect"),
    ] {
        if given {
            return Err(format!(
                "{flag} does not apply: MCP says what each call sends (a POST of JSON-RPC)"
            ));
        }
    }
    Ok(())
}

/// A plan made from load flags, made into one that sends MCP's requests.
pub(super) fn spoken(plan: &mut Plan) {
    plan.method = "POST".into();
    // Answers are read as JSON: a compressed one could not be.
    plan.compression = false;
}

/// The calls the flags name and how to speak to the server.
pub(super) fn calls(a: &McpCallArgs) -> Result<Calls, String> {
    let (era, transport) = era_and_transport(&a.protocol_version, &a.transport)?;
    Ok(Calls {
        calls: named_calls(a)?,
        progress: a.progress,
        era,
        transport,
        session: match a.session.as_str() {
            "shared" => SessionMode::Shared,
            "per-request" => SessionMode::PerRequest,
            _ => SessionMode::PerConnection,
        },
    })
}

/// `--protocol-version` and `--transport` together: a revision the transport has.
fn era_and_transport(version: &str, transport: &str) -> Result<(Era, Transport), String> {
    use crate::mcp::legacy;
    let transport = match transport {
        "streamable-http" => Transport::Streamable,
        "sse" => Transport::Sse,
        _ => Transport::Auto,
    };
    let era = match version {
        "auto" => Era::Auto,
        v if v == crate::mcp::wire::MODERN => Era::Stateless,
        v if v == legacy::VERSION => Era::Handshake(legacy::VERSION),
        v => match crate::mcp::session::KNOWN.iter().find(|k| **k == v) {
            Some(k) => Era::Handshake(k),
            None => return Err(format!("--protocol-version {v} is not one spate speaks")),
        },
    };
    match (era, transport) {
        (Era::Stateless, Transport::Sse) => Err(format!(
            "--protocol-version {version} has no HTTP+SSE transport: it is stateless, over \
             Streamable HTTP only"
        )),
        (Era::Handshake(v), Transport::Streamable) if v == legacy::VERSION => Err(format!(
            "--protocol-version {v} has no Streamable HTTP transport: use --transport sse"
        )),
        (Era::Handshake(v), Transport::Auto) if v == legacy::VERSION => Ok((era, Transport::Sse)),
        (Era::Stateless, Transport::Auto) => Ok((era, Transport::Streamable)),
        _ => Ok((era, transport)),
    }
}

/// The calls the flags name, in order: tools, prompts, resources, tools/list, then the file's.
fn named_calls(a: &McpCallArgs) -> Result<Vec<Call>, String> {
    let mut args: Vec<(String, Map<String, serde_json::Value>)> = Vec::new();
    for s in &a.args {
        let (name, m) = call::named_arguments(s).map_err(|e| format!("--args {e}"))?;
        if args.iter().any(|(n, _)| *n == name) {
            return Err(format!(
                "--args {name} is given twice; for several argument sets use --args-file"
            ));
        }
        args.push((name, m));
    }
    let mut used = vec![false; args.len()];
    let mut take = |name: &str| {
        let i = args.iter().position(|(n, _)| n == name)?;
        used[i] = true;
        Some(args[i].1.clone())
    };
    let mut calls = Vec::new();
    for t in &a.tools {
        let (name, weight) = call::name_and_weight(t).map_err(|e| format!("--tool {e}"))?;
        let arguments = take(&name).unwrap_or_default();
        calls.push(Call {
            method: Method::Tool { name, arguments },
            weight,
        });
    }
    for p in &a.prompts {
        let (name, weight) = call::name_and_weight(p).map_err(|e| format!("--prompt {e}"))?;
        let arguments = take(&name).unwrap_or_default();
        calls.push(Call {
            method: Method::Prompt { name, arguments },
            weight,
        });
    }
    for uri in &a.resources {
        calls.push(Call {
            method: Method::Resource { uri: uri.clone() },
            weight: 1,
        });
    }
    match a.tools_list {
        Some(0) => return Err("--tools-list: a weight is at least 1".into()),
        Some(weight) => calls.push(Call {
            method: Method::ListTools,
            weight,
        }),
        None => {}
    }
    if let Some(i) = used.iter().position(|u| !u) {
        return Err(format!("--args {} names no --tool or --prompt", args[i].0));
    }
    if let Some(path) = &a.args_file {
        let name = path.display().to_string();
        let bytes = crate::files::read("--args-file", path, crate::files::BODY_LIMIT)?;
        let text = String::from_utf8(bytes).map_err(|_| format!("{name}: not UTF-8 text"))?;
        calls.extend(call::from_lines(&name, &text)?);
    }
    if calls.len() > call::MAX_CALLS {
        return Err(format!("more than {} calls", call::MAX_CALLS));
    }
    Ok(calls)
}
