//! How the work spread over connections: requests per client (one of the `-c` connections with
//! its reconnects) and responses per TCP connection, from counts kept at the end of each. Pure
//! arithmetic on finished counts; nothing here runs during the load.

use serde::Serialize;

use super::Hist;

/// Requests completed per client: one of the `-c` connections open when the clock started, with
/// every reconnect it made.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
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

/// Responses carried per TCP connection: every connection of the run, each counted when it
/// closed or when the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PerConnection {
    pub connections: u64,
    pub min: u64,
    /// Exact up to 2,048, then within 0.1 %.
    pub p50: u64,
    pub max: u64,
}

impl PerConnection {
    /// `None` when no connection opened.
    pub fn of(h: &Hist) -> Option<PerConnection> {
        let h = (!h.is_empty()).then(|| h.hdr())?;
        Some(PerConnection {
            connections: h.len(),
            min: h.min(),
            p50: h.lowest_equivalent(h.value_at_quantile(0.5)),
            max: h.max(),
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
        assert_eq!(PerConnection::of(&Hist::new()), None);
        let mut h = Hist::new();
        for n in [1000, 1000, 1000, 271, 0] {
            h.record(n);
        }
        let p = PerConnection::of(&h).unwrap();
        assert_eq!((p.connections, p.min, p.p50, p.max), (5, 0, 1000, 1000));
    }
}
