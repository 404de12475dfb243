//! Numbers as a person reads them: counts with thousands separators, durations in a unit read at
//! a glance, rates, byte sizes in binary units. ASCII only. Shared by the analysis's sentences,
//! the reports and the live display, so that neither layer borrows from the other; reading
//! numbers people type is `units`' business.

/// 1234567 -> "1,234,567".
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count and its noun, singular for one: "1 connection", "1,000 connections".
pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

/// Milliseconds with three decimals below one second, seconds above.
pub fn millis(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{ms:.3} ms")
    } else {
        format!("{:.3} s", ms / 1000.0)
    }
}

/// A rate with thousands separators and one decimal: 175019.46 -> "175,019.5".
pub fn per_second(rate: f64) -> String {
    let tenths = (rate.max(0.0) * 10.0).round() as u64;
    format!("{}.{}", count(tenths / 10), tenths % 10)
}

/// Bytes in B, KiB, MiB or GiB.
pub fn bytes(n: f64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024.0 {
        return format!("{n:.0} B");
    }
    let mut v = n / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.2} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(counted(1, "stream", "streams"), "1 stream");
        assert_eq!(counted(0, "stream", "streams"), "0 streams");
        assert_eq!(counted(1_000, "stream", "streams"), "1,000 streams");
    }

    #[test]
    fn durations() {
        assert_eq!(millis(0.0412), "0.041 ms");
        assert_eq!(millis(12.3456), "12.346 ms");
        assert_eq!(millis(1500.0), "1.500 s");
    }

    #[test]
    fn rates_have_separators_and_one_decimal() {
        assert_eq!(per_second(175_019.46), "175,019.5");
        assert_eq!(per_second(0.0), "0.0");
        assert_eq!(per_second(999.96), "1,000.0");
    }

    #[test]
    fn sizes() {
        assert_eq!(bytes(5.0), "5 B");
        assert_eq!(bytes(2048.0), "2.00 KiB");
        assert_eq!(bytes(3.5 * 1024.0 * 1024.0), "3.50 MiB");
        assert_eq!(bytes(5.0 * 1024f64.powi(3)), "5.00 GiB");
    }
}
