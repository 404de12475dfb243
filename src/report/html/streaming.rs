//! The page's Streaming section (--stream): how many responses were streams and how they ended,
//! their events and output tokens, and the times to the first event and between events. Every
//! figure names its field of the embedded JSON, as the other tables' do.

use super::tables::{Table, cards_of, count_val, phase_row, val, words};
use crate::numbers::per_second;
use crate::plan::StreamMode;
use crate::report::Report;

/// The section's body, if the run measured streams.
pub fn section(r: &Report) -> Option<String> {
    let st = r.run.streaming.as_ref()?;
    let mut a = Table::new("kv", &[]);
    a.row("Mode", &[words(st.mode.words())]);
    a.row("Streams", &[count_val("streaming.responses", st.responses)]);
    if st.not_streams > 0 {
        a.row(
            "Completed responses that were not streams",
            &[count_val("streaming.not_streams", st.not_streams)],
        );
    }
    // Every gRPC message is data: its count is said once.
    let grpc = st.mode == StreamMode::Grpc;
    let (unit, units) = match grpc {
        true => ("message", "Messages"),
        false => ("event", "Events"),
    };
    a.row(units, &[count_val("streaming.events", st.events)]);
    if !grpc {
        a.row(
            "Events with data",
            &[count_val("streaming.data_events", st.data_events)],
        );
    }
    a.row(
        &format!("{units} per stream"),
        &[val(
            "streaming.events_per_response",
            st.events_per_response
                .map_or_else(|| "-".into(), |v| format!("{v:.1}")),
        )],
    );
    a.row(
        &format!("Most {unit}s in a stream"),
        &[count_val(
            "streaming.max_events_per_response",
            st.max_events_per_response,
        )],
    );
    if st.keepalives > 0 {
        a.row(
            "Keep-alive comments",
            &[count_val("streaming.keepalives", st.keepalives)],
        );
    }
    let mut b = Table::new("kv", &[]);
    let e = &st.ends;
    match &st.done_sentinel {
        Some(done) => {
            b.row(
                &format!("Ended with {done}"),
                &[count_val("streaming.ends.done", e.done)],
            );
            b.row(
                "Ended without it (failed: stream_truncated)",
                &[count_val("streaming.truncated", st.truncated)],
            );
        }
        None => b.row(
            "Ended by the server",
            &[count_val("streaming.ends.server", e.server)],
        ),
    }
    if e.max_events > 0 {
        b.row(
            "Ended at --max-events",
            &[count_val("streaming.ends.max_events", e.max_events)],
        );
    }
    if e.max_time > 0 {
        b.row(
            "Ended at --max-stream-time",
            &[count_val("streaming.ends.max_time", e.max_time)],
        );
    }
    if st.idle > 0 {
        b.row(
            "Stalled (failed: stream_idle)",
            &[count_val("streaming.idle", st.idle)],
        );
    }
    if let Some(t) = &st.tokens {
        b.row(
            "Output tokens",
            &[count_val("streaming.tokens.total", t.total)],
        );
        b.row(
            "Output tokens/sec",
            &[val("streaming.tokens.per_second", per_second(t.per_second))],
        );
        let rate = |key: &str, v: Option<f64>| val(key, v.map_or_else(|| "-".into(), per_second));
        b.row(
            "Tokens/sec of a stream, p50",
            &[rate(
                "streaming.tokens.per_response_p50",
                t.per_response_p50,
            )],
        );
        b.row(
            "Slowest tenth of streams, at or below",
            &[rate(
                "streaming.tokens.per_response_p10",
                t.per_response_p10,
            )],
        );
    }
    let mut times = Table::new(
        "num",
        &[
            "from the request's start",
            "count",
            "mean",
            "p50",
            "p99",
            "max",
        ],
    );
    phase_row(
        &mut times,
        &format!("first {unit}"),
        "streaming.first_event",
        &st.first_event,
    );
    if !grpc {
        phase_row(
            &mut times,
            "first data event",
            "streaming.first_data",
            &st.first_data,
        );
    }
    let between = match grpc {
        true => "between messages",
        false => "between data events",
    };
    let mut gaps = Table::new("num", &[between, "count", "mean", "p50", "p99", "max"]);
    phase_row(
        &mut gaps,
        &format!("gap between {unit}s"),
        "streaming.gap",
        &st.gap,
    );
    phase_row(
        &mut gaps,
        "mean gap of a stream",
        "streaming.mean_gap",
        &st.mean_gap,
    );
    phase_row(
        &mut gaps,
        "longest gap of a stream",
        "streaming.longest_gap",
        &st.longest_gap,
    );
    let mut out = cards_of(&[("Streams", a.finish()), ("How they ended", b.finish())]);
    out.push_str(&times.finish());
    out.push_str(&gaps.finish());
    Some(out)
}
