//! The one HDR histogram configuration used everywhere (1 ns to 1 h, 3 significant digits), so
//! that any two histograms merge exactly; values outside it are clamped and counted, never lost.

use std::ops::AddAssign;
use std::time::Duration;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer as _, V2Serializer};

pub const HIST_LOW_NS: u64 = 1;
pub const HIST_HIGH_NS: u64 = 3_600 * 1_000_000_000;
pub const HIST_SIGFIG: u8 = 3;

/// A latency histogram in nanoseconds.
#[derive(Debug, Clone)]
pub struct Hist {
    h: Histogram<u64>,
    /// Values above the range, recorded as the highest trackable value.
    clamped: u64,
}

impl Default for Hist {
    fn default() -> Self {
        Self::new()
    }
}

impl Hist {
    pub fn new() -> Self {
        let h = Histogram::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, HIST_SIGFIG)
            .expect("constant histogram bounds are valid");
        Hist { h, clamped: 0 }
    }

    pub fn record(&mut self, ns: u64) {
        if ns > HIST_HIGH_NS {
            self.clamped += 1;
        }
        self.h.saturating_record(ns);
    }

    pub fn record_duration(&mut self, d: Duration) {
        self.record(super::nanos(d));
    }

    pub fn len(&self) -> u64 {
        self.h.len()
    }

    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }

    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    pub fn inner(&self) -> &Histogram<u64> {
        &self.h
    }

    /// The histogram in the HdrHistogram V2 encoding, base64: readable by every HdrHistogram
    /// implementation, so results can be merged and re-analysed later.
    pub fn to_base64_v2(&self) -> String {
        let mut bytes = Vec::new();
        // Writing into a Vec cannot fail for a histogram of this configuration.
        if V2Serializer::new().serialize(&self.h, &mut bytes).is_err() {
            return String::new();
        }
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }
}

impl AddAssign<&Hist> for Hist {
    fn add_assign(&mut self, o: &Hist) {
        if self.h.add(&o.h).is_err() {
            // Unreachable with one configuration; fall back to re-recording rather than losing
            // counts.
            for v in o.h.iter_recorded() {
                self.h
                    .saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        self.clamped += o.clamped;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::Deserializer;

    #[test]
    fn out_of_range_values_are_clamped_and_counted() {
        let mut h = Hist::new();
        h.record(0);
        h.record(HIST_HIGH_NS + 1);
        h.record(u64::MAX);
        assert_eq!(h.len(), 3);
        assert_eq!(h.clamped(), 2);
        assert!(h.inner().max() >= HIST_HIGH_NS);
    }

    #[test]
    fn merge_is_exact() {
        let (mut a, mut b) = (Hist::new(), Hist::new());
        for v in [1_000, 2_000, 3_000] {
            a.record(v);
        }
        b.record(5_000_000);
        a += &b;
        assert_eq!(a.len(), 4);
        assert_eq!(
            a.inner().value_at_quantile(1.0),
            a.inner().highest_equivalent(5_000_000)
        );
    }

    #[test]
    fn base64_v2_round_trips() {
        let mut h = Hist::new();
        for v in 1..1000u64 {
            h.record(v * 1_000);
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(h.to_base64_v2())
            .unwrap();
        let back: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .unwrap();
        assert_eq!(back.len(), h.len());
        assert_eq!(
            back.value_at_quantile(0.5),
            h.inner().value_at_quantile(0.5)
        );
        assert_eq!(back.high(), HIST_HIGH_NS);
    }
}
