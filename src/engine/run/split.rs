//! Exact division of connections and request budgets: parts always sum to the total, so nothing
//! is lost to a remainder and nothing is sent twice.

/// Splits `total` into `parts` near-equal parts (the first ones get the remainder).
pub fn even(total: u64, parts: usize) -> Vec<u64> {
    let parts64 = parts.max(1) as u64;
    (0..parts.max(1) as u64)
        .map(|i| total / parts64 + u64::from(i < total % parts64))
        .collect()
}

/// Splits `total` in proportion to `weights` (largest-remainder rounding, exact sum).
/// All-zero weights give all-zero parts.
pub fn proportional(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    if sum == 0 {
        return vec![0; weights.len()];
    }
    // Cumulative rounding: part i = floor(total*W_i/sum) - floor(total*W_{i-1}/sum).
    let mut cum = 0u128;
    let mut prev = 0u128;
    weights
        .iter()
        .map(|&w| {
            cum += u128::from(w);
            let upto = u128::from(total) * cum / sum;
            let part = upto - prev;
            prev = upto;
            part as u64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_split_is_exact() {
        assert_eq!(even(10, 3), vec![4, 3, 3]);
        assert_eq!(even(2, 4), vec![1, 1, 0, 0]);
        for total in 0..200u64 {
            for parts in 1..17 {
                let s = even(total, parts);
                assert_eq!(s.len(), parts);
                assert_eq!(s.iter().sum::<u64>(), total);
                assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
            }
        }
    }

    #[test]
    fn proportional_split_is_exact() {
        assert_eq!(proportional(10, &[1, 1]), vec![5, 5]);
        assert_eq!(proportional(10, &[2, 1]), vec![6, 4]);
        assert_eq!(proportional(10, &[0, 5]), vec![0, 10]);
        assert_eq!(proportional(7, &[0, 0]), vec![0, 0]);
        assert_eq!(
            proportional(u64::MAX, &[u64::MAX, 1])
                .iter()
                .map(|&x| u128::from(x))
                .sum::<u128>(),
            u128::from(u64::MAX)
        );
        for total in [0u64, 1, 9, 10_000, 1_000_003] {
            for w in [
                vec![3, 5, 7],
                vec![128, 128, 127],
                vec![1],
                vec![0, 1, 0, 2],
            ] {
                let s = proportional(total, &w);
                assert_eq!(s.iter().sum::<u64>(), total, "{total} {w:?}");
                for (part, weight) in s.iter().zip(&w) {
                    if *weight == 0 {
                        assert_eq!(*part, 0);
                    }
                }
            }
        }
    }
}
