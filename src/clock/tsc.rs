//! The x86-64 time-stamp counter as a nanosecond clock for `Tick::now`: one `rdtsc` and one
//! multiply, where the vDSO's `clock_gettime` fences the read and loops on the kernel's seqlock
//! (with three reads per request it was 15-20 % of spate's user time at c = 50). Used only where
//! the kernel keeps its own time with the TSC, which means it found the counter invariant and in
//! step across CPUs; anywhere else `Tick` reads the OS clock. Must not be used for anything but
//! intervals within one run on one machine.

use std::arch::x86_64::{__cpuid, _rdtsc};
use std::time::Duration;

/// How long calibration watches the counter against the OS clock, once per process. A pair of
/// reads is uncertain by some tens of nanoseconds, so the rate is off by a few parts per million:
/// a few microseconds in a second.
const CALIBRATION: Duration = Duration::from_millis(10);

/// TSC ticks to nanoseconds: `ns0 + (tsc - tsc0) * mult / 2^32`.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    tsc0: u64,
    ns0: u64,
    /// Nanoseconds per tick, as a 32.32 fixed-point number.
    mult: u64,
}

impl Scale {
    /// Now, in nanoseconds on the OS clock's scale (and near its origin).
    #[inline]
    pub fn nanos(&self) -> u64 {
        // SAFETY: `rdtsc` exists on every x86-64 CPU; `usable` checked the counter is invariant.
        // Not fenced: a read a few cycles early or late is nothing next to a request.
        let tsc = unsafe { _rdtsc() };
        self.at(tsc)
    }

    #[inline]
    fn at(&self, tsc: u64) -> u64 {
        // Saturating: another CPU's counter may lag this one's by a few cycles.
        let ticks = tsc.saturating_sub(self.tsc0);
        self.ns0
            .wrapping_add(((u128::from(ticks) * u128::from(self.mult)) >> 32) as u64)
    }

    /// Measures the counter's rate against `os` (nanoseconds), if the counter can be trusted.
    pub fn calibrate(os: impl Fn() -> u64) -> Option<Scale> {
        if !usable() {
            return None;
        }
        let (ns0, tsc0) = pair(&os);
        std::thread::sleep(CALIBRATION);
        let (ns1, tsc1) = pair(&os);
        Scale::from_pairs((ns0, tsc0), (ns1, tsc1))
    }

    /// The scale through two (nanoseconds, ticks) readings; `None` for a rate no CPU has
    /// (under 100 MHz or over 100 GHz), which means the readings are not to be trusted.
    fn from_pairs((ns0, tsc0): (u64, u64), (ns1, tsc1): (u64, u64)) -> Option<Scale> {
        let ticks = tsc1.checked_sub(tsc0).filter(|&t| t > 0)?;
        let ns = ns1.checked_sub(ns0)?;
        let mult = u64::try_from((u128::from(ns) << 32) / u128::from(ticks)).ok()?;
        let (fastest, slowest) = ((1u64 << 32) / 100, (1u64 << 32) * 10);
        (fastest..=slowest).contains(&mult).then_some(Scale {
            tsc0: tsc1,
            ns0: ns1,
            mult,
        })
    }
}

/// One OS clock reading and the counter at that moment: the midpoint of the two counter reads
/// around it, from the tightest of a few tries (an interrupt in between spoils one).
fn pair(os: &impl Fn() -> u64) -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..7 {
        // SAFETY: as in `Scale::nanos`.
        let before = unsafe { _rdtsc() };
        let ns = os();
        let after = unsafe { _rdtsc() };
        let spread = after.wrapping_sub(before);
        if spread < best.0 {
            best = (spread, ns, before + spread / 2);
        }
    }
    (best.1, best.2)
}

/// An invariant counter (CPUID 8000_0007h, EDX bit 8) that the kernel uses as its clocksource.
fn usable() -> bool {
    // `unsafe` for the minimum Rust version (1.88); newer ones declare `__cpuid` safe.
    // SAFETY: `cpuid` exists on every x86-64 CPU; leaves above the maximum are not read.
    #[allow(unused_unsafe)]
    let invariant = unsafe {
        __cpuid(0x8000_0000).eax >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0
    };
    let source = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
    invariant && std::fs::read_to_string(source).is_ok_and(|s| s.trim() == "tsc")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_become_nanoseconds_at_the_measured_rate() {
        // 3 GHz: 3 ticks per nanosecond.
        let s = Scale::from_pairs((1_000, 10_000), (1_001_000, 3_010_000)).unwrap();
        assert_eq!(s.at(3_010_000), 1_001_000);
        // The rate is rounded down to 2^-32 ns per tick: under a nanosecond a second.
        let second = s.at(3_010_000 + 3_000_000_000) - 1_001_000;
        assert!(second.abs_diff(1_000_000_000) <= 1, "{second}");
        // An hour of ticks does not overflow the multiply.
        let hour = 3_600 * 3_000_000_000u64;
        let ns = s.at(3_010_000 + hour) - 1_001_000;
        assert!(ns.abs_diff(3_600_000_000_000) < 1_000, "{ns}");
        // A counter a little behind the calibrating CPU's reads as the calibration's moment.
        assert_eq!(s.at(3_009_990), 1_001_000);
    }

    #[test]
    fn impossible_rates_are_refused() {
        assert!(Scale::from_pairs((0, 0), (1_000, 0)).is_none(), "no ticks");
        assert!(
            Scale::from_pairs((0, 100), (1_000, 50)).is_none(),
            "backwards"
        );
        assert!(
            Scale::from_pairs((0, 0), (1_000_000, 10)).is_none(),
            "10 MHz"
        );
        assert!(
            Scale::from_pairs((0, 0), (1_000, 1_000_000)).is_none(),
            "1 THz"
        );
        assert!(
            Scale::from_pairs((0, 0), (1_000, 2_500)).is_some(),
            "2.5 GHz"
        );
    }

    #[test]
    fn the_counter_keeps_time_with_the_os_clock() {
        let os = || {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is valid and writable.
            unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
            ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
        };
        // Where the kernel does not trust the counter there is nothing to compare.
        let Some(s) = Scale::calibrate(os) else {
            return;
        };
        let (a, b) = (os(), s.nanos());
        std::thread::sleep(Duration::from_millis(50));
        let (c, d) = (os(), s.nanos());
        // Over 50 ms the two clocks agree to well under a millisecond, and start together.
        assert!((d - b).abs_diff(c - a) < 200_000, "{} {}", d - b, c - a);
        assert!(b.abs_diff(a) < 1_000_000, "{b} {a}");
    }
}
