//! The Streaming section of the text report (--stream): to the first event and the first
//! data event, the gaps between data events, events per response, how streams ended, and the
//! output tokens --usage read. Rendered from a `Summary` like the rest of the report.

use std::fmt::Write as _;

use super::timing::{phase_header, phase_row};
use crate::numbers::{count, per_second as rate};
use crate::plan::StreamMode;
use crate::stats::{Streaming, Summary};

pub(super) fn section(o: &mut String, s: &Summary) -> std::fmt::Result {
    let Some(st) = &s.streaming else {
        return Ok(());
    };
    writeln!(o, "\nStreaming ({})", st.mode.words())?;
    let others = match st.not_streams {
        0 => String::new(),
        n => format!(", {} completed responses were not streams", count(n)),
    };
    writeln!(o, "  Streams         {}{others}", count(st.responses))?;
    if st.responses == 0 {
        return Ok(());
    }
    let per = st.events_per_response.unwrap_or(0.0);
    // Every gRPC message is data: its count is said once.
    let grpc = st.mode == StreamMode::Grpc;
    let (label, with_data) = match grpc {
        true => ("Messages       ", String::new()),
        false => (
            "Events         ",
            format!(" ({} with data)", count(st.data_events)),
        ),
    };
    writeln!(
        o,
        "  {label} {}{with_data}, {per:.1} per stream, at most {}{}",
        count(st.events),
        count(st.max_events_per_response),
        match st.keepalives {
            0 => String::new(),
            n => format!("; {} keep-alive comments", count(n)),
        }
    )?;
    writeln!(o, "  Ended           {}", ends(st))?;
    if let Some(t) = &st.tokens {
        writeln!(
            o,
            "  Output tokens   {} in {} streams, {} tokens/s",
            count(t.total),
            count(t.responses),
            rate(t.per_second)
        )?;
        if let (Some(p50), Some(p10)) = (t.per_response_p50, t.per_response_p10) {
            writeln!(
                o,
                "  Per stream      p50 {} tokens/s; the slowest tenth at or below {}",
                rate(p50),
                rate(p10)
            )?;
        }
    }
    let unit = st.mode.unit();
    phase_header(o)?;
    phase_row(o, &format!("first {unit}"), &st.first_event)?;
    if !grpc {
        phase_row(o, "first data event", &st.first_data)?;
    }
    phase_row(o, &format!("gap between {unit}s"), &st.gap)?;
    phase_row(o, "mean gap of a stream", &st.mean_gap)?;
    phase_row(o, "longest gap of a stream", &st.longest_gap)?;
    match grpc {
        true => writeln!(
            o,
            "  First messages count from the call's start, as latency does; a message arrives\n  \
             with its last byte."
        ),
        false => writeln!(
            o,
            "  First events count from the request's start, as latency does; gaps are between\n  \
             consecutive events with data."
        ),
    }
}

/// How the streams ended, in words.
fn ends(st: &Streaming) -> String {
    let e = &st.ends;
    let mut parts = Vec::new();
    if let Some(done) = &st.done_sentinel {
        parts.push(format!("{} with {done}", count(e.done)));
    }
    // A stream that ends without its sentinel is a failure, not a completed stream.
    match st.done_sentinel {
        Some(_) => parts.push(format!(
            "{} without it (failed: stream_truncated)",
            count(st.truncated)
        )),
        None => parts.push(format!("{} by the server", count(e.server))),
    }
    if e.max_events > 0 {
        parts.push(format!("{} at --max-events", count(e.max_events)));
    }
    if e.max_time > 0 {
        parts.push(format!("{} at --max-stream-time", count(e.max_time)));
    }
    if st.idle > 0 {
        parts.push(format!("{} stalled (failed: stream_idle)", count(st.idle)));
    }
    parts.join(", ")
}
