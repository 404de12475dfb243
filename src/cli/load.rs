//! The load flags made into a `Plan` for one URL: the request (method, headers, body), TLS,
//! HTTP/2, the route and the stop. Shared by a run and by each target of `spate compare`; reads
//! the files the flags name, runs nothing.

use base64::Engine as _;

use super::args::LoadArgs;
use super::{DEFAULT_CONNECTIONS, DEFAULT_REQUESTS, Exit};
use crate::plan::{H2, Plan, Protocol, Rate, StageKind, Stop, Tls};
use crate::redact;
use crate::route::{Family, Route};
use crate::script::Loaded;
use crate::target::Target;

/// A run's plan, the script loaded beside it (`-s`), and the notes to print before it.
pub(super) struct Planned {
    pub plan: Plan,
    pub script: Option<Loaded>,
    pub notes: Vec<String>,
}

/// The plan of a run of `url` with the load flags `a`, with its script and notes.
pub(super) fn plan(mut a: LoadArgs, url: &str) -> Result<Planned, Exit> {
    let stream = stream_plan(&a)?;
    let (a_script, a_script_args) = (a.script.take(), std::mem::take(&mut a.script_args));
    let compile_only = a.compile_script_only;
    let target = Target::parse(url).map_err(|e| Exit::usage(e.to_string()))?;
    let method = method(a.method);
    if let Some(b) = &a.body {
        wrk_duration(b, &method)?;
    }
    let body = match (a.body, a.body_file) {
        (Some(b), _) => b.into_bytes(),
        (None, Some(path)) => crate::files::read("--body-file", &path, crate::files::BODY_LIMIT)
            .map_err(Exit::usage)?,
        (None, None) => Vec::new(),
    };

    // Headers from dedicated flags first; an explicit -H of the same name replaces them.
    let mut headers: Vec<(String, String)> = Vec::new();
    if let Some(v) = a.accept {
        headers.push(("Accept".into(), v));
    }
    if let Some(v) = a.content_type {
        headers.push(("Content-Type".into(), v));
    }
    if let Some((user, pass)) = a.basic_auth {
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
        headers.push(("Authorization".into(), format!("Basic {token}")));
    }
    headers.retain(|(n, _)| !a.headers.iter().any(|(m, _)| m.eq_ignore_ascii_case(n)));
    headers.extend(a.headers);

    let threads = match a.threads {
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
    };
    let stop = match (a.duration, a.requests) {
        _ if let Some(s) = &a.stages => Stop::Duration(s.duration()),
        (Some(d), _) => Stop::Duration(d),
        (None, Some(n)) => Stop::Requests(n),
        (None, None) => Stop::Requests(DEFAULT_REQUESTS),
    };
    // A connection profile gives the connections: its highest target. Without -c, a small -n
    // sets them: -n 10 is ten requests on ten connections.
    let connections = match (&a.stages, a.connections.connections) {
        (Some(s), Some(_)) if s.kind == StageKind::Connections => {
            return Err(Exit::usage(
                "--stages: -c: the stages give the connections (their highest target)",
            ));
        }
        // The parser bounds a target to a million.
        (Some(s), None) if s.kind == StageKind::Connections => s.peak() as u32,
        (_, Some(c)) => c,
        (_, None) => match stop {
            Stop::Requests(n) => n.clamp(1, u64::from(DEFAULT_CONNECTIONS)) as u32,
            Stop::Duration(_) => DEFAULT_CONNECTIONS,
        },
    };
    let read = |flag: &str, path: &Option<std::path::PathBuf>| -> Result<Option<Vec<u8>>, Exit> {
        match path {
            Some(p) => crate::files::read(flag, p, crate::files::PEM_LIMIT)
                .map(Some)
                .map_err(Exit::usage),
            None => Ok(None),
        }
    };
    let mut notes = Vec::new();
    // curl and wrk users add -k by habit; it changes nothing without TLS.
    if a.insecure && !target.tls {
        notes.push(format!(
            "spate: note: --insecure has no effect on {} (no TLS)",
            redact::url(url)
        ));
    }
    let tls = Tls {
        insecure: a.insecure && target.tls,
        cacert: read("--cacert", &a.cacert)?,
        cert: read("--cert", &a.cert)?,
        key: read("--key", &a.key)?,
    };
    let defaults = H2::default();
    let fit = |v: Option<u64>, d: u32| u32::try_from(v.unwrap_or(u64::from(d))).unwrap_or(u32::MAX);
    let h2 = H2 {
        streams: a.streams,
        stream_window: fit(a.h2_stream_window, defaults.stream_window),
        conn_window: fit(a.h2_conn_window, defaults.conn_window),
        max_frame: fit(a.h2_max_frame, defaults.max_frame),
    };
    let protocol = match (a.http1, a.http2, a.http3 || a.alt_svc) {
        (true, _, _) => Protocol::Http1,
        (_, true, _) => Protocol::Http2,
        (_, _, true) => Protocol::Http3,
        _ => a.http_version.unwrap_or_default(),
    };
    let route = Route {
        connect_to: a.connect_to,
        family: match (a.ipv4, a.ipv6) {
            (true, _) => Some(Family::V4),
            (_, true) => Some(Family::V6),
            _ => None,
        },
        unix_socket: a.unix_socket,
        proxy: a
            .proxy
            .as_deref()
            .map(str::parse)
            .transpose()
            .map_err(|e: String| Exit::usage(format!("--proxy {e}")))?,
    };
    let mut plan = Plan {
        target,
        route,
        method,
        headers,
        body,
        compression: !a.disable_compression,
        keep_alive: !a.disable_keepalive,
        connections,
        threads,
        stop,
        timeout: a.timeout,
        connect_timeout: a.connect_timeout,
        setup_timeout: a
            .setup_timeout
            .unwrap_or(crate::plan::DEFAULT_SETUP_TIMEOUT.max(a.connect_timeout)),
        protocol,
        tls,
        h2,
        rate: a.rate.map(|(num, den)| Rate { num, den }),
        stages: a.stages.clone(),
        grpc: None,
        max_lag: a.max_lag,
        rpc: a.rpc,
        redirects: a.redirect.unwrap_or(0),
        stream,
        warmup: a.warmup,
        busy_poll: a.busy_poll,
        script: None,
        list: None,
        shard: None,
        start_at: None,
        alt_svc: a.alt_svc,
    };
    let script = match &a_script {
        Some(file) if compile_only => {
            crate::script::Script::compile(file).map_err(|e| Exit::usage(e.to_string()))?;
            None
        }
        Some(file) => Some(
            Loaded::load(file, &a_script_args, &mut plan)
                .map_err(|e| Exit::usage(e.to_string()))?,
        ),
        None => None,
    };
    plan.validate().map_err(|e| Exit::usage(e.to_string()))?;
    // Checked here, where files are read: a missing socket is a mistake in the command line.
    if let Some(path) = &plan.route.unix_socket
        && std::fs::symlink_metadata(path).is_err()
    {
        return Err(Exit::usage(format!(
            "--unix-socket {}: no such socket",
            path.display()
        )));
    }
    Ok(Planned {
        plan,
        script,
        notes,
    })
}

/// A script in a series of runs (`compare`, `sweep`): its states run per request as in any
/// run, but `setup` and `done` belong to one run, so a script that defines them is refused;
/// what it prints goes to stderr, away from the series' table.
pub(super) fn series_script(script: Option<&Loaded>, command: &str) -> Result<(), Exit> {
    let Some(s) = script else {
        return Ok(());
    };
    if s.defines.setup || s.defines.done {
        return Err(Exit::usage(format!(
            "spate {command} runs a script's init, delay, request and response in each run; \
             setup() and done() belong to a single run (spate, or spate wrk)"
        )));
    }
    s.echo.set(crate::script::Sink::Stderr);
    Ok(())
}

/// The standard methods in upper case, as servers expect them (`-m head` is HEAD; nginx answers
/// a lower-case one with 400); any other method as given, since methods are case-sensitive.
fn method(m: String) -> String {
    const STANDARD: [&str; 9] = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
    ];
    match STANDARD.iter().find(|s| s.eq_ignore_ascii_case(&m)) {
        Some(s) => (*s).to_owned(),
        None => m,
    }
}

/// wrk's `-d10s` is its duration; spate's `-d` is the body. A GET whose whole body reads as a
/// duration with a unit is that habit, not a body anyone sends.
fn wrk_duration(body: &str, method: &str) -> Result<(), Exit> {
    let t = body.trim();
    let has_unit = t.ends_with(|c: char| c.is_ascii_alphabetic());
    if method == "GET" && has_unit && crate::units::duration(t).is_ok() {
        return Err(Exit::usage(format!(
            "-d {t} looks like wrk's duration: spate's is -z {t}, or run spate wrk with wrk's own \
             flags (-d is the request body; with -m POST it is sent as one)"
        )));
    }
    Ok(())
}

/// --stream and its companions; any companion alone means --stream auto.
fn stream_plan(a: &LoadArgs) -> Result<Option<crate::plan::StreamPlan>, Exit> {
    use crate::plan::{StreamMode, StreamPlan};
    let implied = a.done.is_some()
        || a.usage.is_some()
        || a.max_events.is_some()
        || a.max_stream_time.is_some()
        || a.idle_timeout.is_some();
    let mode = match a.stream.as_deref() {
        Some("off") if implied => {
            return Err(Exit::usage(
                "--stream off measures no stream: drop --done, --usage, --max-events, \
                 --max-stream-time and --idle-timeout, or choose a mode"
                    .to_owned(),
            ));
        }
        Some("off") => return Ok(None),
        Some("sse") => StreamMode::Sse,
        Some("lines") => StreamMode::Lines,
        Some("chunks") => StreamMode::Chunks,
        Some(_) => StreamMode::Auto,
        None if implied => StreamMode::Auto,
        None => return Ok(None),
    };
    Ok(Some(StreamPlan {
        mode,
        rules: crate::proto::stream::Rules {
            done: a.done.as_ref().map(|d| d.as_bytes().to_vec()),
            openai: a.usage.is_some(),
            max_units: a.max_events,
        },
        max_events: a.max_events,
        max_time: a.max_stream_time,
        idle: a.idle_timeout,
    }))
}
