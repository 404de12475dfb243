//! Units a person types: counts ("10k", "1.5m") and durations ("500ms", "1m30s", bare seconds).
//! Shared by the command line and by `--slo` targets.

use std::time::Duration;

/// "10000", "10k", "1.5k", "2m" (thousand, million). The result must be a whole number.
pub fn count(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1_000u64),
        Some((i, 'm' | 'M')) => (&t[..i], 1_000_000),
        _ => (t, 1),
    };
    let bad = || format!("{s:?} is not a count (examples: 200, 10k, 1.5m)");
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let int: u64 = int.parse().map_err(|_| bad())?;
    let mut value = int.checked_mul(mult).ok_or_else(bad)?;
    // Each fractional digit is worth mult/10^k; it must land on a whole number.
    let mut unit = mult;
    for d in frac.bytes() {
        if unit % 10 != 0 {
            return Err(format!("{s:?} is not a whole number"));
        }
        unit /= 10;
        value = value
            .checked_add(u64::from(d - b'0') * unit)
            .ok_or_else(bad)?;
    }
    Ok(value)
}

/// A rate as an exact fraction: `num / den` per second ("500", "0.5", "2.5k"; decimal, so that
/// intended send times can be computed in integers and never drift).
pub fn rate(s: &str) -> Result<(u64, u64), String> {
    let t = s.trim();
    let bad = || format!("{s:?} is not a rate (examples: 500, 0.5, 2.5k requests per second)");
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1_000u64),
        Some((i, 'm' | 'M')) => (&t[..i], 1_000_000),
        _ => (t, 1),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || (num.contains('.') && !digits(frac)) || frac.len() > 9 {
        return Err(bad());
    }
    let den = 10u64.pow(frac.len() as u32);
    let whole: u64 = format!("{int}{frac}").parse().map_err(|_| bad())?;
    let mut num = whole.checked_mul(mult).ok_or_else(bad)?;
    if num == 0 {
        return Err(format!("{s:?}: the rate must be above zero"));
    }
    let mut den = den;
    let g = gcd(num, den);
    num /= g;
    den /= g;
    Ok((num, den))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The longest duration any flag takes: a year is longer than any test, and far enough from
/// the clocks' limits that deadlines computed from it (start + warm-up + duration + drain)
/// cannot overflow.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// "500ms", "10s", "1m30s","1.5s", or a bare number of seconds ("10", "0.5"); at most
/// `MAX_DURATION`.
pub fn duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let d = match t.parse::<f64>() {
        Ok(secs) => {
            Duration::try_from_secs_f64(secs).map_err(|_| format!("{s:?} is not a duration"))?
        }
        Err(_) => humantime::parse_duration(t)
            .map_err(|e| format!("{s:?} is not a duration ({e}); examples: 500ms, 10s, 1m30s"))?,
    };
    if d > MAX_DURATION {
        return Err(format!("{s:?} is too long: at most 365d"));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(count("200"), Ok(200));
        assert_eq!(count("10k"), Ok(10_000));
        assert_eq!(count("10K"), Ok(10_000));
        assert_eq!(count("1m"), Ok(1_000_000));
        assert_eq!(count("1.5k"), Ok(1_500));
        assert_eq!(count("2.25m"), Ok(2_250_000));
        assert_eq!(count("0"), Ok(0));
        for bad in [
            "",
            "k",
            "-1",
            "1.5",
            "1.0001k",
            "ten",
            "1e3",
            "99999999999999999999",
            "1kk",
            " 5 x",
        ] {
            assert!(count(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn rates_are_exact_fractions() {
        assert_eq!(rate("500"), Ok((500, 1)));
        assert_eq!(rate("0.5"), Ok((1, 2)));
        assert_eq!(rate("2.5k"), Ok((2500, 1)));
        assert_eq!(rate("1234.25"), Ok((4937, 4)));
        assert_eq!(rate("0.001"), Ok((1, 1000)));
        for bad in [
            "",
            "0",
            "0.0",
            "-1",
            "abc",
            "1e3",
            "1.",
            ".5",
            "0.0000000001",
        ] {
            assert!(rate(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(duration("0.25"), Ok(Duration::from_millis(250)));
        for bad in ["", "abc", "-1", "10 parsecs", "NaN", "inf", "1e400"] {
            assert!(duration(bad).is_err(), "{bad:?}");
        }
        assert_eq!(duration("365d"), Ok(MAX_DURATION));
        for long in ["1e19", "18446744073709551615s", "366d", "31536001"] {
            let e = duration(long).unwrap_err();
            assert!(e.contains("too long"), "{long}: {e}");
        }
    }
}
