//! Stopping a load thread's Lua that does not return (a loop in `request()`, a `response()`
//! that never ends): the thread that waits for the run sends the load thread a signal at the
//! end of the run or on Ctrl-C, and the handler, on the load thread, sets a debug hook on the
//! Lua state that is running there, as Lua's own interpreter does for Ctrl-C. The hook raises a
//! Lua error at the state's next instruction; LuaJIT is built to check for hooks in compiled
//! loops too (`.cargo/config.toml`). Costs nothing until a signal comes. Must not be used on a
//! state outside `Running`, or from anything but the signal handler and the calls it guards.

use std::cell::Cell;
use std::ffi::c_int;
use std::ptr;
use std::sync::Once;

use mlua::ffi::{self, lua_Debug, lua_State};

thread_local! {
    /// The Lua state running on this thread right now, if any.
    static RUNNING: Cell<*mut lua_State> = const { Cell::new(ptr::null_mut()) };
    /// A signal set the hook on this thread's state: its next error is the interruption.
    static INTERRUPTED: Cell<bool> = const { Cell::new(false) };
}

/// The signal: a real-time one of the process's own, so that no other meaning is taken from it.
fn signal() -> c_int {
    libc::SIGRTMIN() + 3
}

/// Installs the handler, once per process; before any load thread runs Lua.
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: a handler that only reads and writes this thread's own cells and calls
        // `lua_sethook`, which Lua documents as safe to call from a signal handler.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal(), &action, ptr::null_mut());
        }
    });
}

extern "C" fn on_signal(_: c_int) {
    let state = RUNNING.with(Cell::get);
    if !state.is_null() {
        INTERRUPTED.with(|i| i.set(true));
        // SAFETY: the state runs on this thread (the signal interrupted it); a hook is how Lua
        // is meant to be stopped from a signal handler.
        unsafe {
            ffi::lua_sethook(
                state,
                Some(stop),
                ffi::LUA_MASKCALL | ffi::LUA_MASKRET | ffi::LUA_MASKCOUNT,
                1,
            );
        }
    }
}

/// The hook: an error at the running instruction. It stays set, so that a script's `pcall`
/// cannot catch it and go on: its next instruction raises it again, until the call `Running`
/// guards has returned.
unsafe extern "C-unwind" fn stop(state: *mut lua_State, _: *mut lua_Debug) {
    // SAFETY: a hook may raise an error; nothing of Rust's is on the frame to drop.
    unsafe {
        ffi::lua_pushstring(state, c"interrupted: the run ended".as_ptr());
        ffi::lua_error(state);
    }
}

/// Asks the load thread `thread` to stop the Lua it runs, if it runs any.
pub fn interrupt(thread: libc::pthread_t) {
    // SAFETY: the caller holds the thread's join handle, so the id is valid.
    unsafe {
        libc::pthread_kill(thread, signal());
    }
}

/// A call into `state` that a signal may interrupt, for its duration.
pub struct Running {
    state: *mut lua_State,
}

impl Running {
    pub fn enter(state: *mut lua_State) -> Running {
        RUNNING.with(|r| r.set(state));
        Running { state }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.with(|r| r.set(ptr::null_mut()));
        if INTERRUPTED.with(Cell::get) {
            // SAFETY: the state is this thread's, and no Lua runs on it now.
            unsafe {
                ffi::lua_sethook(self.state, None, 0, 0);
            }
        }
    }
}

/// Whether a signal interrupted this thread's Lua: every error since is the interruption's.
pub fn interrupted() -> bool {
    INTERRUPTED.with(Cell::get)
}
