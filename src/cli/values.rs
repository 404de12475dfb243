//! Value parsers for the command line: headers ("Name: value") and basic-auth credentials
//! ("user:pass"); counts and durations come from `crate::units`. Errors about headers and
//! credentials never repeat the value, which may be a secret.

use crate::plan::is_token;
pub use crate::units::{count, duration, rate};

/// `-t`: a duration, but not a bare whole number, which is what wrk's `-t4` (threads) looks like.
pub fn timeout(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{t} has no unit: -t is the request timeout (-t {t}s); wrk's -t{t} (threads) is \
             --threads {t} here"
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

/// `--connect-to HOST1:PORT1:HOST2:PORT2`, as curl reads it.
pub fn connect_to(s: &str) -> Result<crate::route::ConnectTo, String> {
    s.parse()
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
}
