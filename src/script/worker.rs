//! One load thread's script state, made on that thread: the script's body, the values its
//! `setup()` gave the thread, then `init(args)`; afterwards `delay()`, `request()` and
//! `response()` as the thread's connections call them. The first error the script raises
//! stops the thread (the run then ends with it, exit 2); so does `wrk.thread:stop()`. Time
//! spent in Lua is measured per call. Must not be shared across threads (a Lua state is not),
//! or touch the engine's state.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use mlua::{Lua, RegistryKey, Table, UserData, UserDataFields, UserDataMethods, Value};

use super::batch::{Batch, NotRequests};
use super::raw::{Calls, Formatted, Returned};
use super::values::Copied;
use super::wrk::Addr;
use super::{Script, Shaped, function, lua_error, read_back};
use crate::clock::Tick;

/// What the setup state gave one thread: globals to set before `init`, and the address to
/// connect to (`thread.addr`).
#[derive(Debug, Clone, Default)]
pub struct Seed {
    pub vars: Vec<(String, Copied)>,
    pub addr: Option<SocketAddr>,
}

/// Why a thread's state could not be made when Ctrl-C interrupted its body or `init`.
pub const INTERRUPTED_EARLY: &str =
    "--script: interrupted (Ctrl-C) while the script's body or init() ran on a load thread";

/// The largest body handed to `response()`; the rest of a longer one is not kept.
pub const MAX_HEARD_BODY: usize = 16 << 20;

/// A slot's request, as `request()` last made it.
#[derive(Debug, Default)]
pub struct Made {
    pub batch: Batch,
}

impl Made {
    /// Takes `bytes` as the slot's next request: the same bytes as last time are neither copied
    /// nor parsed again; those `wrk.format` just made (`formatted`) are one request already
    /// known; anything else is split into its requests.
    fn take(&mut self, bytes: &[u8], formatted: Option<&Formatted>) -> Result<(), NotRequests> {
        if !self.batch.is_empty() && self.batch.bytes == bytes {
            return Ok(());
        }
        match formatted {
            Some(f) if f.bytes == bytes => {
                self.batch.one(bytes, f.head);
                Ok(())
            }
            _ => self.batch.fill(bytes),
        }
    }
}

/// One load thread's script.
pub struct Worker {
    lua: Lua,
    name: String,
    /// The functions called per request, by registry reference, and the state's C API.
    request: Option<RegistryKey>,
    response: Option<RegistryKey>,
    delay: Option<RegistryKey>,
    c_api: Calls,
    formatted: Option<Rc<RefCell<Formatted>>>,
    /// `wrk.thread:stop()` was called, or the script failed, or was interrupted.
    stopped: Rc<Cell<bool>>,
    /// Its Lua was interrupted at the end of the run (`interrupt`).
    interrupted: Cell<bool>,
    error: RefCell<Option<String>>,
    /// Nanoseconds spent in `delay`, `request` and `response`, and calls made.
    spent: Cell<u64>,
    calls: Cell<u64>,
    /// Globals the state had before the script ran: not the script's, not exported.
    standard: HashSet<String>,
    /// The request the `wrk` table holds after `init`, for a script without `request()`.
    pub shaped: Shaped,
}

/// `wrk.thread` in a load thread's state.
pub(super) struct Me {
    pub addr: Option<SocketAddr>,
    pub stopped: Rc<Cell<bool>>,
}

impl UserData for Me {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_field_method_get("addr", |_, me| Ok(me.addr.map(Addr)));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("get", |lua, _, name: String| {
            lua.globals().get::<Value>(name)
        });
        m.add_method("set", |lua, _, (name, v): (String, Value)| {
            let copied = Copied::of(&v)
                .map_err(|e| mlua::Error::runtime(format!("thread:set({name:?}): {e}")))?
                .to_lua(lua)?;
            lua.globals().set(name, copied)
        });
        m.add_method("stop", |_, me, ()| {
            me.stopped.set(true);
            Ok(())
        });
    }
}

impl Worker {
    /// The state of one load thread that connects to `addr`, `init` called.
    pub fn new(script: &Script, seed: &Seed, addr: Option<SocketAddr>) -> Result<Worker, String> {
        Worker::with_echo(script, seed, addr, &script.echo)
    }

    /// As `new`, its output going to `echo` instead of the script's.
    pub(super) fn with_echo(
        script: &Script,
        seed: &Seed,
        addr: Option<SocketAddr>,
        echo: &Arc<super::Echo>,
    ) -> Result<Worker, String> {
        // All of LuaJIT's libraries, ffi and jit included, as wrk's scripts expect: the script
        // is the user's own code, run with the user's rights either way.
        // SAFETY: a script can crash the process through ffi; that is the user's choice of
        // script, as with wrk.
        let lua = unsafe { Lua::unsafe_new() };
        let err = |e: mlua::Error| lua_error(e).to_string();
        let standard: HashSet<String> = lua
            .globals()
            .pairs::<String, Value>()
            .filter_map(|p| p.ok().map(|(k, _)| k))
            .collect();
        super::guard(&lua).map_err(err)?;
        echo.install(&lua).map_err(err)?;
        let fields: mlua::Table = lua.load(super::raw::FIELDS_SOURCE).eval().map_err(err)?;
        let name = super::raw::FIELDS.to_str().expect("an ASCII name");
        lua.set_named_registry_value(name, fields).map_err(err)?;
        let stopped = Rc::new(Cell::new(false));
        let wrk = super::wrk::table(&lua, &script.base, true).map_err(err)?;
        wrk.set(
            "thread",
            Me {
                addr,
                stopped: stopped.clone(),
            },
        )
        .map_err(err)?;
        lua.globals().set("wrk", wrk.clone()).map_err(err)?;
        super::interrupt::install();
        let c_api = Calls::of(&lua);
        // The body and `init` run before the clock, and Ctrl-C may interrupt them there.
        let running = super::interrupt::Running::enter(c_api.state());
        let interrupted = |e: mlua::Error| match super::interrupt::interrupted() {
            true => INTERRUPTED_EARLY.to_string(),
            false => err(e),
        };
        lua.load(&script.source[..])
            .set_name(format!("@{}", script.name))
            .exec()
            .map_err(interrupted)?;
        for (name, v) in &seed.vars {
            lua.globals()
                .set(name.as_str(), v.to_lua(&lua).map_err(err)?)
                .map_err(err)?;
        }
        let globals = lua.globals();
        if let Some(init) = function(&globals, "init") {
            let args = lua.create_table().map_err(err)?;
            args.raw_set(0, script.base.url.as_str()).map_err(err)?;
            for (i, a) in script.args.iter().enumerate() {
                args.raw_set(i + 1, a.as_str()).map_err(err)?;
            }
            init.call::<()>(args).map_err(interrupted)?;
        }
        drop(running);
        let shaped = read_back(&script.name, &wrk, &script.base).map_err(|e| e.to_string())?;
        let key = |name: &str| -> Result<Option<RegistryKey>, String> {
            function(&globals, name)
                .map(|f| lua.create_registry_value(f).map_err(err))
                .transpose()
        };
        Ok(Worker {
            request: key("request")?,
            response: key("response")?,
            delay: key("delay")?,
            c_api,
            formatted: super::raw::formatted(&lua),
            name: script.name.clone(),
            lua,
            stopped,
            interrupted: Cell::new(false),
            error: RefCell::new(None),
            spent: Cell::new(0),
            calls: Cell::new(0),
            standard,
            shaped,
        })
    }

    /// Lua runs around each request: the thread's connections go through the scripted lane.
    pub fn runs_per_request(&self) -> bool {
        self.request.is_some() || self.response.is_some() || self.delay.is_some()
    }

    /// Gives the script `wrk.request()`: the request the thread sends when the script makes
    /// none (`prepared`), one Lua string, so that returning it costs no copy.
    pub fn offer(&self, prepared: &[u8]) -> Result<(), String> {
        let err = |e: mlua::Error| lua_error(e).to_string();
        let wrk: Table = self.lua.globals().get("wrk").map_err(err)?;
        let text = self.lua.create_string(prepared).map_err(err)?;
        // Lua, not a Rust callback: scripts call it per request.
        let f: mlua::Function = self
            .lua
            .load("local s = ... return function() return s end")
            .call(text)
            .map_err(err)?;
        wrk.set("request", f).map_err(err)
    }

    /// The script makes each request (`request()`).
    pub fn makes_requests(&self) -> bool {
        self.request.is_some()
    }

    /// The script reads responses (`response()`).
    pub fn hears(&self) -> bool {
        self.response.is_some()
    }

    /// The script waits before requests (`delay()`).
    pub fn delays(&self) -> bool {
        self.delay.is_some()
    }

    /// The thread must stop: `wrk.thread:stop()` was called, or the script failed.
    pub fn stopped(&self) -> bool {
        self.stopped.get()
    }

    /// The script's first error on this thread, with its file and line.
    pub fn take_error(&self) -> Option<String> {
        self.error.borrow_mut().take()
    }

    /// Nanoseconds spent in Lua per call, and the calls.
    pub fn cost(&self) -> (u64, u64) {
        (self.spent.get(), self.calls.get())
    }

    /// The script failed on this thread.
    pub fn failed(&self) -> bool {
        self.error.borrow().is_some()
    }

    /// Its Lua was interrupted at the end of the run: the thread stops, and no error is its.
    pub fn interrupted(&self) -> bool {
        self.interrupted.get()
    }

    /// Keeps the first error and stops the thread; an error that an interruption raised
    /// stops it as interrupted instead.
    pub fn fail(&self, what: String) {
        if super::interrupt::interrupted() {
            self.interrupted.set(true);
            self.stopped.set(true);
            return;
        }
        let mut e = self.error.borrow_mut();
        if e.is_none() {
            *e = Some(super::out_of_memory(&what));
        }
        self.stopped.set(true);
    }

    fn timed<T>(&self, f: impl FnOnce() -> T) -> T {
        let t = Tick::now();
        let r = f();
        self.spent
            .set(self.spent.get() + Tick::now().nanos_since(t));
        self.calls.set(self.calls.get() + 1);
        r
    }

    /// `delay()`, in milliseconds as the script returns them; `None` after an error.
    pub fn delay(&self) -> Option<Duration> {
        let key = self.delay.as_ref()?;
        let r = self.timed(|| {
            self.c_api.call(
                key.id(),
                |_| 0,
                |r| match r {
                    // A wait past the longest run there can be is a mistake, not a wait.
                    Returned::Number(ms) if ms.is_finite() => {
                        Duration::try_from_secs_f64(ms.max(0.0) / 1000.0)
                            .ok()
                            .filter(|d| *d <= crate::units::MAX_DURATION)
                            .ok_or_else(|| format!("{ms:e} ms, longer than a year"))
                    }
                    Returned::Nil => Ok(Duration::ZERO),
                    Returned::Number(ms) => Err(format!("{ms}, not a number of milliseconds")),
                    Returned::Text(_) => Err("a string, not a number of milliseconds".into()),
                    Returned::Other(t) => Err(format!("a {t}, not a number of milliseconds")),
                },
            )
        });
        match r {
            Ok(Ok(d)) => Some(d),
            Ok(Err(t)) => {
                self.fail(format!("--script {}: delay() returned {t}", self.name));
                None
            }
            Err(e) => {
                self.fail(format!("--script: {e}"));
                None
            }
        }
    }

    /// `request()` into `made`; false after an error (the thread then stops).
    pub fn request(&self, made: &mut Made) -> bool {
        let Some(key) = self.request.as_ref() else {
            return false;
        };
        let r = self.timed(|| {
            self.c_api.call(
                key.id(),
                |_| 0,
                // After the call: wrk.format is not running.
                |r| match r {
                    Returned::Text(b) => made
                        .take(b, self.formatted.as_ref().map(|f| f.borrow()).as_deref())
                        .map_err(|e| format!("--script {}: {e}", self.name)),
                    Returned::Number(_) => Err(self.not_a_request("number")),
                    Returned::Nil => Err(self.not_a_request("nil")),
                    Returned::Other(t) => Err(self.not_a_request(t)),
                },
            )
        });
        match r {
            Ok(Ok(())) => true,
            Ok(Err(e)) => {
                self.fail(e);
                false
            }
            Err(e) => {
                self.fail(format!("--script: {e}"));
                false
            }
        }
    }

    fn not_a_request(&self, t: &str) -> String {
        format!(
            "--script {}: request() returned a {t}, not a string with an HTTP request",
            self.name
        )
    }

    /// `response(status, headers, body)` for a response whose head was `head`.
    pub fn response(&self, status: u16, head: &[u8], body: &[u8]) {
        let Some(key) = self.response.as_ref() else {
            return;
        };
        let r = self.timed(|| {
            self.c_api.call(
                key.id(),
                |p| {
                    p.integer(i64::from(status));
                    p.header_table(head);
                    p.bytes(body);
                    3
                },
                |_| (),
            )
        });
        if let Err(e) = r {
            self.fail(format!("--script: {e}"));
        }
    }

    /// The script's own globals as the thread leaves them, for `thread:get` in `done()`.
    pub fn export(&self) -> Vec<(String, Copied)> {
        self.lua
            .globals()
            .pairs::<String, Value>()
            .filter_map(Result::ok)
            .filter(|(k, _)| !self.standard.contains(k) && k != "wrk")
            // A global over the bounds of a copy reads as nil in `done()`.
            .filter_map(|(k, v)| Some((k, Copied::of(&v).ok().filter(|c| !c.is_nil())?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Plan;
    use std::sync::Arc;

    fn script(text: &str, args: &[&str]) -> (crate::scratch::ScratchFile, Arc<Script>) {
        let f = crate::scratch::ScratchFile::new("w.lua", text);
        let plan = Plan::new(crate::target::Target::parse("http://h:8080/a").unwrap());
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let s = Script::load(&f, &args, &plan).unwrap();
        s.echo.hold();
        (f, Arc::new(s))
    }

    fn addr() -> Option<SocketAddr> {
        "127.0.0.1:8080".parse().ok()
    }

    #[test]
    fn a_thread_runs_body_then_its_values_then_init() {
        let (_f, s) = script(
            "x = 1 function setup() end function init(a) seen = x .. ' ' .. id .. ' ' .. a[0] .. ' ' .. a[1] \
             .. ' ' .. tostring(wrk.thread.addr) .. ' ' .. wrk.headers.Host end",
            &["q"],
        );
        let seed = Seed {
            vars: vec![
                ("x".into(), Copied::number(2.0)),
                ("id".into(), Copied::text(b"t1")),
            ],
            addr: None,
        };
        let w = Worker::new(&s, &seed, addr()).unwrap();
        let seen: String = w.lua.globals().get("seen").unwrap();
        assert_eq!(seen, "2 t1 http://h:8080/a q 127.0.0.1:8080 h:8080");
        assert!(!w.makes_requests() && !w.hears() && !w.delays());
        let exported = w.export();
        assert!(exported.contains(&("seen".into(), Copied::text(seen.as_bytes()))));
        assert!(!exported.iter().any(|(k, _)| k == "init" || k == "string"));
    }

    #[test]
    fn request_is_parsed_once_while_it_returns_the_same_string() {
        let (_f, s) = script(
            "n = 0 req = wrk.format(nil, '/a') .. wrk.format(nil, '/b') \
             function request() n = n + 1 if n > 2 then return wrk.format(nil, '/c') end return req end",
            &[],
        );
        let w = Worker::new(&s, &Seed::default(), addr()).unwrap();
        let mut made = Made::default();
        assert!(w.request(&mut made));
        assert_eq!(made.batch.len(), 2);
        // Marked, to see that the second call reuses the parsed batch.
        made.batch.requests[0].1 = true;
        assert!(w.request(&mut made));
        assert!(made.batch.requests[0].1, "the same string was parsed again");
        assert!(w.request(&mut made));
        assert_eq!(made.batch.len(), 1);
        assert!(made.batch.bytes.starts_with(b"GET /c HTTP/1.1\r\n"));
        assert_eq!(w.cost().1, 3);
    }

    #[test]
    fn a_request_wrk_format_made_is_one_request_and_it_cannot_carry_another() {
        let (_f, s) = script(
            "function request() n = (n or 0) + 1 if n == 1 then return wrk.format('HEAD', '/h') end \
             return wrk.format(nil, '/a', { X = 'v\\r\\n\\r\\nGET /b HTTP/1.1\\r\\nHost: h' }) end",
            &[],
        );
        let w = Worker::new(&s, &Seed::default(), addr()).unwrap();
        let mut made = Made::default();
        assert!(w.request(&mut made));
        assert_eq!(made.batch.requests, [(made.batch.bytes.len(), true)]);
        // A header value with a blank line in it would smuggle a second request: refused.
        assert!(!w.request(&mut made));
        let e = w.take_error().unwrap();
        assert!(
            e.contains("wrk.format: a header name must be a token"),
            "{e}"
        );
    }

    #[test]
    fn wrk_format_refuses_what_would_end_the_request_line_early() {
        for (call, want) in [
            (
                "wrk.format(nil, '/a HTTP/1.1\\r\\nX-Injected: 1\\r\\nX:')",
                "the path must not",
            ),
            ("wrk.format(nil, '/a b')", "the path must not"),
            ("wrk.format(nil, '')", "the path must not"),
            (
                "wrk.format('GET /x HTTP/1.1\\r\\nX: 1\\r\\n', '/')",
                "the method must be a token",
            ),
            (
                "wrk.format(nil, '/', { ['X\\r\\nY'] = '1' })",
                "a header name must be a token",
            ),
            (
                "wrk.format(nil, '/', { Host = 'h\\r\\nX: 1' })",
                "a header name must be a token",
            ),
            (
                "(function() wrk.headers.Host = 'h\\nX: 1' return wrk.format(nil, '/', { X = '1' }) end)()",
                "the Host header",
            ),
            (
                "(function() wrk.path = arg_path return wrk.format() end)()",
                "the path must not",
            ),
        ] {
            let (_f, s) = script(
                &format!("arg_path = '/x\\r\\nX-Evil: 1'\nfunction request() return {call} end"),
                &[],
            );
            let w = Worker::new(&s, &Seed::default(), addr()).unwrap();
            let mut made = Made::default();
            assert!(!w.request(&mut made), "{call}");
            let e = w.take_error().unwrap();
            assert!(e.contains(want), "{call}: {e}");
        }
    }

    #[test]
    fn response_gets_status_headers_and_body() {
        let (_f, s) = script(
            "function response(status, headers, body) got = status .. ' ' .. headers['X-Token'] \
             .. ' ' .. body if status == 201 then wrk.thread:stop() end end",
            &[],
        );
        let w = Worker::new(&s, &Seed::default(), addr()).unwrap();
        w.response(200, b"HTTP/1.1 200 OK\r\nX-Token: abc \r\n\r\n", b"hello");
        let got: String = w.lua.globals().get("got").unwrap();
        assert_eq!(got, "200 abc hello");
        assert!(!w.stopped());
        w.response(201, b"HTTP/1.1 201 Created\r\nX-Token: t\r\n\r\n", b"");
        assert!(w.stopped(), "wrk.thread:stop() did not stop the thread");
        assert!(w.take_error().is_none());
    }

    #[test]
    fn errors_stop_the_thread_with_the_scripts_message() {
        for (text, want) in [
            ("function request() return 42 end", "returned a number"),
            (
                "function request() return 'nope' end",
                "did not return an HTTP request",
            ),
            ("function request() error('boom') end", "w.lua:1: boom"),
            (
                "function delay() return {} end",
                "not a number of milliseconds",
            ),
            (
                "function response() local t = nil; t.x = 1 end",
                "w.lua:1: attempt to index",
            ),
        ] {
            let (_f, s) = script(text, &[]);
            let w = Worker::new(&s, &Seed::default(), addr()).unwrap();
            let mut made = Made::default();
            w.request(&mut made);
            w.delay();
            w.response(200, b"HTTP/1.1 200 OK\r\n\r\n", b"");
            assert!(w.stopped(), "{text}");
            let e = w.take_error().unwrap();
            assert!(e.contains(want) && !e.contains('\n'), "{text}: {e}");
        }
    }

    #[test]
    fn delay_is_in_milliseconds() {
        let (_f, s) = script("function delay() return 12.5 end", &[]);
        let w = Worker::new(&s, &Seed::default(), addr()).unwrap();
        assert_eq!(
            w.delay(),
            Some(Duration::from_micros(12_500)),
            "{:?}",
            w.take_error()
        );
    }

    #[test]
    fn a_delay_that_is_no_wait_is_a_script_error_not_a_panic() {
        for (ret, want) in [
            ("1e300", "1e300 ms, longer than a year"),
            ("0/0", "NaN, not a number of milliseconds"),
            ("1/0", "inf, not a number of milliseconds"),
            ("{}", "a table, not a number of milliseconds"),
            ("'5'", "a string, not a number of milliseconds"),
        ] {
            let (_f, s) = script(&format!("function delay() return {ret} end"), &[]);
            let w = Worker::new(&s, &Seed::default(), addr()).unwrap();
            assert_eq!(w.delay(), None, "{ret}");
            let e = w.take_error().unwrap();
            assert!(
                e.ends_with(&format!("delay() returned {want}")),
                "{ret}: {e}"
            );
        }
        // Below zero is no wait; a year is the longest.
        for (ret, d) in [
            ("-1e308", Duration::ZERO),
            ("31536000000", crate::units::MAX_DURATION),
        ] {
            let (_f, s) = script(&format!("function delay() return {ret} end"), &[]);
            let w = Worker::new(&s, &Seed::default(), addr()).unwrap();
            assert_eq!(w.delay(), Some(d), "{ret}");
        }
    }

    /// `text`'s `request()`, called on a thread of its own, which another interrupts after
    /// 100 ms: whether the call returned, as interrupted.
    fn interrupted_request(text: &'static str) -> bool {
        use std::os::unix::thread::JoinHandleExt as _;
        let (_f, s) = script(text, &[]);
        let h = std::thread::spawn(move || {
            let w = Worker::new(&s, &Seed::default(), addr()).unwrap();
            let mut made = Made::default();
            let made_one = w.request(&mut made);
            (made_one, w.interrupted(), w.take_error())
        });
        std::thread::sleep(Duration::from_millis(100));
        for _ in 0..500 {
            if h.is_finished() {
                break;
            }
            super::super::interrupt::interrupt(h.as_pthread_t());
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            h.is_finished(),
            "{text}: still running after 5 s of interrupts"
        );
        let (made, interrupted, error) = h.join().unwrap();
        !made && interrupted && error.is_none()
    }

    #[test]
    fn lua_that_does_not_return_is_interrupted_even_in_compiled_loops() {
        for text in [
            "function request() while true do end end",
            "function request() local n = 0 while true do n = n + 1 end end",
            // A pcall does not catch the interruption for good.
            "function request() while true do pcall(function() while true do end end) end end",
            "function request() local s = 'x' while true do s = string.rep(s, 2):sub(1, 64) end end",
        ] {
            assert!(interrupted_request(text), "{text}");
        }
    }

    #[test]
    fn os_exit_is_a_script_error_not_the_end_of_spate() {
        let (_f, s) = script("function request() os.exit(0) end", &[]);
        let w = Worker::new(&s, &Seed::default(), addr()).unwrap();
        assert!(!w.request(&mut Made::default()));
        let e = w.take_error().unwrap();
        assert!(
            e.contains("w.lua:1: os.exit(0) called: a script cannot end spate"),
            "{e}"
        );
        let f = crate::scratch::ScratchFile::new("exit.lua", "os.exit(3)");
        let plan = Plan::new(crate::target::Target::parse("http://h:8080/a").unwrap());
        let e = Script::load(&f, &[], &plan).unwrap_err().to_string();
        assert!(e.contains("exit.lua:1: os.exit(3) called"), "{e}");
    }

    #[test]
    fn a_script_out_of_memory_gets_a_lua_error() {
        let (_f, s) = script(
            "function request() local t = {} for i = 1, 1e6 do t[i] = string.rep('x', 1e6) .. i end end",
            &[],
        );
        let w = Worker::new(&s, &Seed::default(), addr()).unwrap();
        assert!(!w.request(&mut Made::default()));
        let e = w.take_error().unwrap();
        assert!(e.contains("not enough memory"), "{e}");
    }
}
