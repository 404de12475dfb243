//! What a run was, in the words of the report's header after its first line: the load, the
//! protocol and model, and where the connections went. The text report and the HTML page say
//! it the same way. Words only; no figures of the results.

use super::Report;
use crate::numbers::{counted, millis, per_second as rate};

/// What `plan` would run, as the report's header would say it (`--dry-run`): the method and
/// URL, then `describe`'s lines.
pub fn plan_words(plan: &crate::plan::Plan) -> Vec<String> {
    use crate::stats::{HISTOGRAM_BINS, RunOutput, Summary};
    let run = RunOutput::empty(plan.effective_threads());
    let s = Report::of(
        Summary::new(plan, &run, HISTOGRAM_BINS),
        &Default::default(),
    );
    let mut lines = vec![format!(
        "{} {}",
        plan.method,
        crate::redact::url(&plan.target.url)
    )];
    lines.extend(describe(&s));
    lines
}

/// The load model in the header's words: its rate, or the profile it followed.
pub(crate) fn model(rate_per_s: Option<f64>, stages: Option<&str>) -> String {
    match (rate_per_s, stages) {
        (Some(r), Some(stages)) => format!(
            "open model following --stages {stages} (mean {} requests/s)",
            rate(r)
        ),
        (Some(r), None) => format!("open model at {} requests/s", rate(r)),
        (None, Some(stages)) => format!("closed model following --stages {stages}"),
        (None, None) => "closed model".into(),
    }
}

/// What was run, in the words of the report's header (after its first line): the load, the
/// protocol and model, and where the connections went. The HTML report's header says the same.
pub(super) fn describe(s: &Report) -> Vec<String> {
    let c = &s.config;
    let stop = match (c.requests, c.duration_s) {
        (Some(n), _) => counted(n, "request", "requests"),
        (None, Some(d)) if s.generator.script_stopped => format!(
            "{} duration, stopped early by the script",
            millis(d * 1000.0)
        ),
        (None, Some(d)) => format!("{} duration", millis(d * 1000.0)),
        (None, None) => String::new(),
    };
    // QUIC always carries TLS 1.3.
    let over = match c.protocol.as_str() {
        "HTTP/3" => "QUIC",
        "HTTP/1.1 and HTTP/3" => "TLS and QUIC",
        _ => "TLS",
    };
    let protocol = match c.tls.as_deref() {
        Some("insecure") => format!(
            "{} over {over} (certificate NOT verified: --insecure)",
            c.protocol
        ),
        Some(_) => format!("{} over {over}", c.protocol),
        None => c.protocol.clone(),
    };
    let protocol = match &c.alt_svc {
        Some(alt) => format!("{protocol} (Alt-Svc {alt})"),
        None => protocol,
    };
    let model = model(c.rate, c.stages.as_deref());
    let mut extras = Vec::new();
    match c.rpc {
        Some(1) => extras.push("a new connection per request".to_string()),
        Some(n) => extras.push(format!(
            "{} per connection",
            counted(n, "request", "requests")
        )),
        None => {}
    }
    if c.warmup_s > 0.0 {
        extras.push(format!("after {} of warm-up", millis(c.warmup_s * 1e3)));
    }
    if s.generator.stopped_by_signal {
        extras.push("stopped early by Ctrl-C/SIGTERM/SIGHUP".into());
    }
    if s.generator.script_error.is_some() {
        extras.push("stopped early by the script's error".into());
    }
    match (s.per_url.is_empty(), s.grpc.is_some()) {
        (true, _) => {}
        (false, true) => extras.push("a list of messages, Per message below".into()),
        (false, false) => extras.push("a request list, Per URL below".into()),
    }
    if s.mcp.is_some() {
        extras.push("MCP calls, Per tool below".into());
    }
    let extras = if extras.is_empty() {
        String::new()
    } else {
        format!(" ({})", extras.join(", "))
    };
    let mut lines = vec![format!(
        "{} on {}, {stop}, {protocol}, {model}{extras}",
        counted(u64::from(c.connections), "connection", "connections"),
        counted(u64::from(c.threads), "thread", "threads"),
    )];
    let family = c
        .address_family
        .as_deref()
        .map(|f| if f == "ipv6" { "IPv6" } else { "IPv4" });
    if let (Some(proxy), Some(mode)) = (&c.proxy, &c.proxy_mode) {
        let how = match mode.as_str() {
            "tunnel" => "a CONNECT tunnel per connection",
            _ => "requests in absolute form",
        };
        lines.push(format!("through proxy {proxy}: {how}"));
    }
    match (&c.connected_to, family) {
        (Some(to), _) => lines.push(format!(
            "connected to {to}; {} from the URL",
            match c.tls {
                Some(_) => "Host header and TLS name",
                None => "Host header",
            }
        )),
        (None, Some(f)) => lines.push(format!("over {f} only")),
        (None, None) => {}
    }
    if let Some(sh) = &c.shard {
        let requests = sh
            .job_requests
            .map(|n| format!(", {}", counted(n, "request", "requests")))
            .unwrap_or_default();
        let striped = match sh.job_rate {
            Some(r) => format!(
                " at {} requests/s: its requests k with k mod {} = {}",
                rate(r),
                sh.count,
                sh.index
            ),
            None => String::new(),
        };
        lines.push(format!(
            "shard {} of {} (from 0) of a job of {}{requests}{striped}",
            sh.index,
            sh.count,
            counted(u64::from(sh.job_connections), "connection", "connections"),
        ));
    }
    if let (Some(at), Some(started)) = (c.start_at_unix_us, c.started_unix_us) {
        let late = started as f64 - at as f64;
        lines.push(match late >= 0.0 {
            true => format!("started {} after --start-at", millis(late / 1e3)),
            false => format!("started {} before --start-at", millis(-late / 1e3)),
        });
    }
    lines
}
