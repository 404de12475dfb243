//! Value parsers for the command line: headers ("Name: value") and basic-auth credentials
//! ("user:pass"); counts and durations come from `crate::units`. Errors about headers and
//! credentials never repeat the value, which may be a secret.

use crate::plan::is_token;
pub use crate::units::{count, duration, rate};

/// `--stages`: a load profile (`plan::Stages::parse`).
pub fn stages(s: &str) -> Result<crate::plan::Stages, String> {
    crate::plan::Stages::parse(s)
}

/// `-t`: a duration, but not a bare whole number, which is what wrk's `-t4` (threads) looks like.
pub fn timeout(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{t} has no unit: -t is the request timeout (-t {t}s); wrk's -t{t} (threads) is \
             --threads {t} here, or run spate wrk with wrk's own flags"
        ));
    }
    duration(s)
}

/// "Name: value". The name must be a token; the value must not contain CR, LF or NUL.
pub fn header(s: &str) -> Result<(String, String), String> {
    // The text may hold a secret (a mistyped "Authorization Bearer ..."), so errors name the
    // problem, never the value.
    let Some((name, value)) = s.split_once(':') else {
        return Err("it has no ':' and is not a header; use \"Name: value\"".into());
    };
    let name = name.trim();
    if !is_token(name) {
        return Err(if name.contains(char::is_whitespace) || name.is_empty() {
            "the part before ':' is not a valid header name".to_owned()
        } else {
            format!("{name:?} is not a valid header name")
        });
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

/// `--http-version`: 1.1, 2 or 3 (1 and 1.0 are not versions spate speaks).
pub fn http_version(s: &str) -> Result<crate::plan::Protocol, String> {
    use crate::plan::Protocol;
    match s.trim() {
        "1.1" => Ok(Protocol::Http1),
        "2" | "2.0" => Ok(Protocol::Http2),
        "3" | "3.0" => Ok(Protocol::Http3),
        other => Err(format!(
            "{other:?} is not an HTTP version spate speaks: 1.1, 2 or 3"
        )),
    }
}

/// `--connect-to HOST1:PORT1:HOST2:PORT2`, as curl reads it.
pub fn connect_to(s: &str) -> Result<crate::route::ConnectTo, String> {
    s.parse()
}

/// `spate sweep --conc`: the concurrency levels, ascending, each once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Levels(pub Vec<u32>);

/// The most levels a sweep runs: each is a whole run.
pub const MAX_LEVELS: usize = 40;

/// "10,50,100", "10..1000" (1, 2 and 5 a decade, and both ends) or "1..1024:11" (11 levels
/// spaced evenly on a log scale, rounded).
pub fn levels(s: &str) -> Result<Levels, String> {
    let level = |w: &str| -> Result<u32, String> {
        let w = w.trim();
        match count(w) {
            Ok(n) if (1..=u64::from(u32::MAX)).contains(&n) => Ok(n as u32),
            _ => Err(format!("{w:?} is not a number of connections (1 or more)")),
        }
    };
    let mut v: Vec<u32> = match s.split_once("..") {
        None => s.split(',').map(level).collect::<Result<_, _>>()?,
        Some((lo, rest)) => {
            let (hi, steps) = match rest.split_once(':') {
                Some((hi, n)) => (hi, Some(n)),
                None => (rest, None),
            };
            let (lo, hi) = (level(lo)?, level(hi)?);
            if lo >= hi {
                return Err(format!("{s}: a range goes from fewer to more connections"));
            }
            match steps {
                None => decades(lo, hi),
                Some(n) => {
                    let n = n
                        .trim()
                        .parse::<usize>()
                        .ok()
                        .filter(|n| (2..=MAX_LEVELS).contains(n))
                        .ok_or_else(|| {
                            format!(
                                "{s}: the number after ':' is how many levels, 2 to {MAX_LEVELS}"
                            )
                        })?;
                    let ratio = (f64::from(hi) / f64::from(lo)).powf(1.0 / (n - 1) as f64);
                    (0..n)
                        .map(|i| (f64::from(lo) * ratio.powi(i as i32)).round() as u32)
                        .map(|c| c.clamp(lo, hi))
                        .collect()
                }
            }
        }
    };
    v.sort_unstable();
    v.dedup();
    if v.len() < 2 {
        return Err(format!("{s}: a sweep needs at least two levels"));
    }
    if v.len() > MAX_LEVELS {
        return Err(format!(
            "{s}: {} levels; a sweep runs at most {MAX_LEVELS}",
            v.len()
        ));
    }
    Ok(Levels(v))
}

/// From `lo` to `hi`: both, and every 1, 2 or 5 times a power of ten between them.
fn decades(lo: u32, hi: u32) -> Vec<u32> {
    let mut v = vec![lo, hi];
    let mut power: u64 = 1;
    while power <= u64::from(hi) {
        for m in [1, 2, 5] {
            let c = power * m;
            if c > u64::from(lo) && c < u64::from(hi) {
                v.push(c as u32);
            }
        }
        power *= 10;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn timeouts_need_a_unit() {
        assert_eq!(timeout("4s"), Ok(std::time::Duration::from_secs(4)));
        assert_eq!(timeout("0.5"), Ok(std::time::Duration::from_millis(500)));
        let e = timeout("4").unwrap_err();
        assert!(e.contains("--threads 4") && e.contains("-t 4s"), "{e}");
    }

    #[test]
    fn basic_auth_pairs() {
        assert_eq!(basic_auth("u:p:q"), Ok(("u".into(), "p:q".into())));
        assert_eq!(basic_auth("u:"), Ok(("u".into(), "".into())));
        assert!(basic_auth("nopass").is_err());
    }

    #[test]
    fn sweep_levels_as_lists_and_ranges() {
        let l = |s: &str| levels(s).map(|l| l.0);
        assert_eq!(l("100,10, 50,10"), Ok(vec![10, 50, 100]));
        assert_eq!(l("10..1000"), Ok(vec![10, 20, 50, 100, 200, 500, 1000]));
        assert_eq!(l("3..40"), Ok(vec![3, 5, 10, 20, 40]));
        assert_eq!(
            l("1..1024:11"),
            Ok(vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])
        );
        assert_eq!(l("1..4:10"), Ok(vec![1, 2, 3, 4]), "rounded, each once");
        assert_eq!(l("1k,2k"), Ok(vec![1000, 2000]));
        for (bad, says) in [
            ("10", "at least two levels"),
            ("0,10", "not a number of connections"),
            ("ten,20", "not a number of connections"),
            ("100..10", "from fewer to more"),
            ("1..100:1", "how many levels"),
            ("1..100:x", "how many levels"),
            ("1..100000:41", "how many levels"),
        ] {
            let e = l(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let many: Vec<String> = (1..=41).map(|c| c.to_string()).collect();
        assert!(l(&many.join(",")).unwrap_err().contains("at most 40"));
    }
}
