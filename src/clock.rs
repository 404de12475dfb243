//! HOT: the per-request clock. Monotonic u64 nanoseconds, so that a timestamp is one word and an
//! interval one subtraction: `Instant`'s timespec arithmetic was about 6 % of spate's user-space
//! instructions per request (callgrind). On x86-64 Linux it reads the TSC where the kernel does
//! (`tsc`), elsewhere the clock `Instant` reads. Must not be used for wall-clock time; converts to
//! and from `Instant` only off the hot path.

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod tsc;

use std::num::NonZeroU64;
use std::time::{Duration, Instant};

/// A point on the monotonic clock, in nanoseconds since an arbitrary origin (plus one, so that
/// zero is free and an `Option<Tick>` is one word: a connection keeps five of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tick(NonZeroU64);

impl Tick {
    /// Now, from the clock `Instant::now` reads (one vDSO call, no conversion).
    #[inline]
    pub fn now() -> Tick {
        Tick::at(raw_nanos())
    }

    #[inline]
    fn at(nanos: u64) -> Tick {
        Tick(NonZeroU64::MIN.saturating_add(nanos))
    }

    /// Nanoseconds from `earlier` to `self`; 0 when `earlier` is later.
    #[inline]
    pub fn nanos_since(self, earlier: Tick) -> u64 {
        self.0.get().saturating_sub(earlier.0.get())
    }

    pub fn duration_since(self, earlier: Tick) -> Duration {
        Duration::from_nanos(self.nanos_since(earlier))
    }

    /// The `Instant` at this tick (within the few nanoseconds between two clock reads). Read
    /// against a fresh pair of readings, so that the two clocks' rates never drift apart in it.
    pub fn to_instant(self) -> Instant {
        let (i0, t0) = (Instant::now(), Tick::now());
        if self >= t0 {
            i0 + self.duration_since(t0)
        } else {
            i0.checked_sub(t0.duration_since(self)).unwrap_or(i0)
        }
    }

    /// The tick at `instant` (within the few nanoseconds between two clock reads).
    pub fn of(instant: Instant) -> Tick {
        let (i0, t0) = (Instant::now(), Tick::now());
        match instant.checked_duration_since(i0) {
            Some(ahead) => t0.after(ahead),
            None => t0.before(i0 - instant),
        }
    }

    /// `self` minus `d`, no earlier than the clock's origin.
    pub fn before(self, d: Duration) -> Tick {
        Tick(NonZeroU64::new(self.0.get().saturating_sub(nanos(d))).unwrap_or(NonZeroU64::MIN))
    }

    /// `self` plus `d`.
    pub fn after(self, d: Duration) -> Tick {
        Tick(self.0.saturating_add(nanos(d)))
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Settles which clock `Tick` reads, calibrating the TSC (about 10 ms, once per process). Call it
/// before anything is timed: otherwise the first `Tick::now` pays for it, wherever it falls.
pub fn init() {
    raw_nanos();
}

#[inline]
fn raw_nanos() -> u64 {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        static SCALE: std::sync::OnceLock<Option<tsc::Scale>> = std::sync::OnceLock::new();
        if let Some(scale) = SCALE.get_or_init(|| tsc::Scale::calibrate(os_nanos)) {
            return scale.nanos();
        }
    }
    os_nanos()
}

#[cfg(unix)]
#[inline]
fn os_nanos() -> u64 {
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
fn os_nanos() -> u64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    // Not zero at the start, so that a tick before the origin still has room below it.
    nanos(START.get_or_init(Instant::now).elapsed()) + (1 << 40)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_instants_agree() {
        init();
        let i = Instant::now();
        let t = Tick::now();
        let later = i + Duration::from_millis(1500);
        // Each conversion reads both clocks once; they agree to well under a millisecond (the
        // margin is for a thread preempted between two reads on a busy machine).
        let diff = Tick::of(later).nanos_since(t);
        assert!((1_499_000_000..1_501_000_000).contains(&diff), "{diff}");
        let close = |a: Instant, b: Instant| a.max(b) - a.min(b) < Duration::from_millis(1);
        let back = Tick::of(later).to_instant();
        assert!(close(back, later), "{back:?} {later:?}");
        let earlier = i - Duration::from_millis(5);
        assert!(Tick::of(earlier) < t);
        assert!(Tick::of(earlier).nanos_since(Tick::of(earlier - Duration::from_millis(5))) > 0);
        let back = Tick::of(earlier).to_instant();
        assert!(close(back, earlier), "{back:?} {earlier:?}");
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

    #[test]
    fn a_tick_before_the_origin_stays_at_it_and_an_optional_one_is_a_word() {
        let t = Tick::now();
        let origin = t.before(Duration::from_secs(u64::MAX));
        assert_eq!(origin, Tick::at(0));
        assert_eq!(t.nanos_since(origin), t.nanos_since(Tick::at(0)));
        assert!(origin.before(Duration::from_nanos(1)) == origin);
        assert_eq!(size_of::<Option<Tick>>(), 8);
    }
}
