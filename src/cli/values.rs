//! Value parsers for the command line: counts ("10k", "1m"), durations ("500ms", "1m30s", or
//! bare seconds), headers ("Name: value") and basic-auth credentials ("user:pass").

use std::time::Duration;

use crate::plan::is_token;

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

/// "500ms", "10s", "1m30s", "1.5s", or a bare number of seconds ("10", "0.5").
pub fn duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if let Ok(secs) = t.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).map_err(|_| format!("{s:?} is not a duration"));
    }
    humantime::parse_duration(t)
        .map_err(|e| format!("{s:?} is not a duration ({e}); examples: 500ms, 10s, 1m30s"))
}

/// "Name: value". The name must be a token; the value must not contain CR, LF or NUL.
pub fn header(s: &str) -> Result<(String, String), String> {
    let Some((name, value)) = s.split_once(':') else {
        return Err(format!("{s:?} is not a header; use \"Name: value\""));
    };
    let name = name.trim();
    if !is_token(name) {
        return Err(format!("{name:?} is not a valid header name"));
    }
    let value = value.trim();
    if value.bytes().any(|b| matches!(b, b'\r' | b'\n' | 0)) {
        return Err(format!(
            "the value of header {name:?} contains CR, LF or NUL"
        ));
    }
    Ok((name.to_owned(), value.to_owned()))
}

/// "user:pass" (the password may contain ':' and may be empty).
pub fn basic_auth(s: &str) -> Result<(String, String), String> {
    match s.split_once(':') {
        Some((user, pass)) => Ok((user.to_owned(), pass.to_owned())),
        None => Err("basic auth must be user:pass".to_owned()),
    }
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
    fn durations() {
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(duration("0.25"), Ok(Duration::from_millis(250)));
        for bad in ["", "abc", "-1", "10 parsecs", "NaN"] {
            assert!(duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn headers() {
        assert_eq!(
            header("X-Test: a: b "),
            Ok(("X-Test".into(), "a: b".into()))
        );
        assert_eq!(header("Empty:"), Ok(("Empty".into(), "".into())));
        assert!(header("NoColon").is_err());
        assert!(header(": value").is_err());
        assert!(header("Bad Name: v").is_err());
        assert!(header("X: a\r\nInjected: 1").is_err());
    }

    #[test]
    fn basic_auth_pairs() {
        assert_eq!(basic_auth("u:p:q"), Ok(("u".into(), "p:q".into())));
        assert_eq!(basic_auth("u:"), Ok(("u".into(), "".into())));
        assert!(basic_auth("nopass").is_err());
    }
}
