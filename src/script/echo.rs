//! Where a script's `print`, `io.write` and `io.stdout:write` go, from every state of the run:
//! stdout as in wrk, stderr when stdout carries a machine-readable result, or held while the
//! live display draws on the terminal and written out when it is gone. Must not block a load
//! thread for longer than one write, or keep more than `MAX_HELD` bytes.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use mlua::{Lua, Value, Variadic};

/// What is kept while output is held; more is dropped and said so once.
pub const MAX_HELD: usize = 4 << 20;

/// Where output goes now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    Stdout,
    Stderr,
    /// Kept until `release`.
    Held,
}

#[derive(Debug)]
struct State {
    sink: Sink,
    /// Where held output goes when released.
    after: Sink,
    held: Vec<u8>,
    dropped: bool,
}

/// The script's output, shared by its states.
#[derive(Debug)]
pub struct Echo(Mutex<State>);

impl Echo {
    pub fn new(sink: Sink) -> Arc<Echo> {
        Arc::new(Echo(Mutex::new(State {
            sink,
            after: sink,
            held: Vec::new(),
            dropped: false,
        })))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends output to `sink` from now on, and what was held before there now.
    pub fn set(&self, sink: Sink) {
        let mut s = self.state();
        s.sink = sink;
        s.after = sink;
        if sink != Sink::Held {
            let held = std::mem::take(&mut s.held);
            put(sink, &held);
        }
    }

    /// Holds output until `release` (the live display is drawing).
    pub fn hold(&self) {
        let mut s = self.state();
        if s.sink != Sink::Held {
            s.after = s.sink;
            s.sink = Sink::Held;
        }
    }

    /// Writes what was held and sends output where it went before `hold`.
    pub fn release(&self) {
        let mut s = self.state();
        s.sink = s.after;
        let held = std::mem::take(&mut s.held);
        let to = s.sink;
        put(to, &held);
        if std::mem::take(&mut s.dropped) {
            put(to, b"[spate: more script output than 4 MiB came during the run; the rest was dropped]\n");
        }
    }

    pub fn write(&self, bytes: &[u8]) {
        let mut s = self.state();
        match s.sink {
            Sink::Held => {
                let room = MAX_HELD.saturating_sub(s.held.len());
                s.dropped |= bytes.len() > room;
                s.held.extend_from_slice(&bytes[..bytes.len().min(room)]);
            }
            to => put(to, bytes),
        }
    }

    /// Replaces `print` and `io.write` in `lua` with writers to this echo.
    pub fn install(self: &Arc<Echo>, lua: &Lua) -> mlua::Result<()> {
        let me = self.clone();
        let print = lua.create_function(move |lua, args: Variadic<Value>| {
            let tostring: mlua::Function = lua.globals().get("tostring")?;
            let mut line = Vec::new();
            for (i, a) in args.into_iter().enumerate() {
                if i > 0 {
                    line.push(b'\t');
                }
                let s: mlua::String = tostring.call(a)?;
                line.extend_from_slice(&s.as_bytes());
            }
            line.push(b'\n');
            me.write(&line);
            Ok(())
        })?;
        lua.globals().set("print", print)?;
        let me = self.clone();
        let write = lua.create_function(move |lua, args: Variadic<Value>| {
            let mut out = Vec::new();
            for a in args {
                match a {
                    Value::String(s) => out.extend_from_slice(&s.as_bytes()),
                    Value::Integer(i) => out.extend_from_slice(i.to_string().as_bytes()),
                    Value::Number(x) => out.extend_from_slice(super::wrk::number(x).as_bytes()),
                    other => {
                        return Err(mlua::Error::runtime(format!(
                            "bad argument to 'write' (string expected, got {})",
                            other.type_name()
                        )));
                    }
                }
            }
            me.write(&out);
            // io.write returns the file, so that calls chain.
            lua.globals()
                .get::<mlua::Table>("io")?
                .get::<Value>("stdout")
        })?;
        if let Ok(io) = lua.globals().get::<mlua::Table>("io") {
            io.set("write", write)?;
            // `io.stdout:write` and `io.output():write` would reach the process's stdout, where
            // a JSON or CSV result goes: they write to the echo too.
            lua.load(
                "local write, output = io.write, io.output \
                 local methods = { \
                   write = function(self, ...) write(...) return self end, \
                   flush = function(self) return self end, \
                   setvbuf = function() return true end, \
                   close = function() return nil, 'cannot close standard file' end } \
                 local stdout = setmetatable({}, { __index = methods, \
                   __tostring = function() return 'file (stdout)' end }) \
                 local current = stdout \
                 io.stdout = stdout \
                 io.output = function(f) if f ~= nil then current = output(f) end return current end",
            )
            .set_name("=spate")
            .exec()?;
        }
        Ok(())
    }
}

fn put(to: Sink, bytes: &[u8]) {
    // A closed pipe must not end the run: the script's output is the least of what it makes.
    let _ = match to {
        Sink::Stdout => std::io::stdout().lock().write_all(bytes),
        Sink::Stderr | Sink::Held => std::io::stderr().lock().write_all(bytes),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_output_is_kept_up_to_its_cap() {
        let e = Echo::new(Sink::Stderr);
        e.hold();
        e.write(b"a");
        e.write(&vec![b'x'; MAX_HELD]);
        let s = e.state();
        assert_eq!(s.held.len(), MAX_HELD);
        assert!(s.dropped);
        assert_eq!(s.after, Sink::Stderr);
    }

    #[test]
    fn print_and_io_write_reach_the_echo() {
        let e = Echo::new(Sink::Stderr);
        e.hold();
        let lua = Lua::new();
        e.install(&lua).unwrap();
        lua.load(
            "print('a', 1, nil, true) io.write('b', 2, '\\n'):write('') \
             io.stdout:write('c', 3):write('\\n') io.output():write('d\\n') io.stdout:flush()",
        )
        .exec()
        .unwrap();
        assert_eq!(e.state().held, b"a\t1\tnil\ttrue\nb2\nc3\nd\n");
    }

    #[test]
    fn held_output_goes_out_when_its_sink_is_set() {
        let e = Echo::new(Sink::Held);
        e.write(b"from the body\n");
        e.set(Sink::Stderr);
        assert!(e.state().held.is_empty());
        assert_eq!(e.state().sink, Sink::Stderr);
    }
}
