//! Ctrl-C and SIGTERM: the first sets the stop flag that the engine's sweepers read (stop
//! sending, drain briefly, report); a second one restores the cursor and exits at once with 130.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Exit status after an interrupt (128 + SIGINT), as shells expect.
pub const EXIT_INTERRUPTED: i32 = 130;

pub fn install(stop: Arc<AtomicBool>) -> io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for signal in [SIGINT, SIGTERM] {
        let already = stop.clone();
        // Registered first, so it runs before the flag is set: it sees only an earlier signal.
        // SAFETY: the closure only loads an atomic, calls write(2) and _exit(2), all
        // async-signal-safe.
        unsafe {
            signal_hook::low_level::register(signal, move || {
                if already.load(Ordering::SeqCst) {
                    super::terminal::restore_from_signal();
                    signal_hook::low_level::exit(EXIT_INTERRUPTED);
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
