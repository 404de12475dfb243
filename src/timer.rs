//! Sleeps precise to tens of microseconds, for the load threads' sweeper and pacer and the
//! built-in server's delays and stalls: a timerfd (Linux) registered with tokio's reactor, set to
//! an absolute CLOCK_MONOTONIC deadline (the clock `Instant` uses). It needs no time driver in the
//! runtime, which the load threads do without. tokio's own timer rounds to the millisecond; it
//! remains the fallback elsewhere. One `Timer` is reused for many sleeps.

use std::time::Instant;

/// Asks the kernel to wake this thread within ~1 us of its timers (the default slack is 50 us).
pub fn tighten_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and affects only the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong);
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::time::Instant;

    use tokio::io::unix::AsyncFd;

    pub struct Timer {
        fd: Option<AsyncFd<OwnedFd>>,
    }

    fn timerfd() -> io::Result<AsyncFd<OwnedFd>> {
        // SAFETY: plain syscall; the returned descriptor is owned right away.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh descriptor nobody else owns.
        let owned = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: an `OwnedFd` keeps its descriptor open and unchanged for as long as it lives,
        // which is as long as the `AsyncFd` that owns it.
        unsafe { AsyncFd::register_with_interest(owned, tokio::io::Interest::READABLE) }
            .map_err(|_| io::Error::other("cannot register a timerfd with the reactor"))
    }

    fn monotonic_now() -> libc::timespec {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is valid and writable.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ts
    }

    impl Timer {
        /// A timer; without a timerfd (a very old kernel) it falls back to tokio's timer. Must be
        /// called inside a tokio runtime.
        pub fn new() -> Timer {
            Timer { fd: timerfd().ok() }
        }

        /// A timer that needs no time driver in the runtime, or why there is none (out of file
        /// descriptors). Must be called inside a tokio runtime.
        pub fn exact() -> io::Result<Timer> {
            Ok(Timer {
                fd: Some(timerfd()?),
            })
        }

        pub async fn sleep_until(&mut self, deadline: Instant) {
            let Some(fd) = &self.fd else {
                return tokio::time::sleep_until(deadline.into()).await;
            };
            let now = Instant::now();
            if deadline <= now {
                return;
            }
            let ahead = deadline - now;
            let base = monotonic_now();
            let nanos = base.tv_nsec as u128 + ahead.subsec_nanos() as u128;
            // `as _`: the seconds field's type, whatever the libc calls it (musl deprecates the
            // name `time_t`).
            let tv_sec = base
                .tv_sec
                .saturating_add((ahead.as_secs() + (nanos / 1_000_000_000) as u64) as _);
            let value = libc::timespec {
                tv_sec,
                tv_nsec: (nanos % 1_000_000_000) as libc::c_long,
            };
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: value,
            };
            // SAFETY: valid descriptor and itimerspec; the old value is not asked for.
            let rc = unsafe {
                libc::timerfd_settime(
                    fd.as_raw_fd(),
                    libc::TFD_TIMER_ABSTIME,
                    &spec,
                    std::ptr::null_mut(),
                )
            };
            // Neither fails short of a bug (the values are valid) or the runtime shutting down;
            // the sleep then ends early, and every caller checks the clock when it wakes.
            if rc != 0 {
                return;
            }
            loop {
                let Ok(mut guard) = fd.readable().await else {
                    return;
                };
                let mut expirations = 0u64;
                let read = guard.try_io(|inner| {
                    // SAFETY: reads 8 bytes into a u64, as timerfd requires.
                    let n = unsafe {
                        libc::read(inner.as_raw_fd(), (&mut expirations as *mut u64).cast(), 8)
                    };
                    if n < 0 {
                        Err(io::Error::last_os_error())
                    } else {
                        Ok(())
                    }
                });
                if let Ok(Ok(())) = read {
                    // The expiration is consumed: without this, the next sleep would first try
                    // a read that can only fail (EAGAIN) before it waits.
                    guard.clear_ready();
                    return;
                }
                if Instant::now() >= deadline {
                    return;
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::time::Instant;

    pub struct Timer;

    impl Timer {
        pub fn new() -> Timer {
            Timer
        }

        /// Here tokio's timer: the load threads' runtimes keep their time driver.
        pub fn exact() -> std::io::Result<Timer> {
            Ok(Timer)
        }

        pub async fn sleep_until(&mut self, deadline: Instant) {
            tokio::time::sleep_until(deadline.into()).await
        }
    }
}

pub use imp::Timer;

impl Default for Timer {
    fn default() -> Self {
        Timer::new()
    }
}

/// A one-off precise sleep (creates a timer; reuse a `Timer` for repeated sleeps).
pub async fn sleep_until(deadline: Instant) {
    Timer::new().sleep_until(deadline).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn sleeps_at_least_until_the_deadline_and_can_be_reused() {
        tighten_timer_slack();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut t = Timer::new();
            for ms in [0u64, 1, 3] {
                let deadline = Instant::now() + Duration::from_millis(ms);
                t.sleep_until(deadline).await;
                assert!(Instant::now() >= deadline, "woke before the deadline");
            }
            // A deadline in the past returns at once.
            t.sleep_until(Instant::now() - Duration::from_millis(5))
                .await;
        });
    }
}
