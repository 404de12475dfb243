//! The timing tables of the text report: the open model's schedule (send lag, service time),
//! the phases of completed requests, and connection setup (DNS, TCP connect, TLS, QUIC). Rendered
//! from a `Summary` like the rest of the report.

use std::fmt::Write as _;

use super::text::opt_ms;
use crate::numbers::{count, counted, millis, per_second as rate};
use crate::stats::{NotOpened, Phase, Summary};

pub(super) fn schedule(o: &mut String, s: &Summary) -> std::fmt::Result {
    let Some(m) = &s.open_model else {
        return Ok(());
    };
    writeln!(o, "\nSchedule (open model)")?;
    match &s.config.stages {
        Some(_) => writeln!(
            o,
            "  Target rate     {} requests/s (the mean of --stages)",
            rate(m.rate_target)
        )?,
        None => writeln!(o, "  Target rate     {} requests/s", rate(m.rate_target))?,
    }
    writeln!(o, "  Achieved rate   {} requests/s", rate(m.rate_achieved))?;
    writeln!(
        o,
        "  Scheduled       {} = {} sent + {} dropped + {} missed",
        count(m.scheduled),
        count(m.sent),
        count(m.dropped),
        count(m.missed)
    )?;
    if let Some(max) = m.max_lag_ms {
        writeln!(
            o,
            "  Dropped         later than --max-lag {} when a connection came free",
            millis(max)
        )?;
    }
    if m.missed > 0 {
        writeln!(
            o,
            "  Missed          still waiting for a free connection when the run ended"
        )?;
    }
    phase_header(o)?;
    phase_row(o, "send lag", &m.send_lag)?;
    phase_row(o, "service time", &m.service)?;
    writeln!(
        o,
        "  Latency counts from the intended send time: send lag + service time."
    )
}

pub(super) fn phases_and_connections(o: &mut String, s: &Summary) -> std::fmt::Result {
    writeln!(o, "\nPhases of completed requests")?;
    phase_header(o)?;
    if s.phases.connect.count > 0 {
        phase_row(o, "open a connection", &s.phases.connect)?;
    }
    phase_row(o, "write request", &s.phases.write)?;
    phase_row(o, "wait for first byte", &s.phases.wait)?;
    phase_row(o, "read response", &s.phases.read)?;

    let k = &s.connections;
    writeln!(o, "\nConnections")?;
    // A connection profile opens its connections as its level rises, not all at the start.
    let staffed = s.config.stages.is_some() && s.config.model == "closed";
    writeln!(
        o,
        "  {} {}, {} {}, {} reconnects, {} connect failures",
        count(u64::from(k.requested)),
        if staffed {
            "at the most (--stages)"
        } else {
            "requested"
        },
        count(k.established),
        if staffed {
            "opened"
        } else {
            "open at the start"
        },
        count(k.reconnects),
        count(k.connect_failures)
    )?;
    if let Some(e) = &k.connect_error {
        writeln!(o, "  first connect failure: {e}")?;
    }
    let n = &k.not_opened;
    if n.total() > 0 || k.setup_ms >= 1000.0 {
        writeln!(
            o,
            "  the connections took {} to open (--setup-timeout {})",
            millis(k.setup_ms),
            millis(s.config.setup_timeout_s * 1e3)
        )?;
    }
    if n.total() > 0 {
        writeln!(o, "  not open at the start: {}", unopened(n))?;
    }
    if let Some(f) = &k.requests_per_connection {
        writeln!(
            o,
            "  responses per connection: min {}, median {}, max {}",
            count(f.min),
            count(f.p50),
            count(f.max)
        )?;
    }
    if let Some(f) = &k.requests_per_client {
        let starved = match f.starved {
            0 => String::new(),
            n => format!(", {} completed none", count(n)),
        };
        writeln!(
            o,
            "  requests per client: min {}, median {}, max {}{starved}",
            count(f.min),
            count(f.p50),
            count(f.max)
        )?;
    }
    writeln!(o, "  DNS lookup once, {}", millis(k.dns_ms))?;
    phase_header(o)?;
    if k.http3 == 0 || k.connect.count > 0 {
        phase_row(o, "TCP connect", &k.connect)?;
    }
    if k.proxy.count > 0 {
        phase_row(o, "proxy CONNECT", &k.proxy)?;
    }
    if k.http3 > 0 {
        quic(o, s)?;
    } else if k.tls.count > 0 {
        phase_row(o, "TLS handshake", &k.tls)?;
        writeln!(
            o,
            "  {} of {} TLS handshakes resumed an earlier session",
            count(k.tls_resumed),
            count(k.tls.count)
        )?;
    }
    if k.http2 > 0 {
        let limit = k
            .server_max_streams
            .map_or_else(|| "no limit".into(), count);
        writeln!(
            o,
            "  HTTP/2: {} per connection asked, server limit: {limit}; {} GOAWAY",
            counted(u64::from(s.config.streams), "stream", "streams"),
            count(k.goaways)
        )?;
    }
    if s.requests.retried > 0 {
        let why = match (k.http1 > 0, k.http2 > 0) {
            _ if k.http3 > 0 => "turned away unprocessed (a GOAWAY or H3_REQUEST_REJECTED)",
            (false, true) => "refused unprocessed by a GOAWAY",
            (true, false) => "the server had closed the kept-alive connection",
            _ => "a GOAWAY, or a kept-alive connection the server had closed",
        };
        writeln!(
            o,
            "  {} sent again on a new connection: {why}",
            counted(s.requests.retried, "request", "requests")
        )?;
    }
    if k.http1 > 0 && k.http2 > 0 {
        writeln!(
            o,
            "  {} connections spoke HTTP/1.1, {} HTTP/2",
            count(k.http1),
            count(k.http2)
        )?;
    }
    writeln!(
        o,
        "  The first connects are outside request latency; a reconnect is inside the"
    )?;
    writeln!(
        o,
        "  latency of the request that needed it. A client is one of the"
    )?;
    writeln!(
        o,
        "  requested connections with the reconnects that replaced it."
    )
}

/// HTTP/3's connection lines: the QUIC handshake (TLS's is inside it), the streams and
/// GOAWAYs, and what QUIC itself counted.
fn quic(o: &mut String, s: &Summary) -> std::fmt::Result {
    let k = &s.connections;
    phase_row(o, "QUIC handshake", &k.tls)?;
    writeln!(
        o,
        "  HTTP/3: {} per connection asked; {} GOAWAY",
        counted(u64::from(s.config.streams), "stream", "streams"),
        count(k.goaways)
    )?;
    if let Some(q) = &k.quic {
        let share = match q.packets_sent {
            0 => String::new(),
            n => format!(" ({:.3} %)", q.packets_lost as f64 * 100.0 / n as f64),
        };
        writeln!(
            o,
            "  QUIC: {} UDP datagrams sent, {} received",
            count(q.datagrams_sent),
            count(q.datagrams_received),
        )?;
        writeln!(
            o,
            "  QUIC: {} of {} packets lost{share}, {}",
            count(q.packets_lost),
            count(q.packets_sent),
            counted(q.congestion_events, "congestion event", "congestion events")
        )?;
    }
    Ok(())
}

/// What became of the connections that did not open, e.g. "6,800 timed out connecting, 200
/// never tried".
pub(super) fn unopened(n: &NotOpened) -> String {
    [
        (n.timed_out, "timed out connecting"),
        (n.failed, "failed to connect"),
        (
            n.cut_off,
            "still connecting when the connection phase ended",
        ),
        (
            n.not_tried,
            "never tried (the connection phase ended first)",
        ),
    ]
    .iter()
    .filter(|(k, _)| *k > 0)
    .map(|(k, what)| format!("{} {what}", count(*k)))
    .collect::<Vec<_>>()
    .join(", ")
}

pub(super) fn phase_header(o: &mut String) -> std::fmt::Result {
    writeln!(
        o,
        "  {:<24} {:>12} {:>12} {:>12} {:>12}",
        "", "mean", "p50", "p99", "max"
    )
}

pub(super) fn phase_row(o: &mut String, name: &str, p: &Phase) -> std::fmt::Result {
    writeln!(
        o,
        "  {name:<24} {:>12} {:>12} {:>12} {:>12}",
        opt_ms(p.mean_ms),
        opt_ms(p.p50_ms),
        opt_ms(p.p99_ms),
        opt_ms(p.max_ms)
    )
}
