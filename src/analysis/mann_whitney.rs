//! The two-sided Mann-Whitney U test with the exact null distribution, for comparing the
//! rounds of two targets (one value per round, never per request: requests within a run are
//! correlated). Ties get average ranks and the distribution is the one without ties, as
//! SciPy's `mannwhitneyu(method="exact")` does, which the tests check it against; and the
//! Hodges-Lehmann shift with the confidence interval that inverts the test. Pure arithmetic:
//! no IO, no words.

/// Samples larger than this are refused: the exact distribution's counts must fit in 128 bits
/// (C(120, 60) is about 1e35), and no comparison runs that many rounds.
pub const MAX_SAMPLE: usize = 60;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UTest {
    /// U of the first sample: the number of pairs in which it is the larger (ties count half).
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// The test of `a` against `b`; `None` when a sample is empty, larger than `MAX_SAMPLE`, or
/// holds a value that is not a number.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<UTest> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 || n1 > MAX_SAMPLE || n2 > MAX_SAMPLE {
        return None;
    }
    if a.iter().chain(b).any(|v| v.is_nan()) {
        return None;
    }
    let r1: f64 = ranks(a, b)[..n1].iter().sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let u2 = (n1 * n2) as f64 - u1;
    // The larger of the two, whole (half-ranks of ties are truncated, as SciPy does).
    let k = u1.max(u2) as usize;
    let counts = u_counts(n1.min(n2), n1.max(n2));
    let total: u128 = counts.iter().sum();
    let tail: u128 = counts[k.min(counts.len())..].iter().sum();
    let p = (2.0 * (tail as f64 / total as f64)).min(1.0);
    Some(UTest { u: u1, p })
}

/// How much `b` is shifted from `a` (Hodges-Lehmann: the median of all differences b - a),
/// with the distribution-free confidence interval that inverts the U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    pub estimate: f64,
    /// The interval, or `None` when samples this small cannot give the confidence asked for.
    pub interval: Option<(f64, f64)>,
    /// The interval's exact confidence (at least 1 - alpha; the U distribution is discrete).
    pub confidence: f64,
}

/// The shift of `b` against `a` with a two-sided interval at confidence 1 - `alpha`: with the
/// n1 x n2 differences sorted, the C-th from each end, C the largest count whose U-tail is at most
/// alpha / 2. For a ratio, give the logarithms and take the exponential of the result.
pub fn shift(a: &[f64], b: &[f64], alpha: f64) -> Option<Shift> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 || n1 > MAX_SAMPLE || n2 > MAX_SAMPLE {
        return None;
    }
    let mut d: Vec<f64> = a
        .iter()
        .flat_map(|x| b.iter().map(move |y| y - x))
        .collect();
    if d.iter().any(|v| v.is_nan()) {
        return None;
    }
    d.sort_by(f64::total_cmp);
    let n = d.len();
    let estimate = median_of_sorted(&d)?;
    let counts = u_counts(n1.min(n2), n1.max(n2));
    let total = counts.iter().sum::<u128>() as f64;
    // c: how many differences to cut from each end; tail: P(U < c).
    let (mut c, mut tail) = (0usize, 0.0);
    while c < counts.len() && tail + counts[c] as f64 / total <= alpha / 2.0 {
        tail += counts[c] as f64 / total;
        c += 1;
    }
    Some(Shift {
        estimate,
        interval: (c > 0).then(|| (d[c - 1], d[n - c])),
        confidence: 1.0 - 2.0 * tail,
    })
}

/// The median of values already in order; `None` for none.
pub(super) fn median_of_sorted(v: &[f64]) -> Option<f64> {
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// The smallest two-sided p-value samples of these sizes can give: with 3 and 3, 0.1.
pub fn smallest_p(n1: usize, n2: usize) -> f64 {
    let counts = u_counts(n1.min(n2), n1.max(n2));
    (2.0 / counts.iter().sum::<u128>() as f64).min(1.0)
}

/// Average ranks (1-based) of `a` followed by `b` in their union.
fn ranks(a: &[f64], b: &[f64]) -> Vec<f64> {
    let all: Vec<f64> = a.iter().chain(b).copied().collect();
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by(|&i, &j| all[i].total_cmp(&all[j]));
    let mut rank = vec![0.0; all.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && all[order[j + 1]] == all[order[i]] {
            j += 1;
        }
        // Positions i..=j share the mean of ranks i+1..=j+1.
        let mean = (i + j + 2) as f64 / 2.0;
        for &k in &order[i..=j] {
            rank[k] = mean;
        }
        i = j + 1;
    }
    rank
}

/// How many of the C(m+n, m) orderings give each U from 0 to m*n: the coefficients of the
/// Gaussian binomial [m+n choose m] = prod over i in 1..=m of (1 - q^(n+i)) / (1 - q^i), built
/// factor by factor in exact integers (every partial product is itself a Gaussian binomial,
/// so nothing is rounded).
fn u_counts(m: usize, n: usize) -> Vec<u128> {
    let size = m * n + 1;
    let mut c = vec![0i128; size];
    c[0] = 1;
    for i in 1..=m {
        // Times (1 - q^(n+i)), highest power first so each term reads the old value.
        for u in (n + i..size).rev() {
            c[u] -= c[u - n - i];
        }
        // Divided by (1 - q^i): a running sum with stride i.
        for u in i..size {
            c[u] += c[u - i];
        }
    }
    c.into_iter().map(|v| v.max(0) as u128).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_null_distribution_counts_every_ordering_once() {
        // m = 2, n = 2: U = 0, 1, 2, 2, 3, 4 over the six orderings.
        assert_eq!(u_counts(2, 2), [1, 1, 2, 1, 1]);
        for (m, n) in [(1, 1), (3, 5), (7, 7), (12, 9)] {
            let c = u_counts(m, n);
            let total: u128 = c.iter().sum();
            let binom = (1..=m as u128).fold(1u128, |acc, i| acc * (n as u128 + i) / i);
            assert_eq!(total, binom, "{m}, {n}");
            assert!(c.iter().eq(c.iter().rev()), "symmetric: {m}, {n}");
        }
        let big = u_counts(MAX_SAMPLE, MAX_SAMPLE);
        assert!(
            big.iter().sum::<u128>() > 1e34 as u128,
            "no overflow at the limit"
        );
    }

    #[test]
    fn the_smallest_p_of_small_designs() {
        assert!((smallest_p(3, 3) - 0.1).abs() < 1e-15);
        assert!((smallest_p(4, 4) - 2.0 / 70.0).abs() < 1e-15);
        assert!((smallest_p(5, 5) - 2.0 / 252.0).abs() < 1e-15);
    }

    #[test]
    fn separated_samples_reach_the_smallest_p_and_equal_ones_p_1() {
        let t = mann_whitney(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]).unwrap();
        assert_eq!(t.u, 0.0);
        assert!((t.p - smallest_p(4, 4)).abs() < 1e-15);
        let same = mann_whitney(&[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0]).unwrap();
        assert_eq!((same.u, same.p), (4.5, 1.0));
        assert!(mann_whitney(&[], &[1.0]).is_none());
        assert!(mann_whitney(&[f64::NAN], &[1.0]).is_none());
        assert!(mann_whitney(&vec![1.0; MAX_SAMPLE + 1], &[1.0]).is_none());
    }

    #[test]
    fn the_shift_interval_cuts_the_u_tails_from_the_sorted_differences() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [11.0, 12.5, 13.0, 14.0, 15.0];
        let s = shift(&a, &b, 0.05).unwrap();
        let mut d: Vec<f64> = a
            .iter()
            .flat_map(|x| b.iter().map(move |y| y - x))
            .collect();
        d.sort_by(f64::total_cmp);
        assert_eq!(s.estimate, d[12], "the median of 25 differences");
        // 5 and 5: P(U <= 2) = 4/252 <= 0.025 < P(U <= 3) = 7/252, so 3 are cut from each end
        // (the textbook critical value of U is 2).
        assert_eq!(s.interval, Some((d[2], d[22])));
        assert!((s.confidence - (1.0 - 8.0 / 252.0)).abs() < 1e-12);
        // 3 and 3 cannot give 95 %: the smallest tail, 1/20, is already above 0.025.
        let small = shift(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.05).unwrap();
        assert_eq!((small.interval, small.confidence), (None, 1.0));
        assert_eq!(small.estimate, 3.0);
        assert!(shift(&[], &[1.0], 0.05).is_none());
    }

    /// Where the interval excludes 0, the U test rejects at the same alpha, and the other way.
    #[test]
    fn the_interval_and_the_test_agree() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1000) as f64 / 10.0
        };
        let mut rejected = [0, 0];
        for n in 4..=9 {
            for shift_by in [0.0, 10.0, 30.0, 60.0] {
                let a: Vec<f64> = (0..n).map(|_| next()).collect();
                let b: Vec<f64> = (0..n + 1).map(|_| next() + shift_by).collect();
                let s = shift(&a, &b, 0.05).unwrap();
                let (lo, hi) = s.interval.unwrap();
                let p = mann_whitney(&a, &b).unwrap().p;
                assert_eq!(
                    lo > 0.0 || hi < 0.0,
                    p <= 0.05,
                    "{a:?} {b:?}: [{lo}, {hi}], p {p}"
                );
                rejected[usize::from(p <= 0.05)] += 1;
            }
        }
        assert!(
            rejected[0] > 3 && rejected[1] > 3,
            "both outcomes: {rejected:?}"
        );
    }

    #[test]
    fn ties_get_average_ranks() {
        assert_eq!(ranks(&[2.0, 1.0], &[2.0, 3.0]), [2.5, 1.0, 2.5, 4.0]);
    }
}
