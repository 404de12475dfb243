//! The terminal state the live display changes, and its restoration on every exit path: the
//! cursor is hidden while the block is drawn and shown again on drop, from a panic hook, and from
//! the second-Ctrl-C handler (which can only use async-signal-safe calls).

use std::io::{self, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the cursor is hidden right now; readable from a signal handler.
static CURSOR_HIDDEN: AtomicBool = AtomicBool::new(false);

const SHOW_CURSOR: &[u8] = b"\x1b[?25h";
const HIDE_CURSOR: &[u8] = b"\x1b[?25l";

/// Hides the cursor on stderr for its lifetime.
pub struct TerminalGuard(());

impl TerminalGuard {
    /// Hides the cursor of stderr, if stderr is a terminal (escapes mean nothing elsewhere).
    pub fn hide_cursor() -> TerminalGuard {
        use std::io::IsTerminal;
        let err = io::stderr();
        match err.is_terminal() {
            true => TerminalGuard::hide_on(&mut err.lock()),
            false => TerminalGuard(()),
        }
    }

    fn hide_on(out: &mut impl Write) -> TerminalGuard {
        install_panic_hook();
        let _ = out.write_all(HIDE_CURSOR).and_then(|()| out.flush());
        CURSOR_HIDDEN.store(true, Ordering::SeqCst);
        TerminalGuard(())
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        use std::io::IsTerminal;
        // Hidden only on a terminal; shown again only there.
        if CURSOR_HIDDEN.swap(false, Ordering::SeqCst) && io::stderr().is_terminal() {
            let mut err = io::stderr().lock();
            let _ = err.write_all(SHOW_CURSOR).and_then(|()| err.flush());
        }
    }
}

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CURSOR_HIDDEN.swap(false, Ordering::SeqCst) {
                let _ = io::stderr().write_all(b"\x1b[?25h\n");
            }
            previous(info);
        }));
    });
}

/// For a signal handler: shows the cursor again if the display hid it. Uses only `write(2)`.
pub fn restore_from_signal() {
    if CURSOR_HIDDEN.load(Ordering::SeqCst) {
        #[cfg(unix)]
        // SAFETY: write(2) on fd 2 with a valid static buffer is async-signal-safe.
        unsafe {
            libc::write(2, b"\x1b[?25h\n".as_ptr().cast(), 7);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_tracks_the_cursor_and_writes_escapes_only_to_a_terminal() {
        let mut out = Vec::new();
        {
            let _g = TerminalGuard::hide_on(&mut out);
            assert!(CURSOR_HIDDEN.load(Ordering::SeqCst));
        }
        assert!(!CURSOR_HIDDEN.load(Ordering::SeqCst));
        assert_eq!(out, HIDE_CURSOR);
        // The test's stderr is a pipe: nothing is hidden, nothing written to it.
        use std::io::IsTerminal;
        if !io::stderr().is_terminal() {
            let _g = TerminalGuard::hide_cursor();
            assert!(!CURSOR_HIDDEN.load(Ordering::SeqCst));
        }
    }
}
