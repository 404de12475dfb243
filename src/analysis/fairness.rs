//! The insight rule on how evenly connections were served (requests per connection). Reads only
//! the finished counts; thresholds are documented in docs/MEASUREMENT.md.

use crate::report::count;
use crate::stats::{Connections, Fairness};

/// The median connection must have completed at least this many requests for the rules to speak:
/// below it, uneven counts are noise of a short run.
pub const FAIRNESS_MIN_P50: u64 = 10;
/// max / min above this: connections were served unevenly.
pub const UNEVEN: f64 = 3.0;

pub fn fairness(c: &Connections, out: &mut Vec<String>) {
    rule(c.requests_per_connection.as_ref(), c.established, out);
}

fn rule(f: Option<&Fairness>, connections: u64, out: &mut Vec<String>) {
    let Some(f) = f.filter(|f| f.p50 >= FAIRNESS_MIN_P50) else {
        return;
    };
    if f.starved > 0 {
        out.push(format!(
            "{} of {} connections completed no request while the median one completed {}: \
             they were never answered (look at the server's accept queue, connection limit or \
             event loop).",
            count(f.starved),
            count(connections),
            count(f.p50)
        ));
    } else if f.max_over_min.is_some_and(|r| r > UNEVEN) {
        out.push(format!(
            "Connections were served unevenly: from {} to {} requests each (median {}).",
            count(f.min),
            count(f.max),
            count(f.p50)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(counts: &[u64]) -> Vec<String> {
        let mut out = Vec::new();
        rule(Fairness::of(counts).as_ref(), counts.len() as u64, &mut out);
        out
    }

    #[test]
    fn starved_and_uneven_connections_are_named() {
        assert!(said(&[100, 101, 99, 100]).is_empty(), "even");
        assert!(said(&[0, 5, 6]).is_empty(), "too short a run to tell");
        let s = said(&[0, 100, 101, 0, 99]);
        assert_eq!(s.len(), 1);
        assert!(
            s[0].starts_with("2 of 5 connections completed no request"),
            "{s:?}"
        );
        let u = said(&[10, 100, 101, 99]);
        assert_eq!(
            u,
            ["Connections were served unevenly: from 10 to 101 requests each (median 99)."]
        );
    }
}
