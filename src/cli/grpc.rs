//! `spate grpc`: a gRPC method called under a run's load flags. The schema comes from
//! `--proto` files (compiled here, with `--import-path`), the request message from `-d`/`-D`
//! as proto3's JSON, metadata from `-m`; all of it becomes the plan's one request, built once:
//! a POST over HTTP/2 of the framed message, judged by its gRPC status. Refuses what would
//! change the call gRPC defines. Reads the files, runs nothing.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::args::{LoadArgs, OutputArgs, ShardArgs};
use super::{Command, Exit, load, shard, show};
use crate::grpc::schema::Schema;
use crate::plan::{GrpcPlan, Plan};

/// `spate grpc`'s own flags, beside a run's.
#[derive(Debug, Args)]
pub struct GrpcArgs {
    /// The server: http://HOST:PORT (HTTP/2 with prior knowledge, h2c) or https://HOST:PORT
    /// (TLS with ALPN h2).
    #[arg(value_name = "URL")]
    pub url: String,

    /// The method to call: package.Service/Method.
    #[arg(long = "call", value_name = "package.Service/Method")]
    pub call: Option<String>,

    /// A .proto file that defines the service (repeatable); compiled at start, no protoc
    /// needed. Without it, the server is asked for its schema (server reflection).
    #[arg(long = "proto", value_name = "FILE")]
    pub protos: Vec<PathBuf>,

    /// A compiled FileDescriptorSet (protoc --descriptor_set_out --include_imports), instead
    /// of --proto files.
    #[arg(long = "protoset", value_name = "FILE", conflicts_with = "protos")]
    pub protoset: Option<PathBuf>,

    /// A directory to look for the .proto files' imports in (repeatable); the first proto's
    /// own directory is searched too, and the well-known types are built in.
    #[arg(short = 'i', long = "import-path", value_name = "DIR")]
    pub import_paths: Vec<PathBuf>,

    /// Metadata sent with each call: KEY=VALUE (repeatable), or a JSON object of them.
    #[arg(short = 'm', long = "metadata", value_name = "KEY=VALUE|JSON")]
    pub metadata: Vec<String>,

    /// Metadata from a file: a JSON object of KEY: VALUE strings (with -m's, after them).
    #[arg(short = 'M', long = "metadata-file", value_name = "FILE")]
    pub metadata_file: Option<PathBuf>,

    /// Print the services and their methods (from --proto, or asked of the server by
    /// reflection), and run nothing.
    #[arg(long = "list")]
    pub list: bool,

    /// Send each message compressed with gzip (grpc-encoding: gzip; compressed once, before
    /// the run), and accept answers compressed with gzip.
    #[arg(short = 'e', long = "enable-compression")]
    pub compress: bool,

    /// The call's deadline, sent as grpc-timeout (the server gives up after it).
    #[arg(long = "deadline", value_name = "TIME", value_parser = super::values::duration)]
    pub deadline: Option<Duration>,

    #[command(flatten)]
    pub load: LoadArgs,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(
        flatten,
        next_help_heading = "Shards (one part of a run over several machines)"
    )]
    pub shard: ShardArgs,
}

/// What `spate grpc` does once the schema is known: the plan made of every flag but the
/// call's, and what the call needs of the schema.
#[derive(Debug)]
pub struct GrpcRun {
    /// The run's plan, to the server's root: load flags, HTTP/2, gRPC's header fields and the
    /// metadata; `finish` adds the call.
    pub plan: Plan,
    pub show: super::Show,
    /// `--call`, and the messages' JSON (`-d`, `-D`, or `{}`), and where it came from.
    pub call: Option<String>,
    pub json: String,
    pub json_source: String,
    /// `-m`'s metadata, which reflection is asked with too.
    pub metadata: Vec<(String, String)>,
    /// `--list`: print the services and methods, and run nothing.
    pub list_only: bool,
    /// `--dry-run`: print the call as it would be sent, and run nothing.
    pub dry_run: bool,
    /// `-e`: the messages go compressed with gzip.
    pub compress: bool,
}

impl GrpcRun {
    /// What to do with the call `schema` describes: its run, with `-v` shown with the call's
    /// messages, or (`--dry-run`) the call printed; `reflected`: the schema came from the
    /// server.
    pub fn command(&self, schema: &Schema, reflected: bool) -> Result<Command, String> {
        let (plan, method) = self.finish(schema)?;
        if self.dry_run {
            let text = crate::verbose::grpc::dry_run(&plan, &method, reflected)?;
            return Ok(Command::Print(text.into_bytes()));
        }
        let mut show = self.show.clone();
        show.grpc = Some(method);
        Ok(Command::Run {
            plan: Box::new(plan),
            script: None,
            show,
        })
    }

    /// The run's plan with the call `schema` describes (its path, its message, built once),
    /// and the method.
    fn finish(&self, schema: &Schema) -> Result<(Plan, crate::grpc::schema::Method), String> {
        let Some(call) = &self.call else {
            return Err("name the method: --call package.Service/Method".into());
        };
        let method = schema.method(call)?;
        let messages = super::grpc_messages::messages(&method, &self.json, &self.json_source)?;
        let mut plan = self.plan.clone();
        let root = plan.target.url.trim_end_matches('/').to_owned();
        plan.target = crate::target::Target::parse(&format!("{root}{}", method.path()))
            .map_err(|e| e.to_string())?;
        let framed = |m: &super::grpc_messages::Message| match self.compress {
            true => {
                let gz = crate::grpc::gzip::compress(&m.bytes);
                let mut prefix = crate::proto::grpc::prefix(gz.len() as u32);
                prefix[0] = 1;
                [prefix.as_slice(), &gz].concat()
            }
            false => [
                crate::proto::grpc::prefix(m.bytes.len() as u32).as_slice(),
                &m.bytes,
            ]
            .concat(),
        };
        // A call that streams from the client sends every message, then ends its half of the
        // stream (as ghz does with no --stream-interval): one body, built once.
        if method.client_streaming() {
            plan.body = messages.iter().flat_map(framed).collect();
        } else {
            // The first message is the plan's own (what -v and --dry-run show).
            plan.body = framed(&messages[0]);
        }
        // Several messages of a call that does not stream from the client are sent in turn,
        // as a request list's requests, each named by its JSON in the report.
        if messages.len() > 1 && !method.client_streaming() {
            use crate::request_list::{Entry, Order, RequestList};
            let entries = messages
                .iter()
                .map(|m| Entry {
                    method: None,
                    target: plan.target.clone(),
                    body: Some(framed(m)),
                })
                .collect();
            let mut list = RequestList::new(entries, Order::RoundRobin).map_err(|e| e.0)?;
            list.labels = messages
                .iter()
                .enumerate()
                .map(|(i, m)| format!("#{} {}", i + 1, m.name))
                .collect();
            plan.list = Some(std::sync::Arc::new(list));
        }
        plan.grpc = Some(GrpcPlan {
            call: call.clone(),
            server_streaming: method.server_streaming(),
        });
        // A server-streaming call's messages are always timed as a stream's events; the caps
        // and --idle-timeout (which made a stream plan of their own) apply to them.
        plan.stream = match (method.server_streaming(), plan.stream.take()) {
            (true, given) => Some(crate::plan::StreamPlan {
                mode: crate::plan::StreamMode::Grpc,
                ..given.unwrap_or(crate::plan::StreamPlan {
                    mode: crate::plan::StreamMode::Grpc,
                    rules: Default::default(),
                    max_events: None,
                    max_time: None,
                    idle: None,
                })
            }),
            (false, Some(_)) => {
                return Err(format!(
                    "--call {call} answers one message: --max-events, --max-stream-time and \
                     --idle-timeout apply to server-streaming methods"
                ));
            }
            (false, None) => None,
        };
        plan.validate().map_err(|e| e.to_string())?;
        Ok((plan, method))
    }
}

pub(super) fn command(mut a: GrpcArgs) -> Result<Command, Exit> {
    let usage = |m: String| Exit::usage(format!("grpc: {m}"));
    refused(&a.load).map_err(usage)?;
    if a.call.is_none() && !a.list {
        return Err(usage(
            "name the method: --call package.Service/Method (spate grpc --list URL shows them)"
                .into(),
        ));
    }
    if a.list && a.call.is_some() {
        return Err(usage(
            "--list prints the services and runs nothing: give it without --call".into(),
        ));
    }
    let (verbose, dry_run) = (a.load.verbose, a.load.dry_run);
    let inputs = super::load_inputs(&a.load);
    // ghz takes HOST:PORT, with --insecure for plaintext: say what spate takes instead.
    if !a.url.contains("://") {
        return Err(usage(format!(
            "{}: give http://{0} (HTTP/2 without TLS, ghz's --insecure) or https://{0}",
            a.url
        )));
    }
    let target = crate::target::Target::parse(&a.url).map_err(|e| usage(e.to_string()))?;
    if !matches!(target.path.as_str(), "" | "/") {
        return Err(usage(format!(
            "{}: give the server's URL without a path (the call gives it: --call)",
            a.url
        )));
    }
    let (json, json_source) = match (a.load.body.take(), a.load.body_file.take()) {
        (Some(d), _) => (d, "-d".to_owned()),
        (None, Some(path)) => {
            let bytes =
                crate::files::read("-D", &path, crate::files::BODY_LIMIT).map_err(Exit::usage)?;
            let text = String::from_utf8(bytes)
                .map_err(|_| usage(format!("-D {}: not UTF-8 text", path.display())))?;
            (text, format!("-D {}", path.display()))
        }
        (None, None) => ("{}".into(), "-d".to_owned()),
    };
    let mut given = a.metadata.clone();
    if let Some(path) = &a.metadata_file {
        let bytes =
            crate::files::read("-M", path, crate::files::BODY_LIMIT).map_err(Exit::usage)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| usage(format!("-M {}: not UTF-8 text", path.display())))?;
        if !text.trim_start().starts_with('{') {
            return Err(usage(format!(
                "-M {}: not a JSON object of metadata",
                path.display()
            )));
        }
        given.push(text);
    }
    let metadata = metadata(&given).map_err(usage)?;
    let mut headers = vec![
        ("content-type".to_owned(), "application/grpc".to_owned()),
        ("te".to_owned(), "trailers".to_owned()),
    ];
    if a.compress {
        use crate::grpc::gzip::NAME;
        headers.push(("grpc-encoding".into(), NAME.into()));
        headers.push(("grpc-accept-encoding".into(), NAME.into()));
    }
    if let Some(d) = a.deadline {
        headers.push(("grpc-timeout".into(), timeout(d).map_err(usage)?));
    }
    headers.extend(metadata.iter().cloned());
    a.load.headers.extend(headers);
    // HTTP/2 from the start: -p's streams are checked against the protocol as the plan is made.
    a.load.http2 = true;
    let load::Planned {
        mut plan, notes, ..
    } = load::plan(a.load, &format!("{}/", a.url.trim_end_matches('/')))?;
    plan.method = "POST".into();
    // The message is gRPC's; Accept-Encoding would ask for HTTP's.
    plan.compression = false;
    shard::apply(&mut plan, &a.shard)?;
    let mut notes = notes;
    notes.extend(shard::notes(&plan));
    let mut show = show(a.output)?;
    let protos = a.protos.iter().map(|p| ("--proto", p.clone()));
    let others = [("--protoset", &a.protoset), ("-M", &a.metadata_file)]
        .into_iter()
        .filter_map(|(f, p)| p.clone().map(|p| (f, p)));
    super::outputs_spare_inputs(
        &show,
        &inputs
            .into_iter()
            .chain(protos)
            .chain(others)
            .collect::<Vec<_>>(),
    )?;
    show.notes = notes;
    show.output.log_result = a.shard.log_result;
    show.verbose = verbose;
    let run = GrpcRun {
        plan,
        show,
        call: a.call,
        json,
        json_source,
        metadata,
        list_only: a.list,
        dry_run,
        compress: a.compress,
    };
    // The call changes no stage: checked here for the reflection's path too.
    super::csv_stages_need_stages(&run.show, &run.plan)?;
    let schema = match (&a.protoset, a.protos.is_empty()) {
        (Some(path), _) => {
            let bytes = crate::files::read("--protoset", path, crate::files::BODY_LIMIT)
                .map_err(Exit::usage)?;
            Schema::from_descriptor_set(&bytes, &format!("--protoset {}", path.display()))
                .map_err(usage)?
        }
        // Without --proto the server is asked (reflection), which is the app's.
        (None, true) => return Ok(Command::Grpc(Box::new(run))),
        (None, false) => Schema::compile(&a.protos, &a.import_paths).map_err(usage)?,
    };
    if run.list_only {
        return Ok(Command::Print(listing(&schema.services()).into_bytes()));
    }
    run.command(&schema, false).map_err(usage)
}

/// `--list`: each service and its methods, a line each.
pub fn listing(services: &[(String, Vec<String>)]) -> String {
    let mut out = String::new();
    for (service, methods) in services {
        let service = crate::escape::term(service);
        out.push_str(&format!("{service}\n"));
        for m in methods {
            out.push_str(&format!("  {service}/{}\n", crate::escape::term(m)));
        }
    }
    out
}

/// The load flags that would change the call gRPC defines.
fn refused(load: &LoadArgs) -> Result<(), String> {
    for (given, flag) in [
        (load.method != "GET", "--method: a gRPC call is a POST"),
        (
            load.script.is_some(),
            "--script does not apply to gRPC calls",
        ),
        (
            load.stream.is_some(),
            "--stream: a server-streaming method's messages are measured as a stream already",
        ),
        (load.done.is_some(), "--done does not apply to gRPC calls"),
        (load.usage.is_some(), "--usage does not apply to gRPC calls"),
        (
            load.redirect.is_some(),
            "--redirect does not apply to gRPC calls",
        ),
        (
            load.content_type.is_some(),
            "-T: the content type is gRPC's",
        ),
        (load.accept.is_some(), "-A does not apply to gRPC calls"),
        (load.http1, "--http1.1: gRPC runs over HTTP/2"),
        (load.http3, "--http3: gRPC runs over HTTP/2"),
    ] {
        if given {
            return Err(flag.into());
        }
    }
    Ok(())
}

/// `grpc-timeout`: at most 8 digits and a unit, the coarsest that keeps the deadline exact
/// or, past that, rounds it up.
fn timeout(d: Duration) -> Result<String, String> {
    if d.is_zero() {
        return Err("--deadline must be longer than zero".into());
    }
    const MAX: u128 = 99_999_999;
    let ns = d.as_nanos();
    for (unit, per) in [
        ("n", 1u128),
        ("u", 1_000),
        ("m", 1_000_000),
        ("S", 1_000_000_000),
        ("M", 60_000_000_000),
        ("H", 3_600_000_000_000),
    ] {
        if ns.div_ceil(per) <= MAX {
            return Ok(format!("{}{unit}", ns.div_ceil(per)));
        }
    }
    Err("--deadline is longer than gRPC can say".into())
}

/// `-m`'s metadata as header fields: lower-case names (HTTP/2's), values as given. Names
/// gRPC or HTTP/2 reserve are refused.
fn metadata(given: &[String]) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for m in given {
        let pairs: Vec<(String, String)> = match m.trim_start().starts_with('{') {
            true => {
                let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(m)
                    .map_err(|e| format!("-m {m}: not a JSON object of strings: {e}"))?;
                map.into_iter()
                    .map(|(k, v)| match v {
                        serde_json::Value::String(s) => Ok((k, s)),
                        other => Err(format!("-m: the value of {k} is {other}, not a string")),
                    })
                    .collect::<Result<_, _>>()?
            }
            false => {
                let (k, v) = m
                    .split_once('=')
                    .ok_or_else(|| format!("-m {m}: give KEY=VALUE or a JSON object"))?;
                vec![(k.trim().to_owned(), v.to_owned())]
            }
        };
        for (k, v) in pairs {
            let k = k.to_ascii_lowercase();
            if k.is_empty()
                || k.starts_with(':')
                || k.starts_with("grpc-")
                || k == "te"
                || k == "content-type"
            {
                return Err(format!("-m {k}: a name gRPC or HTTP/2 reserves"));
            }
            out.push((k, v));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_is_said_in_the_coarsest_exact_unit() {
        let t = |ms: u64| timeout(Duration::from_millis(ms)).unwrap();
        assert_eq!(t(50), "50000000n");
        assert_eq!(t(1500), "1500000u");
        assert_eq!(timeout(Duration::from_secs(200)).unwrap(), "200000m");
        assert_eq!(timeout(Duration::from_secs(3 * 86_400)).unwrap(), "259200S");
        assert_eq!(
            timeout(Duration::from_secs(400 * 86_400)).unwrap(),
            "34560000S"
        );
        assert_eq!(
            timeout(Duration::from_nanos(100_000_001)).unwrap(),
            "100001u",
            "up"
        );
        assert!(timeout(Duration::ZERO).is_err());
    }

    #[test]
    fn metadata_is_pairs_or_json_and_never_a_reserved_name() {
        let m = metadata(&[
            "Authorization=Bearer x=y".into(),
            r#"{"tenant":"a"}"#.into(),
        ])
        .unwrap();
        assert_eq!(
            m,
            [
                ("authorization".to_owned(), "Bearer x=y".to_owned()),
                ("tenant".to_owned(), "a".to_owned())
            ]
        );
        for bad in [
            "grpc-timeout=1S",
            "te=x",
            "novalue",
            r#"{"n":1}"#,
            "=x",
            ":path=/",
        ] {
            assert!(metadata(&[bad.into()]).is_err(), "{bad}");
        }
    }
}
