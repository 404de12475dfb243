//! How evenly the connections were served: requests completed per connection, from the counts
//! the slots kept. Pure arithmetic on finished counts; nothing here runs during the load.

use serde::Serialize;

/// Requests completed per connection (the connections open when the clock started).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fairness {
    pub min: u64,
    pub p50: u64,
    pub max: u64,
    /// Connections that completed no request at all.
    pub starved: u64,
    /// max / min; null when some connection completed none.
    pub max_over_min: Option<f64>,
}

impl Fairness {
    /// `None` without connections.
    pub fn of(per_connection: &[u64]) -> Option<Fairness> {
        let mut v = per_connection.to_vec();
        v.sort_unstable();
        let (&min, &max) = (v.first()?, v.last()?);
        Some(Fairness {
            min,
            p50: v[(v.len() - 1) / 2],
            max,
            starved: v.iter().take_while(|&&n| n == 0).count() as u64,
            max_over_min: (min > 0).then(|| max as f64 / min as f64),
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
        assert_eq!(f.max_over_min, Some(4.0));
        let g = Fairness::of(&[0, 7, 0, 9, 8]).unwrap();
        assert_eq!((g.min, g.p50, g.max, g.starved), (0, 7, 9, 2));
        assert_eq!(g.max_over_min, None);
    }
}
