//! HOT: the per-request clock. The monotonic clock `Instant` reads, as u64 nanoseconds, so that a
//! timestamp is one word and an interval one subtraction: `Instant`'s timespec arithmetic was
//! about 6 % of spate's user-space instructions per request (callgrind). Must not be used for
//! wall-clock time; converts to and from `Instant` only off the hot path.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A point on the monotonic clock, in nanoseconds since an arbitrary origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tick(u64);

impl Tick {
    /// Now, from the clock `Instant::now` reads (one vDSO call, no conversion).
    #[inline]
    pub fn now() -> Tick {
        Tick(raw_nanos())
    }

    /// Nanoseconds from `earlier` to `self`; 0 when `earlier` is later.
    #[inline]
    pub fn nanos_since(self, earlier: Tick) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    pub fn duration_since(self, earlier: Tick) -> Duration {
        Duration::from_nanos(self.nanos_since(earlier))
    }

    /// The `Instant` at this tick (within the few nanoseconds between two clock reads).
    pub fn to_instant(self) -> Instant {
        let (i0, t0) = origin();
        if self >= t0 {
            i0 + self.duration_since(t0)
        } else {
            i0.checked_sub(t0.duration_since(self)).unwrap_or(i0)
        }
    }

    /// The tick at `instant` (within the few nanoseconds between two clock reads).
    pub fn of(instant: Instant) -> Tick {
        let (i0, t0) = origin();
        match instant.checked_duration_since(i0) {
            Some(ahead) => Tick(t0.0.saturating_add(nanos(ahead))),
            None => Tick(t0.0.saturating_sub(nanos(i0 - instant))),
        }
    }

    /// `self` plus `d`.
    pub fn after(self, d: Duration) -> Tick {
        Tick(self.0.saturating_add(nanos(d)))
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// One `Instant` and the tick read right after it: the pair every conversion goes through.
fn origin() -> (Instant, Tick) {
    static ORIGIN: OnceLock<(Instant, Tick)> = OnceLock::new();
    *ORIGIN.get_or_init(|| (Instant::now(), Tick::now()))
}

#[cfg(unix)]
#[inline]
fn raw_nanos() -> u64 {
    // The clock std's `Instant` uses on each system, so that conversions do not drift.
    #[cfg(any(target_os = "macos", target_os = "ios"))]
    const CLOCK: libc::clockid_t = libc::CLOCK_UPTIME_RAW;
    #[cfg(not(any(target_os = "macos", target_os = "ios")))]
    const CLOCK: libc::clockid_t = libc::CLOCK_MONOTONIC;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is valid and writable; the clock exists on every system this builds for.
    unsafe { libc::clock_gettime(CLOCK, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

#[cfg(not(unix))]
fn raw_nanos() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    // Not zero at the start, so that a tick before the origin still has room below it.
    nanos(START.get_or_init(Instant::now).elapsed()) + (1 << 40)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_instants_agree() {
        let i = Instant::now();
        let t = Tick::now();
        let later = i + Duration::from_millis(1500);
        // Conversions go through one pair of reads; they agree to well under a millisecond.
        let diff = Tick::of(later).nanos_since(t);
        assert!((1_499_000_000..1_501_000_000).contains(&diff), "{diff}");
        let back = Tick::of(later).to_instant();
        let err = back.max(later) - back.min(later);
        assert!(err < Duration::from_micros(1), "{err:?}");
        let earlier = i - Duration::from_millis(5);
        assert!(Tick::of(earlier) < t);
        assert_eq!(Tick::of(earlier).to_instant(), earlier);
    }

    #[test]
    fn intervals_saturate_and_add() {
        let t = Tick::now();
        let u = t.after(Duration::from_micros(3));
        assert_eq!(u.nanos_since(t), 3_000);
        assert_eq!(t.nanos_since(u), 0);
        assert_eq!(u.duration_since(t), Duration::from_micros(3));
        assert!(Tick::now() >= t);
    }
}
