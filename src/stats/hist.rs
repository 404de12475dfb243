//! The one HDR histogram configuration used everywhere (1 ns to 1 h, 3 significant digits), so
//! that any two histograms merge exactly; values outside it are clamped and counted, never lost.

use std::ops::AddAssign;
use std::time::Duration;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};

pub const HIST_LOW_NS: u64 = 1;
pub const HIST_HIGH_NS: u64 = 3_600 * 1_000_000_000;
pub const HIST_SIGFIG: u8 = 3;

/// A latency histogram in nanoseconds, recorded into HdrHistogram's own bucket layout for this
/// configuration (exact below 2,048, then 1,024 buckets per power of two) with one array add, and
/// turned into an `hdrhistogram::Histogram` only when read. Recording through the crate cost
/// about 60 instructions per value, four values per request; the result is the same histogram.
#[derive(Clone)]
pub struct Hist {
    /// `COUNTS` buckets, indexed as HdrHistogram indexes them.
    counts: Box<[u64]>,
    total: u64,
    /// Values above the range, recorded as the highest trackable value.
    clamped: u64,
}

/// HdrHistogram's layout for 1 ns to 1 h at 3 significant digits: 2,048 sub-buckets (the values
/// below it are exact), the upper 1,024 of which repeat per power of two.
const SUB_BITS: u32 = 11;
const HALF_BITS: u32 = SUB_BITS - 1;
/// The length of HdrHistogram's counts array for this configuration (checked by a test).
const COUNTS: usize = 33 << HALF_BITS;

/// HdrHistogram's counts index of `v` (its `index_for`, with unit magnitude 0).
#[inline]
fn index(v: u64) -> usize {
    let bucket = (u64::BITS - SUB_BITS) - (v | ((1 << SUB_BITS) - 1)).leading_zeros();
    (((bucket + 1) as usize) << HALF_BITS) + (v >> bucket) as usize - (1 << HALF_BITS)
}

/// The lowest value whose index is `i`.
fn lowest(i: usize) -> u64 {
    let bucket = ((i >> HALF_BITS) as u32).saturating_sub(1);
    let sub = (i - ((bucket as usize) << HALF_BITS)) as u64;
    sub << bucket
}

impl Default for Hist {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Hist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hist")
            .field("len", &self.total)
            .field("clamped", &self.clamped)
            .finish_non_exhaustive()
    }
}

impl Hist {
    pub fn new() -> Self {
        Hist {
            counts: vec![0; COUNTS].into_boxed_slice(),
            total: 0,
            clamped: 0,
        }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        if ns > HIST_HIGH_NS {
            self.clamped += 1;
        }
        // As `Histogram::saturating_record`: a value past the last bucket counts as the highest
        // trackable one; one past the range but inside the last bucket stays where it falls.
        let i = index(ns);
        let i = if i < COUNTS { i } else { index(HIST_HIGH_NS) };
        self.counts[i] += 1;
        self.total += 1;
    }

    pub fn record_duration(&mut self, d: Duration) {
        self.record(super::nanos(d));
    }

    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// The recorded values as an HdrHistogram, for quantiles, mean and iteration. Builds it: call
    /// once per report, not per request.
    pub fn hdr(&self) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, HIST_SIGFIG)
            .expect("constant histogram bounds are valid");
        for (i, &n) in self.counts.iter().enumerate().filter(|(_, n)| **n > 0) {
            h.saturating_record_n(lowest(i), n);
        }
        h
    }
}

/// Bucket counts by HdrHistogram index: a histogram of a second, small where a whole one is 270
/// KiB. The same index may appear more than once (seconds of several threads added up).
pub type Sparse = Vec<(u32, u64)>;

impl Hist {
    /// What was recorded since `prev`, a copy of this histogram at an earlier time, which becomes
    /// a copy of it now. Compares page by page: a second costs a pass over 270 KiB, nothing per
    /// value.
    pub fn since(&self, prev: &mut Hist) -> Sparse {
        const PAGE: usize = 4096 / size_of::<u64>();
        let mut out = Vec::new();
        for (k, (now, was)) in self
            .counts
            .chunks(PAGE)
            .zip(prev.counts.chunks_mut(PAGE))
            .enumerate()
        {
            if now == was {
                continue;
            }
            for (j, (n, w)) in now.iter().zip(was.iter_mut()).enumerate() {
                if n != w {
                    out.push(((k * PAGE + j) as u32, n - *w));
                    *w = *n;
                }
            }
        }
        prev.total = self.total;
        prev.clamped = self.clamped;
        out
    }

    /// Every bucket with a count, as `since` gives them (the whole run's, for the metrics'
    /// last figures).
    pub fn sparse(&self) -> Sparse {
        self.counts
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(i, &n)| (i as u32, n))
            .collect()
    }

    /// The lowest value of bucket `i` of a `Sparse`: what a value counted there is taken as
    /// when it is compared with a bound.
    pub fn floor_of(i: u32) -> u64 {
        lowest(i as usize)
    }

    /// The HdrHistogram of bucket counts `sparse`, for quantiles.
    pub fn of_sparse(sparse: &Sparse) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, HIST_SIGFIG)
            .expect("constant histogram bounds are valid");
        for &(i, n) in sparse {
            h.saturating_record_n(lowest(i as usize), n);
        }
        h
    }
}

/// `h` in HdrHistogram's compressed V2 encoding, base64 (the "HISTF..." form its Java, Python and
/// Go libraries and HistogramLogProcessor read), so results can be merged and re-analysed later.
pub fn base64_v2(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    // Writing into a Vec cannot fail for a histogram of this configuration.
    if V2DeflateSerializer::new().serialize(h, &mut bytes).is_err() {
        return String::new();
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A histogram `base64_v2` wrote (or any HdrHistogram V2 encoding, base64), read back.
pub fn from_base64_v2(b64: &str) -> Option<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .ok()
}

impl AddAssign<&Hist> for Hist {
    fn add_assign(&mut self, o: &Hist) {
        // Only the pages of buckets that `o` hit are written: the rest of a fresh array stays
        // unmapped zero pages, so a report's merge does not make all 270 KiB of each of the
        // eight histograms resident (an add of every bucket would, zeros included).
        const PAGE: usize = 4096 / size_of::<u64>();
        for (a, b) in self.counts.chunks_mut(PAGE).zip(o.counts.chunks(PAGE)) {
            if b.iter().any(|&n| n != 0) {
                a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
            }
        }
        self.total += o.total;
        self.clamped += o.clamped;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::Deserializer;

    /// Values spread over the whole range, its edges and past it.
    fn values() -> Vec<u64> {
        let mut v: Vec<u64> = (0..5_000).collect();
        for shift in 0..64 {
            let p = 1u64 << shift;
            v.extend([p - 1, p, p + 1, p.saturating_mul(3) / 2]);
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.push(x >> (x % 64));
        }
        v.extend([HIST_HIGH_NS - 1, HIST_HIGH_NS, HIST_HIGH_NS + 1, u64::MAX]);
        v
    }

    #[test]
    fn the_layout_is_hdrhistograms() {
        let h = Histogram::<u64>::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, HIST_SIGFIG).unwrap();
        assert_eq!(h.distinct_values(), COUNTS);
        for v in values().into_iter().filter(|&v| index(v) < COUNTS) {
            assert_eq!(lowest(index(v)), h.lowest_equivalent(v), "{v}");
            assert_eq!(index(lowest(index(v))), index(v), "{v}");
        }
    }

    #[test]
    fn recording_gives_the_histogram_hdrhistogram_records() {
        let mut want =
            Histogram::<u64>::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, HIST_SIGFIG).unwrap();
        let mut got = Hist::new();
        for v in values() {
            want.saturating_record(v);
            got.record(v);
        }
        let got = got.hdr();
        assert!(got == want, "counts, total, min and max agree");
        assert_eq!(got.value_at_quantile(0.5), want.value_at_quantile(0.5));
        assert_eq!(got.mean(), want.mean());
    }

    #[test]
    fn out_of_range_values_are_clamped_and_counted() {
        let mut h = Hist::new();
        h.record(0);
        h.record(HIST_HIGH_NS + 1);
        h.record(u64::MAX);
        assert_eq!(h.len(), 3);
        assert_eq!(h.clamped(), 2);
        assert!(h.hdr().max() >= HIST_HIGH_NS);
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        // Values in every page of the array, split unevenly, so that pages one side hit and
        // the other did not are merged both ways.
        let (mut a, mut b, mut all) = (Hist::new(), Hist::new(), Hist::new());
        for (i, v) in values().into_iter().enumerate() {
            if i % 7 < 2 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        let mut b_first = b.clone();
        b_first += &a;
        a += &b;
        for merged in [&a, &b_first] {
            assert_eq!(merged.len(), all.len());
            assert_eq!(merged.clamped(), all.clamped());
            assert!(merged.hdr() == all.hdr());
        }
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
            a.hdr().value_at_quantile(1.0),
            a.hdr().highest_equivalent(5_000_000)
        );
    }

    #[test]
    fn base64_v2_round_trips() {
        let mut h = Hist::new();
        for v in 1..1000u64 {
            h.record(v * 1_000);
        }
        let text = base64_v2(&h.hdr());
        assert!(
            text.starts_with("HISTF"),
            "the compressed V2 cookie: {text}"
        );
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .unwrap();
        let back: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .unwrap();
        assert_eq!(back.len(), h.len());
        assert_eq!(back.value_at_quantile(0.5), h.hdr().value_at_quantile(0.5));
        assert_eq!(back.high(), HIST_HIGH_NS);
    }

    #[test]
    fn since_gives_what_was_recorded_since_the_copy_and_catches_up() {
        let mut h = Hist::new();
        let mut prev = Hist::new();
        for v in [5, 5, 3_000, 1 << 40] {
            h.record(v);
        }
        let first = h.since(&mut prev);
        assert_eq!(first.iter().map(|(_, n)| n).sum::<u64>(), 4);
        assert_eq!(Hist::of_sparse(&first).max(), h.hdr().max());
        assert!(h.since(&mut prev).is_empty(), "nothing new");
        h.record(5);
        assert_eq!(h.since(&mut prev), [(index(5) as u32, 1)]);
    }
}
