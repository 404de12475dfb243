//! The insight rule on how evenly the clients were served (requests per client: one of the `-c`
//! connections with its reconnects). Reads only the finished counts; thresholds are documented
//! in docs/MEASUREMENT.md.

use super::finding::Finding;
use crate::stats::{Connections, Fairness};

/// The median client must have completed at least this many requests for the rules to speak
/// (for starved clients: the median of those answered): below it, uneven counts are noise of a
/// short run.
pub const FAIRNESS_MIN_P50: u64 = 10;
/// max / min above this: clients were served unevenly.
pub const UNEVEN: f64 = 3.0;

/// Clients the server never answered while the others were served: in the closed model (the
/// open model's schedule leaves connections idle by design), with enough requests to tell.
pub fn starved(c: &Connections, closed: bool) -> Option<&Fairness> {
    c.requests_per_client
        .as_ref()
        .filter(|f| closed && f.starved > 0 && f.p50_answered >= FAIRNESS_MIN_P50)
}

pub fn fairness(c: &Connections, closed: bool, out: &mut Vec<Finding>) {
    if let Some(f) = starved(c, closed) {
        out.push(Finding::Starved {
            starved: f.starved,
            established: c.established,
            median_answered: f.p50_answered,
        });
        return;
    }
    let Some(f) = c.requests_per_client.as_ref() else {
        return;
    };
    if closed && f.p50 >= FAIRNESS_MIN_P50 && f.max_over_min.is_some_and(|r| r > UNEVEN) {
        out.push(Finding::Uneven {
            min: f.min,
            max: f.max,
            median: f.p50,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(counts: &[u64]) -> Vec<Finding> {
        let mut c = crate::analysis::fixture::connections();
        c.requests_per_client = Fairness::of(counts);
        c.established = counts.len() as u64;
        let mut out = Vec::new();
        fairness(&c, true, &mut out);
        let mut open = Vec::new();
        fairness(&c, false, &mut open);
        assert!(
            open.is_empty(),
            "the open model leaves connections idle by design"
        );
        out
    }

    #[test]
    fn starved_and_uneven_connections_are_named() {
        assert!(said(&[100, 101, 99, 100]).is_empty(), "even");
        assert!(said(&[0, 5, 6]).is_empty(), "too short a run to tell");
        let starved = |starved, established, median_answered| {
            vec![Finding::Starved {
                starved,
                established,
                median_answered,
            }]
        };
        assert_eq!(said(&[0, 100, 101, 0, 99]), starved(2, 5, 100));
        assert_eq!(
            said(&[0, 0, 0, 0, 0, 0, 0, 543, 12]),
            starved(7, 9, 12),
            "the lower median of the answered"
        );
        assert!(said(&[0, 0, 0, 5]).is_empty(), "too few answered to tell");
        assert_eq!(
            said(&[10, 100, 101, 99]),
            [Finding::Uneven {
                min: 10,
                max: 101,
                median: 99
            }]
        );
    }
}
