//! The insight rule for running out of local ports (the `ports` failure class, EADDRNOTAVAIL).
//! Reads only the finished error rows; `report::insight` says why it happens and what to change.

use super::finding::{Finding, Limit};
use crate::stats::ErrorRow;

/// Adds the explanation to `out` and the reason to the verdict's `limits` when any connect found
/// no free local port.
pub fn ports(errors: &[ErrorRow], limits: &mut Vec<Limit>, out: &mut Vec<Finding>) {
    if let Some(connects) = errors
        .iter()
        .find(|e| e.class == "ports")
        .map(|e| e.count)
        .filter(|&n| n > 0)
    {
        out.push(Finding::PortsExhausted { connects });
        limits.push(Limit::OutOfPorts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(class: &str, n: u64) -> ErrorRow {
        ErrorRow {
            class: class.into(),
            count: n,
            example: None,
        }
    }

    #[test]
    fn speaks_only_when_ports_ran_out() {
        let (mut limits, mut out) = (Vec::new(), Vec::new());
        ports(&[row("connect", 5)], &mut limits, &mut out);
        assert!(limits.is_empty() && out.is_empty());
        ports(
            &[row("connect", 5), row("ports", 1234)],
            &mut limits,
            &mut out,
        );
        assert_eq!(out, [Finding::PortsExhausted { connects: 1234 }]);
        assert_eq!(limits, [Limit::OutOfPorts]);
    }
}
