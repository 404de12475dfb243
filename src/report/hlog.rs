//! `--hdr-log`: the run's latencies as an HdrHistogram interval log (.hlog), one interval per
//! second of the timeline, in the standard form (version and start-time headers, the column
//! legend, compressed V2 histograms in nanoseconds) that HistogramLogProcessor and the Java,
//! Python and Go HdrHistogram libraries read. Touches no socket.

use std::time::{Duration, UNIX_EPOCH};

use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;

use crate::stats::{Hist, Summary};

/// The column legend the Java writer puts before the first interval (readers skip it).
const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";

/// The interval log of `s`: intervals start at `StartTime` (the measured window's start).
pub fn hdr_log(s: &Summary) -> String {
    let start = UNIX_EPOCH + Duration::from_millis(s.start_unix_ms);
    let mut out = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let written = IntervalLogWriterBuilder::new()
        .add_comment(&format!(
            "Logged with spate {}: latency in nanoseconds, one interval per second",
            s.spate_version
        ))
        .add_comment("[Histogram log format version 1.3]")
        .with_start_time(start)
        .with_base_time(start)
        .begin_log_with(&mut out, &mut serializer)
        .and_then(|mut log| {
            // Written now, after the headers: the writer holds the buffer until it is dropped.
            log.write_comment("spate timeline")?;
            for (entry, sparse) in s.timeline.iter().zip(&s.second_latencies) {
                log.write_histogram(
                    &Hist::of_sparse(sparse),
                    Duration::from_secs_f64(entry.t_s),
                    Duration::from_secs_f64(entry.span_s),
                    None,
                )
                .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
            }
            Ok(())
        });
    // Writing into memory fails only if a histogram cannot be encoded, which this configuration
    // always can: the log then ends where it failed.
    drop(written);
    let text = String::from_utf8_lossy(&out).into_owned();
    text.replacen("#spate timeline\n", LEGEND, 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    #[test]
    fn the_log_has_the_headers_the_legend_and_a_histogram_a_second() {
        let plan = crate::plan::Plan::new(crate::target::Target::parse("http://a/").unwrap());
        let mut run = crate::stats::RunOutput::empty(1);
        run.start_unix_ms = 1_790_000_000_500;
        let mut s = crate::stats::Summary::new(&plan, &run, crate::stats::HISTOGRAM_BINS);
        for (i, sparse) in [vec![(5000, 3)], vec![], vec![(7000, 1), (7000, 2)]]
            .into_iter()
            .enumerate()
        {
            let mut e = crate::stats::timeline::Entry::of(&Default::default(), false);
            e.t_s = i as f64;
            e.span_s = 1.0;
            s.timeline.push(e);
            s.second_latencies.push(sparse);
        }
        let log = hdr_log(&s);
        assert!(
            log.contains("#[Histogram log format version 1.3]\n"),
            "{log}"
        );
        assert!(log.contains("#[StartTime: 1790000000.500 (seconds since epoch)]\n"));
        assert!(log.contains(LEGEND), "{log}");
        let counts: Vec<(f64, u64)> = IntervalLogIterator::new(log.as_bytes())
            .filter_map(|e| match e.unwrap() {
                LogEntry::Interval(h) => Some(h),
                _ => None,
            })
            .map(|h| {
                let bytes = base64::Engine::decode(
                    &base64::engine::general_purpose::STANDARD,
                    h.encoded_histogram(),
                )
                .unwrap();
                let back: hdrhistogram::Histogram<u64> =
                    hdrhistogram::serialization::Deserializer::new()
                        .deserialize(&mut bytes.as_slice())
                        .unwrap();
                (h.start_timestamp().as_secs_f64(), back.len())
            })
            .collect();
        assert_eq!(counts, [(0.0, 3), (1.0, 0), (2.0, 3)]);
    }
}
