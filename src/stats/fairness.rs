//! How the work spread over connections: requests per client (one of the `-c` connections with
//! its reconnects) and responses per TCP connection, from counts kept at the end of each. Pure
//! arithmetic on finished counts; nothing here runs during the load.

use serde::{Deserialize, Serialize};

use std::ops::AddAssign;

use super::Hist;

/// Requests completed per client: one of the `-c` connections open when the clock started, with
/// every reconnect it made.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    pub min: u64,
    pub p50: u64,
    pub max: u64,
    /// Clients that completed no request at all.
    pub starved: u64,
    /// The median over the clients that completed at least one request (0 when none did).
    pub p50_answered: u64,
    /// max / min; null when some client completed none.
    pub max_over_min: Option<f64>,
}

impl Fairness {
    /// `None` without clients.
    pub fn of(per_client: &[u64]) -> Option<Fairness> {
        let mut v = per_client.to_vec();
        v.sort_unstable();
        let (&min, &max) = (v.first()?, v.last()?);
        let starved = v.iter().take_while(|&&n| n == 0).count();
        let answered = &v[starved..];
        Some(Fairness {
            min,
            p50: v[(v.len() - 1) / 2],
            max,
            starved: starved as u64,
            p50_answered: match answered.len() {
                0 => 0,
                n => answered[(n - 1) / 2],
            },
            max_over_min: (min > 0).then(|| max as f64 / min as f64),
        })
    }
}

/// What a thread counts of the responses each TCP connection carried, recorded once per
/// connection (when it closes or the run ends): a histogram for the median, bounded in size
/// whatever the number of connections, and the exact extremes.
#[derive(Debug, Clone, Default)]
pub struct ConnectionCounts {
    hist: Hist,
    min: Option<u64>,
    max: u64,
}

impl ConnectionCounts {
    pub fn record(&mut self, responses: u64) {
        self.hist.record(responses);
        self.min = Some(self.min.map_or(responses, |m| m.min(responses)));
        self.max = self.max.max(responses);
    }

    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }
}

impl AddAssign<&ConnectionCounts> for ConnectionCounts {
    fn add_assign(&mut self, o: &ConnectionCounts) {
        self.hist += &o.hist;
        self.min = match (self.min, o.min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max = self.max.max(o.max);
    }
}

/// Responses carried per TCP connection: every connection of the run, each counted when it
/// closed or when the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PerConnection {
    pub connections: u64,
    pub min: u64,
    /// Exact up to 2,048, then within 0.1 % (and never outside min..max).
    pub p50: u64,
    pub max: u64,
}

impl PerConnection {
    /// `None` when no connection opened.
    pub fn of(c: &ConnectionCounts) -> Option<PerConnection> {
        let min = c.min?;
        let h = c.hist.hdr();
        Some(PerConnection {
            connections: h.len(),
            min,
            p50: h.value_at_quantile(0.5).clamp(min, c.max),
            max: c.max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarises_the_spread() {
        assert_eq!(Fairness::of(&[]), None);
        let f = Fairness::of(&[10, 40, 20, 30]).unwrap();
        assert_eq!((f.min, f.p50, f.max, f.starved), (10, 20, 40, 0));
        assert_eq!(f.p50_answered, 20);
        assert_eq!(f.max_over_min, Some(4.0));
        let g = Fairness::of(&[0, 7, 0, 9, 8, 0, 0]).unwrap();
        assert_eq!((g.min, g.p50, g.max, g.starved), (0, 0, 9, 4));
        assert_eq!(g.p50_answered, 8, "the median of 7, 8, 9");
        assert_eq!(g.max_over_min, None);
        assert_eq!(Fairness::of(&[0, 0]).unwrap().p50_answered, 0);
    }

    #[test]
    fn counts_per_tcp_connection_are_exact_where_they_matter() {
        assert_eq!(PerConnection::of(&ConnectionCounts::default()), None);
        let mut a = ConnectionCounts::default();
        for n in [1000, 1000, 271] {
            a.record(n);
        }
        let mut b = ConnectionCounts::default();
        b.record(1000);
        b.record(0);
        a += &b;
        let p = PerConnection::of(&a).unwrap();
        assert_eq!((p.connections, p.min, p.p50, p.max), (5, 0, 1000, 1000));
        // Above 2,048 the histogram's buckets are 4 wide here; the extremes stay exact and the
        // median inside them.
        let mut c = ConnectionCounts::default();
        for n in [7238, 7239, 7239] {
            c.record(n);
        }
        let p = PerConnection::of(&c).unwrap();
        assert_eq!((p.min, p.max), (7238, 7239));
        assert!((7238..=7239).contains(&p.p50), "{p:?}");
    }
}
