//! The open-file limit: raised to the hard limit when spate starts, and checked against a plan
//! before anything connects, so that `-c` too large for the machine fails with one line instead
//! of a run whose connections fail one by one. Never prints.

/// File descriptors a run needs besides one per connection: per load thread its runtime's epoll
/// and wake-up descriptors and two timers (sweeper and pacer), plus stdio, the signal pipe, the
/// display and DNS.
pub const FDS_PER_THREAD: u64 = 4;
pub const FDS_BASE: u64 = 32;

/// The soft and hard limits on open files; `None` for "unlimited" or a platform without them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoFile {
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

/// Descriptors a run with `connections` sockets on `threads` load threads needs at most.
pub fn fds_needed(connections: u32, threads: u32) -> u64 {
    u64::from(connections) + FDS_PER_THREAD * u64::from(threads) + FDS_BASE
}

/// `Err((needed, limits))` when `sockets` on `threads` load threads need more descriptors than
/// the soft limit allows.
pub fn check(sockets: u32, threads: u32) -> Result<(), (u64, NoFile)> {
    let needed = fds_needed(sockets, threads);
    let limits = nofile();
    match limits.soft {
        Some(soft) if soft < needed => Err((needed, limits)),
        _ => Ok(()),
    }
}

#[cfg(unix)]
fn to_limit(v: libc::rlim_t) -> Option<u64> {
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every unix
    (v != libc::RLIM_INFINITY).then_some(v as u64)
}

#[cfg(unix)]
pub fn nofile() -> NoFile {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid, writable rlimit; the call only writes it.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return NoFile {
            soft: None,
            hard: None,
        };
    }
    NoFile {
        soft: to_limit(r.rlim_cur),
        hard: to_limit(r.rlim_max),
    }
}

#[cfg(not(unix))]
pub fn nofile() -> NoFile {
    NoFile {
        soft: None,
        hard: None,
    }
}

/// Raises the soft limit on open files to the hard limit, as wrk and oha users otherwise do by
/// hand with `ulimit -n`. Returns the soft limit in force afterwards. Failing is harmless: the plan
/// check then reports the limit that remains.
#[cfg(unix)]
pub fn raise_nofile() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid, writable rlimit; the call only writes it.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return None;
    }
    // macOS refuses a soft limit above kern.maxfilesperproc even when the hard limit is
    // unlimited; its OPEN_MAX (10240) is the fallback there.
    for want in [r.rlim_max, 10_240] {
        if want <= r.rlim_cur {
            break;
        }
        let raised = libc::rlimit {
            rlim_cur: want,
            rlim_max: r.rlim_max,
        };
        // SAFETY: `raised` is a valid rlimit with soft <= hard; the call only reads it.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            r.rlim_cur = want;
            break;
        }
    }
    to_limit(r.rlim_cur)
}

#[cfg(not(unix))]
pub fn raise_nofile() -> Option<u64> {
    None
}

/// The line that tells a user how to make room, for `RunError::FileLimit`.
pub fn advice(connections: u32, needed: u64, limits: NoFile) -> String {
    let show = |v: Option<u64>| v.map_or("unlimited".to_owned(), |n| n.to_string());
    format!(
        "-c {connections} needs about {needed} open files, but the limit is {} (hard limit {}); \
         raise the hard limit (ulimit -Hn {needed} as root, LimitNOFILE= in a systemd unit, \
         nofile in /etc/security/limits.conf) or lower -c",
        show(limits.soft),
        show(limits.hard)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_a_descriptor_per_connection_plus_a_margin() {
        assert_eq!(fds_needed(10_000, 2), 10_000 + 8 + 32);
        assert!(check(1, 1).is_ok());
        assert!(check(u32::MAX, 1).is_err() || nofile().soft.is_none());
    }

    #[test]
    #[cfg(unix)]
    fn raising_leaves_the_soft_limit_at_the_hard_one() {
        let after = raise_nofile();
        let now = nofile();
        assert_eq!(after, now.soft);
        if !cfg!(target_os = "macos") {
            assert_eq!(now.soft, now.hard);
        }
    }

    #[test]
    fn advice_names_the_limit_and_the_way_out() {
        let a = advice(
            5000,
            5040,
            NoFile {
                soft: Some(1024),
                hard: Some(1024),
            },
        );
        assert!(a.contains("-c 5000 needs about 5040 open files"), "{a}");
        assert!(a.contains("limit is 1024 (hard limit 1024)"), "{a}");
        assert!(a.contains("ulimit -Hn 5040"), "{a}");
    }
}
