//! --stream: what a thread's recorded streamed responses did (`StreamStats`, merged exactly
//! across threads), and the report's `streaming` section built from it (`Streaming`). Times are
//! from the attempt's start (the open model: its intended time), as latency is.

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

use super::{Hist, Phase};
use crate::plan::{StreamMode, StreamPlan};

/// How measured streams ended, in the order of `Ends`'s fields.
pub const END_DONE: usize = 0;
pub const END_SERVER: usize = 1;
pub const END_MAX_EVENTS: usize = 2;
pub const END_MAX_TIME: usize = 3;

/// One thread's measured streams (recorded, completed responses only).
#[derive(Debug, Clone, Default)]
pub struct StreamStats {
    /// Completed responses measured as streams.
    pub responses: u64,
    /// Completed responses that were not (--stream auto: their type was no stream's).
    pub other: u64,
    /// To the first unit, and to the first unit with data (the first token).
    pub first_unit: Hist,
    pub first_data: Hist,
    /// Every gap between consecutive data units (inter-token latency).
    pub gap: Hist,
    /// Per response: the mean gap, and the longest (a stall).
    pub mean_gap: Hist,
    pub longest_gap: Hist,
    pub units: u64,
    pub data_units: u64,
    /// The most units one response had.
    pub max_units: u64,
    /// Comments (SSE keep-alives).
    pub keepalives: u64,
    /// Units longer than the parser keeps (counted, their data cut for the checks).
    pub long_units: u64,
    /// By `END_*`.
    pub ends: [u64; 4],
    /// --usage: responses whose usage gave output tokens, their sum, and each one's output
    /// tokens per second of its latency, in thousandths (a histogram of integers).
    pub token_responses: u64,
    pub tokens: u64,
    pub token_rate_milli: Hist,
}

impl AddAssign<&StreamStats> for StreamStats {
    fn add_assign(&mut self, o: &StreamStats) {
        self.responses += o.responses;
        self.other += o.other;
        self.first_unit += &o.first_unit;
        self.first_data += &o.first_data;
        self.gap += &o.gap;
        self.mean_gap += &o.mean_gap;
        self.longest_gap += &o.longest_gap;
        self.units += o.units;
        self.data_units += o.data_units;
        self.max_units = self.max_units.max(o.max_units);
        self.keepalives += o.keepalives;
        self.long_units += o.long_units;
        for (a, b) in self.ends.iter_mut().zip(o.ends) {
            *a += b;
        }
        self.token_responses += o.token_responses;
        self.tokens = self.tokens.saturating_add(o.tokens);
        self.token_rate_milli += &o.token_rate_milli;
    }
}

/// The report's `streaming` section.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Streaming {
    pub mode: StreamMode,
    /// The --done sentinel, if one was asked for.
    pub done_sentinel: Option<String>,
    /// Completed responses measured as streams, and those that were not (auto: not a stream
    /// type).
    pub responses: u64,
    pub not_streams: u64,
    /// Request start to the first event (unit), and to the first event with data.
    pub first_event: Phase,
    pub first_data: Phase,
    /// Every gap between consecutive data events, all responses together.
    pub gap: Phase,
    /// Per response: its mean gap, and its longest.
    pub mean_gap: Phase,
    pub longest_gap: Phase,
    pub events: u64,
    pub data_events: u64,
    pub events_per_response: Option<f64>,
    pub max_events_per_response: u64,
    pub keepalives: u64,
    /// Events longer than spate keeps (1 MiB): counted, their data cut for the checks.
    pub long_events: u64,
    pub ends: Ends,
    /// Failures of class `stream_truncated` (the sentinel never came) and `stream_idle`.
    pub truncated: u64,
    pub idle: u64,
    pub tokens: Option<Tokens>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ends {
    pub done: u64,
    pub server: u64,
    pub max_events: u64,
    pub max_time: u64,
}

/// --usage: output tokens as the streams' usage objects gave them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tokens {
    /// Streams whose usage gave output tokens.
    pub responses: u64,
    pub total: u64,
    /// All output tokens over the measured window.
    pub per_second: f64,
    /// Each response's output tokens over its latency.
    pub per_response_mean: Option<f64>,
    pub per_response_p50: Option<f64>,
    /// The slowest tenth of responses are at or below this rate.
    pub per_response_p10: Option<f64>,
}

impl Streaming {
    pub fn of(plan: &StreamPlan, s: &StreamStats, failures: (u64, u64), window_s: f64) -> Self {
        let rate = s.token_rate_milli.hdr();
        let q = |p: f64| (!rate.is_empty()).then(|| rate.value_at_quantile(p) as f64 / 1e3);
        Streaming {
            mode: plan.mode,
            done_sentinel: plan
                .rules
                .done
                .as_ref()
                .map(|d| String::from_utf8_lossy(d).into_owned()),
            responses: s.responses,
            not_streams: s.other,
            first_event: Phase::of(&s.first_unit),
            first_data: Phase::of(&s.first_data),
            gap: Phase::of(&s.gap),
            mean_gap: Phase::of(&s.mean_gap),
            longest_gap: Phase::of(&s.longest_gap),
            events: s.units,
            data_events: s.data_units,
            events_per_response: (s.responses > 0).then(|| s.units as f64 / s.responses as f64),
            max_events_per_response: s.max_units,
            keepalives: s.keepalives,
            long_events: s.long_units,
            ends: Ends {
                done: s.ends[END_DONE],
                server: s.ends[END_SERVER],
                max_events: s.ends[END_MAX_EVENTS],
                max_time: s.ends[END_MAX_TIME],
            },
            truncated: failures.0,
            idle: failures.1,
            tokens: plan.rules.openai.then(|| Tokens {
                responses: s.token_responses,
                total: s.tokens,
                per_second: match window_s > 0.0 {
                    true => s.tokens as f64 / window_s,
                    false => 0.0,
                },
                per_response_mean: (!rate.is_empty()).then(|| rate.mean() / 1e3),
                per_response_p50: q(0.5),
                per_response_p10: q(0.1),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_token_counts_saturate_when_summed() {
        let mut a = StreamStats {
            tokens: u64::MAX - 1,
            ..StreamStats::default()
        };
        let b = StreamStats {
            tokens: u64::MAX,
            ..StreamStats::default()
        };
        a += &b;
        assert_eq!(a.tokens, u64::MAX);
    }
}
