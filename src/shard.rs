//! A run as one part of a job split over several processes or machines: which part it is
//! (`--shard I/N`, or Kubernetes' completion index), its exact share of the job's connections
//! and requests, and the wall-clock instant all parts start at (`--start-at`). Pure: reads no
//! clock of its own and opens nothing.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use crate::plan::{Shard, StartAt};

/// Kubernetes sets this in each pod of an Indexed Job: the pod's index, 0 to completions - 1.
pub const INDEX_ENV: &str = "JOB_COMPLETION_INDEX";
/// How many shards the job has, for `--shard-from-env` (Kubernetes does not say).
pub const COUNT_ENV: &str = "SPATE_SHARDS";

/// `--shard I/N`: part I (from 0) of N.
pub fn parse(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("{s:?} is not I/N, a shard from 0 to N-1 of N (e.g. 0/4)");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u32, u32) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 {
        return Err(format!("{s:?}: a job has at least one shard"));
    }
    if i >= n {
        return Err(format!(
            "{s:?}: shards are numbered from 0 to {} of {n}",
            n - 1
        ));
    }
    Ok((i, n))
}

/// `--shard-from-env`: the shard from `JOB_COMPLETION_INDEX` and `SPATE_SHARDS`, as `get` reads
/// them.
pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<(u32, u32), String> {
    let read = |name: &str| get(name).ok_or_else(|| format!("--shard-from-env: {name} is not set"));
    let (i, n) = (read(INDEX_ENV)?, read(COUNT_ENV)?);
    parse(&format!("{}/{}", i.trim(), n.trim()))
        .map_err(|e| format!("--shard-from-env ({INDEX_ENV}={i}, {COUNT_ENV}={n}): {e}"))
}

/// Shard `index` of `count`'s part of `total` (connections or requests): the parts differ by
/// at most one, the first ones take the remainder, and they sum to `total`. For requests in
/// the open model it is also how many of the job's first `total` requests are the shard's
/// (those with `k mod count = index`).
pub fn part(total: u64, index: u32, count: u32) -> u64 {
    let (i, n) = (u64::from(index), u64::from(count.max(1)));
    total / n + u64::from(i < total % n)
}

/// `--start-at`'s absolute forms: an RFC 3339 instant (`2026-11-27T10:00:00Z`, or with an
/// offset such as `+01:00`), or unix milliseconds. (`+30s`, from now, is the command line's.)
pub fn parse_instant(s: &str) -> Result<SystemTime, String> {
    let s = s.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        let ms: u64 = s.parse().map_err(|_| format!("{s}: too large"))?;
        return UNIX_EPOCH
            .checked_add(Duration::from_millis(ms))
            .ok_or_else(|| format!("{s}: too large"));
    }
    rfc3339(s).ok_or_else(|| {
        format!(
            "{s:?} is not an instant: give RFC 3339 (2026-11-27T10:00:00Z), unix milliseconds, or +30s from now"
        )
    })
}

/// An RFC 3339 date and time with `Z` or a numeric offset.
fn rfc3339(s: &str) -> Option<SystemTime> {
    let (local, offset_s) = match s.char_indices().rev().find(|&(_, c)| c == '+' || c == '-') {
        // The offset's sign comes after the time's 'T' (dates have '-' too).
        Some((at, sign)) if s[..at].contains(['T', 't', ' ']) && s.len() - at == 6 => {
            let (h, m) = s[at + 1..].split_once(':')?;
            let (h, m): (u64, u64) = (h.parse().ok()?, m.parse().ok()?);
            if h > 23 || m > 59 {
                return None;
            }
            let secs = (h * 60 + m) * 60;
            (
                &s[..at],
                if sign == '+' {
                    -(secs as i64)
                } else {
                    secs as i64
                },
            )
        }
        _ => (s.strip_suffix(['Z', 'z'])?, 0),
    };
    let utc = humantime::parse_rfc3339_weak(local).ok()?;
    match offset_s {
        o if o >= 0 => utc.checked_add(Duration::from_secs(o as u64)),
        o => utc.checked_sub(Duration::from_secs(o.unsigned_abs())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_numbered_from_zero_and_bad_ones_say_why() {
        assert_eq!(parse("0/4"), Ok((0, 4)));
        assert_eq!(parse("3/4"), Ok((3, 4)));
        assert_eq!(parse("0/1"), Ok((0, 1)));
        assert!(parse("4/4").unwrap_err().contains("from 0 to 3 of 4"));
        assert!(parse("0/0").unwrap_err().contains("at least one shard"));
        for bad in ["", "1", "a/b", "1/", "/2", "-1/2", "1/2/3"] {
            assert!(parse(bad).unwrap_err().contains("is not I/N"), "{bad}");
        }
    }

    #[test]
    fn the_environment_of_an_indexed_job_names_the_shard() {
        fn env(
            i: Option<&'static str>,
            n: Option<&'static str>,
        ) -> impl Fn(&str) -> Option<String> {
            move |k: &str| match k {
                INDEX_ENV => i.map(String::from),
                COUNT_ENV => n.map(String::from),
                _ => None,
            }
        }
        assert_eq!(from_env(env(Some("2"), Some("3"))), Ok((2, 3)));
        let e = from_env(env(None, Some("3"))).unwrap_err();
        assert!(e.contains("JOB_COMPLETION_INDEX is not set"), "{e}");
        let e = from_env(env(Some("3"), Some("3"))).unwrap_err();
        assert!(e.contains("JOB_COMPLETION_INDEX=3"), "{e}");
    }

    /// SplitMix64, for property tests without a dependency.
    fn draws(seed: u64) -> impl FnMut() -> u64 {
        let mut s = seed;
        move || {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    #[test]
    fn parts_sum_to_the_whole_and_are_the_striped_requests() {
        let mut next = draws(7);
        for _ in 0..2_000 {
            let n = (next() % 64 + 1) as u32;
            let total = match next() % 3 {
                0 => next() % 200,
                1 => next() % 1_000_000,
                _ => next(),
            };
            let parts: Vec<u64> = (0..n).map(|i| part(total, i, n)).collect();
            assert_eq!(
                parts.iter().map(|&p| u128::from(p)).sum::<u128>(),
                u128::from(total),
                "{total} over {n}"
            );
            assert!(parts.iter().max().unwrap() - parts.iter().min().unwrap() <= 1);
            if total < 5_000 {
                for i in 0..n {
                    let striped = (0..total).filter(|k| k % u64::from(n) == u64::from(i));
                    assert_eq!(striped.count() as u64, parts[i as usize], "{total} {i}/{n}");
                }
            }
        }
    }

    #[test]
    fn an_instant_is_rfc_3339_or_unix_milliseconds() {
        let at = |s| parse_instant(s).map(crate::stats::unix_us);
        assert_eq!(at("1764237600000"), Ok(1_764_237_600_000_000));
        assert_eq!(at("2025-11-27T10:00:00Z"), Ok(1_764_237_600_000_000));
        assert_eq!(at("2025-11-27T10:00:00.25Z"), Ok(1_764_237_600_250_000));
        assert_eq!(at("2025-11-27T11:30:00+01:30"), Ok(1_764_237_600_000_000));
        assert_eq!(at("2025-11-27T08:00:00-02:00"), Ok(1_764_237_600_000_000));
        for bad in [
            "tomorrow",
            "2025-11-27",
            "2025-11-27T10:00:00",
            "+30s",
            "2025-11-27T10:00:00+25:00",
        ] {
            assert!(at(bad).is_err(), "{bad}");
        }
    }
}
