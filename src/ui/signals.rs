//! Ctrl-C, SIGTERM and SIGHUP: the first sets the stop flag that the engine's sweepers read (stop
//! sending, drain briefly, report, save). Signals that arrive within `SAME_REQUEST` of the first
//! are the same request (one key press reaches spate twice under `timeout`, which forwards the
//! terminal's SIGINT to a child that got it already); a later SIGINT or SIGTERM, given on
//! purpose, restores the cursor and exits at once with 130.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Signals this soon after the first one are part of the same request to stop. A person who
/// presses Ctrl-C twice on purpose takes longer; a signal forwarded by `timeout`, `make` or a
/// shell's job control arrives within milliseconds.
pub const SAME_REQUEST: Duration = Duration::from_millis(500);

/// When the first stop signal arrived (CLOCK_MONOTONIC, ns; 0: none yet).
static FIRST_AT: AtomicU64 = AtomicU64::new(0);

/// CLOCK_MONOTONIC in ns, from a signal handler: clock_gettime(2) is async-signal-safe.
#[cfg(unix)]
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime(2) into a timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
        .max(1)
}

/// Elsewhere the console's handler runs on a thread of its own, where any clock will do.
#[cfg(not(unix))]
fn monotonic_ns() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let start = *EPOCH.get_or_init(Instant::now);
    (start.elapsed().as_nanos() as u64).saturating_add(1)
}

/// What a stop signal at `now` means, given when the first arrived (0: none yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Meaning {
    /// Stop: drain, report, save.
    Stop,
    /// Part of a request already under way.
    Same,
    /// A deliberate second request: quit now.
    Quit,
}

fn meaning(first_at: u64, now: u64) -> Meaning {
    match first_at {
        0 => Meaning::Stop,
        t if now.saturating_sub(t) < SAME_REQUEST.as_nanos() as u64 => Meaning::Same,
        _ => Meaning::Quit,
    }
}

/// Whether `signal` is ignored now (`nohup` ignores SIGHUP): then it stays ignored.
#[cfg(unix)]
fn ignored(signal: i32) -> bool {
    // SAFETY: sigaction(2) with a null new action only reads the current one.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// The signals that ask a run to stop, and the one of them that never quits at once.
#[cfg(unix)]
fn stop_signals() -> (Vec<i32>, Option<i32>) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    // A closed terminal or a dropped SSH session sends SIGHUP: the run is over, and its report
    // and --save file are what is left of it. A second SIGHUP (the shell passing it on) is no
    // request to quit, so only SIGINT and SIGTERM may end the drain early.
    let mut all = vec![SIGINT, SIGTERM];
    if !ignored(SIGHUP) {
        all.push(SIGHUP);
    }
    (all, Some(SIGHUP))
}

#[cfg(not(unix))]
fn stop_signals() -> (Vec<i32>, Option<i32>) {
    use signal_hook::consts::{SIGINT, SIGTERM};
    (vec![SIGINT, SIGTERM], None)
}

pub fn install(stop: Arc<AtomicBool>) -> io::Result<()> {
    let (signals, never_quits) = stop_signals();
    for signal in signals {
        // Registered before the flag, so it runs before the flag is set: the first signal
        // finds the flag clear and records its time before anyone can see the flag set.
        // SAFETY: the closure only uses atomics, clock_gettime(2), write(2) and _exit(2), all
        // async-signal-safe.
        unsafe {
            signal_hook::low_level::register(signal, move || {
                let now = monotonic_ns();
                let first =
                    match FIRST_AT.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
                        Ok(_) => 0,
                        Err(t) => t,
                    };
                if meaning(first, now) == Meaning::Quit && Some(signal) != never_quits {
                    super::terminal::restore_from_signal();
                    signal_hook::low_level::exit(i32::from(crate::exit::EXIT_INTERRUPTED));
                }
            })?;
        }
        signal_hook::flag::register(signal, stop.clone())?;
    }
    Ok(())
}

/// A flag that SIGINT or SIGTERM sets, for `spate serve` to report before it exits. Install it
/// before announcing readiness, so that no signal can arrive in between and kill the process.
pub fn interrupt_flag() -> io::Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let got = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM] {
        signal_hook::flag::register(signal, got.clone())?;
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_together_are_one_request_and_a_later_one_quits() {
        let ms = |n: u64| n * 1_000_000;
        assert_eq!(meaning(0, ms(5)), Meaning::Stop);
        assert_eq!(meaning(ms(1000), ms(1000)), Meaning::Same);
        assert_eq!(meaning(ms(1000), ms(1499)), Meaning::Same);
        assert_eq!(meaning(ms(1000), ms(1500)), Meaning::Quit);
        // A clock that went backwards (it cannot, but no panic if it did) is the same request.
        assert_eq!(meaning(ms(1000), ms(10)), Meaning::Same);
        assert!(monotonic_ns() > 0);
    }
}
