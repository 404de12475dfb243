//! The Mann-Whitney U test against SciPy's `mannwhitneyu(method="exact")`, an implementation no
//! one here wrote (pinned in target/test-venv by scripts/test-venv.sh): fixed vectors of sizes 3
//! to 12, with and without ties, some far apart, some mixed, some equal.

use serde_json::Value;
use spate::analysis::mann_whitney;

use crate::support::test_python;

/// Deterministic cases: every pair of sizes in 3..=12 a few times over, values on a coarse grid
/// so that ties are common, shifted so that some pairs differ and some do not.
fn cases() -> Vec<(Vec<f64>, Vec<f64>)> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |grid: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % grid) as f64
    };
    let mut out = Vec::new();
    for n1 in 3..=12 {
        for n2 in (3..=12).step_by(3) {
            for (grid, shift) in [(5, 0.0), (40, 0.0), (40, 15.0), (1000, 300.0), (3, 1.0)] {
                let a = (0..n1).map(|_| next(grid)).collect();
                let b = (0..n2).map(|_| next(grid) + shift).collect();
                out.push((a, b));
            }
        }
    }
    // Fully separated, all equal, and one shared value.
    out.push((vec![1.0, 2.0, 3.0], vec![4.0, 5.0, 6.0]));
    out.push((vec![7.0; 4], vec![7.0; 5]));
    out.push((vec![1.0, 2.0, 5.0, 5.0], vec![5.0, 8.0, 9.0, 10.0]));
    out
}

#[test]
fn p_values_equal_scipys_exact_test() {
    let Some(python) = test_python("scipy") else {
        return;
    };
    let cases = cases();
    let script = "import json, sys\n\
                  from scipy.stats import mannwhitneyu\n\
                  cases = json.load(sys.stdin)\n\
                  out = []\n\
                  for a, b in cases:\n\
                  \x20   r = mannwhitneyu(a, b, alternative='two-sided', method='exact')\n\
                  \x20   out.append([float(r.statistic), float(r.pvalue)])\n\
                  print(json.dumps(out))\n";
    let mut child = std::process::Command::new(python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    serde_json::to_writer(child.stdin.take().unwrap(), &cases).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let scipy: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(scipy.len(), cases.len());
    let (mut small, mut large) = (0, 0);
    for ((a, b), want) in cases.iter().zip(&scipy) {
        let got = mann_whitney(a, b).unwrap();
        let (u, p) = (want[0].as_f64().unwrap(), want[1].as_f64().unwrap());
        assert_eq!(got.u, u, "U of {a:?} against {b:?}");
        assert!(
            (got.p - p).abs() <= 1e-12,
            "p of {a:?} against {b:?}: {} against SciPy's {p}",
            got.p
        );
        match p < 0.05 {
            true => small += 1,
            false => large += 1,
        }
    }
    assert!(
        small >= 20 && large >= 20,
        "both kinds of case: {small} small, {large} large"
    );
}
