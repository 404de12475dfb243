//! The insight rule for running out of local ports (the `ports` failure class, EADDRNOTAVAIL):
//! why it happens and what to change. Reads only the finished error rows.

use crate::numbers::count;
use crate::stats::ErrorRow;

/// Adds the explanation to `out` and the reason to the verdict's `limits` when any connect found
/// no free local port.
pub fn ports(errors: &[ErrorRow], limits: &mut Vec<String>, out: &mut Vec<String>) {
    let Some(n) = errors
        .iter()
        .find(|e| e.class == "ports")
        .map(|e| e.count)
        .filter(|&n| n > 0)
    else {
        return;
    };
    out.push(format!(
        "{} connects found no free local port (EADDRNOTAVAIL): every closed connection keeps its \
         port in TIME_WAIT for about a minute, so opening a connection per request (--rpc 1, \
         --disable-keepalive) at this rate uses up the ephemeral port range \
         (net.ipv4.ip_local_port_range on Linux). Keep connections alive (a larger --rpc), lower \
         the rate, or widen the port range.",
        count(n)
    ));
    limits.push("the machine ran out of local ports for new connections".into());
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
        assert_eq!(out.len(), 1);
        assert!(
            out[0].starts_with("1,234 connects found no free local port"),
            "{out:?}"
        );
        assert!(out[0].contains("TIME_WAIT") && out[0].contains("ip_local_port_range"));
        assert_eq!(
            limits,
            ["the machine ran out of local ports for new connections"]
        );
    }
}
