//! What runs per request, on Lua's C API rather than mlua's handles: calling `delay`,
//! `request` and `response` (mlua allocates a counted handle for every value it hands back),
//! and `wrk.format`, a C function writing into one buffer per state (an mlua callback turns
//! each argument and table entry into a handle). No allocation per call on spate's side; the
//! stack is left as it was found. Must not raise a Lua error from Rust code, or panic: either
//! would unwind through LuaJIT's frames.

use std::cell::RefCell;
use std::ffi::{CStr, c_int, c_void};
use std::rc::Rc;

use mlua::ffi::{self, lua_State};
use mlua::{Function, Lua, Table};

use crate::plan::{is_field_value, is_request_target, is_token_bytes};

/// The request `wrk.format` made last in a state: its bytes, and whether it is a HEAD. It is one
/// well-formed request (`format` refuses a method, path or header that would end the request
/// line or a header field early), so that `request()` returning it needs no parsing.
#[derive(Debug, Default)]
pub struct Formatted {
    pub bytes: Vec<u8>,
    pub head: bool,
    /// Header lines other than Host, while the request is written.
    rest: Vec<u8>,
}

/// The state's `Formatted` (made with its `wrk.format`).
type Shared = Rc<RefCell<Formatted>>;

/// Makes `wrk.format` for `wrk` in `lua`: the C function, and a Lua wrapper that turns its
/// refusal into a Lua error at the caller's line.
pub fn install_format(lua: &Lua, wrk: &Table) -> mlua::Result<()> {
    let formatted: Shared = Rc::default();
    let ptr = Rc::as_ptr(&formatted).cast_mut().cast::<c_void>();
    // Kept for as long as the state: the C function reaches it through the pointer.
    lua.set_app_data(formatted);
    // SAFETY: the closure pushes one light userdata and makes a C closure of it and the table
    // pushed as the argument; the stack ends with the one function returned.
    let c: Function = unsafe {
        lua.exec_raw(wrk.clone(), |l| {
            ffi::lua_pushlightuserdata(l, ptr);
            ffi::lua_pushcclosure(l, format, 2);
        })
    }?;
    let wrapper: Function = lua
        .load(
            "local c = ... \
             return function(method, path, headers, body) \
               local s, e = c(method, path, headers, body) \
               if not s then error(e, 2) end \
               return s \
             end",
        )
        .set_name("=wrk.format")
        .call(c)?;
    wrk.set("format", wrapper)
}

/// What `wrk.format` last made in `lua`.
pub fn formatted(lua: &Lua) -> Option<Shared> {
    lua.app_data_ref::<Shared>().map(|f| f.clone())
}

/// The string at `idx`, if it is one (numbers are not converted).
unsafe fn text<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
    // SAFETY: the caller's stack index; the bytes live while the value stays on the stack.
    unsafe {
        if ffi::lua_type(l, idx) != ffi::LUA_TSTRING {
            return None;
        }
        let mut len = 0;
        let p = ffi::lua_tolstring(l, idx, &mut len);
        Some(std::slice::from_raw_parts(p.cast::<u8>(), len))
    }
}

/// The value at `idx` as a header value or part: strings as they are, numbers as Lua prints
/// them (converting the stack slot, not a table's entry), booleans as words.
unsafe fn part<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
    // SAFETY: as `text`.
    unsafe {
        match ffi::lua_type(l, idx) {
            ffi::LUA_TSTRING | ffi::LUA_TNUMBER => {
                let mut len = 0;
                let p = ffi::lua_tolstring(l, idx, &mut len);
                Some(std::slice::from_raw_parts(p.cast::<u8>(), len))
            }
            ffi::LUA_TBOOLEAN => Some(match ffi::lua_toboolean(l, idx) {
                0 => b"false",
                _ => b"true",
            }),
            _ => None,
        }
    }
}

/// Returns `nil, message`: the wrapper raises it.
unsafe fn refuse(l: *mut lua_State, message: &CStr) -> c_int {
    // SAFETY: two pushes on a C function's stack, which has room for LUA_MINSTACK values.
    unsafe {
        ffi::lua_pushnil(l);
        ffi::lua_pushlstring_(l, message.as_ptr(), message.count_bytes());
    }
    2
}

/// `wrk.format(method, path, headers, body)` as a C function. Upvalue 1 is the `wrk` table,
/// upvalue 2 the state's `Formatted`.
unsafe extern "C-unwind" fn format(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with the upvalues `install_format` gave it; every value read is
    // on the stack while its bytes are used, and the stack is balanced before returning.
    unsafe {
        let cell = &*ffi::lua_touserdata(l, ffi::lua_upvalueindex(2)).cast::<RefCell<Formatted>>();
        let Ok(mut f) = cell.try_borrow_mut() else {
            return refuse(l, c"wrk.format: called while it was running");
        };
        let f = &mut *f;
        let wrk = ffi::lua_upvalueindex(1);
        ffi::lua_settop(l, 4);
        // Defaults from the table, at slots 5 (method), 6 (path), 7 (own headers), 8 (body).
        ffi::lua_getfield_(l, wrk, c"method".as_ptr());
        ffi::lua_getfield_(l, wrk, c"path".as_ptr());
        ffi::lua_getfield_(l, wrk, c"headers".as_ptr());
        ffi::lua_getfield_(l, wrk, c"body".as_ptr());
        let pick = |i: c_int| match ffi::lua_type(l, i) {
            ffi::LUA_TNIL => i + 4,
            _ => i,
        };
        let (Some(method), Some(path)) = (part(l, pick(1)), part(l, pick(2))) else {
            return refuse(l, c"wrk.format: the method and the path must be strings");
        };
        let headers = pick(3);
        if ffi::lua_type(l, headers) != ffi::LUA_TTABLE {
            return refuse(l, c"wrk.format: the headers must be a table");
        }
        let body = match ffi::lua_type(l, pick(4)) {
            ffi::LUA_TNIL => None,
            _ => match text(l, pick(4)) {
                Some(b) => Some(b),
                None => return refuse(l, c"wrk.format: the body must be a string"),
            },
        };
        // What would end the request line or a field early is refused, as the run's own
        // request refuses it: a script argument put into the path cannot add header lines.
        if !is_token_bytes(method) {
            return refuse(
                l,
                c"wrk.format: the method must be a token such as GET or POST",
            );
        }
        if !is_request_target(path) {
            return refuse(
                l,
                c"wrk.format: the path must not be empty or hold spaces or control characters (CR, LF...): percent-encode them",
            );
        }
        let out = &mut f.bytes;
        out.clear();
        f.rest.clear();
        f.head = method == b"HEAD";
        out.extend_from_slice(method);
        out.push(b' ');
        out.extend_from_slice(path);
        out.extend_from_slice(b" HTTP/1.1\r\n");
        let mut host = false;
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, headers) != 0 {
            // Key at -2, value at -1; only string keys are header names.
            if let Some(name) = text(l, -2) {
                let Some(value) = part(l, -1) else {
                    ffi::lua_settop(l, 8);
                    return refuse(
                        l,
                        c"wrk.format: a header value must be a string or a number",
                    );
                };
                if !is_token_bytes(name) || !is_field_value(value) {
                    ffi::lua_settop(l, 8);
                    return refuse(
                        l,
                        c"wrk.format: a header name must be a token, and a value must not hold CR, LF or NUL",
                    );
                }
                let is = |word: &[u8]| name.eq_ignore_ascii_case(word);
                if !is(b"content-length") {
                    let is_host = is(b"host");
                    host |= is_host;
                    let to = if is_host { &mut *out } else { &mut f.rest };
                    to.extend_from_slice(name);
                    to.extend_from_slice(b": ");
                    to.extend_from_slice(value);
                    to.extend_from_slice(b"\r\n");
                }
            }
            ffi::lua_settop(l, -2);
        }
        // Given headers without a Host take the table's own.
        if !host {
            ffi::lua_getfield_(l, 7, c"Host".as_ptr());
            if let Some(value) = part(l, -1) {
                if !is_field_value(value) {
                    ffi::lua_settop(l, 8);
                    return refuse(
                        l,
                        c"wrk.format: the Host header must not hold CR, LF or NUL",
                    );
                }
                out.extend_from_slice(b"Host: ");
                out.extend_from_slice(value);
                out.extend_from_slice(b"\r\n");
            }
            ffi::lua_settop(l, 8);
        }
        out.extend_from_slice(&f.rest);
        if let Some(b) = body {
            out.extend_from_slice(b"Content-Length: ");
            let mut digits = itoa(b.len());
            out.extend_from_slice(digits.as_bytes_mut());
            out.extend_from_slice(b"\r\n\r\n");
            out.extend_from_slice(b);
        } else {
            out.extend_from_slice(b"\r\n");
        }
        ffi::lua_pushlstring_(l, out.as_ptr().cast(), out.len());
        1
    }
}

/// `n` in decimal, without allocating.
struct Digits {
    buf: [u8; 20],
    from: usize,
}

impl Digits {
    fn as_bytes_mut(&mut self) -> &[u8] {
        &self.buf[self.from..]
    }
}

fn itoa(mut n: usize) -> Digits {
    let mut d = Digits {
        buf: [0; 20],
        from: 20,
    };
    loop {
        d.from -= 1;
        d.buf[d.from] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return d;
        }
    }
}

/// A Lua error's message: the value at the top of the stack, if it is text.
unsafe fn message(l: *mut lua_State) -> String {
    // SAFETY: the error value is at the top of `l`'s stack.
    unsafe {
        match text(l, -1) {
            Some(b) => String::from_utf8_lossy(b).into_owned(),
            None => "the script raised an error that is not a string".into(),
        }
    }
}

/// A state's functions called per request, by their registry references.
pub struct Calls {
    state: *mut lua_State,
}

/// What a call returned.
pub enum Returned<'a> {
    Text(&'a [u8]),
    Number(f64),
    Nil,
    /// Any other type, by name.
    Other(&'static str),
}

impl Calls {
    /// The state's raw pointer, for `interrupt::Running`.
    pub fn state(&self) -> *mut lua_State {
        self.state
    }

    /// The calls of `lua`'s main state.
    pub fn of(lua: &Lua) -> Calls {
        Calls {
            state: lua.exec_raw_lua(|raw| raw.state()),
        }
    }

    /// Calls the function registered as `id` with `push`'s arguments and hands its one result
    /// to `take`; `Err` is the script's error message.
    pub fn call<R>(
        &self,
        id: c_int,
        push: impl FnOnce(&Pusher) -> c_int,
        take: impl FnOnce(Returned<'_>) -> R,
    ) -> Result<R, String> {
        let l = self.state;
        // SAFETY: the state is the Lua of the `Worker` that owns this (alive while it is);
        // the stack is restored to `top` on every path.
        unsafe {
            let top = ffi::lua_gettop(l);
            if ffi::lua_checkstack(l, 8) == 0 {
                return Err("the Lua stack is full".into());
            }
            ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, id);
            let nargs = push(&Pusher(l));
            let called = {
                let _running = super::interrupt::Running::enter(l);
                ffi::lua_pcall(l, nargs, 1, 0)
            };
            let r = match called {
                0 => Ok(take(match ffi::lua_type(l, -1) {
                    ffi::LUA_TSTRING => Returned::Text(text(l, -1).unwrap_or_default()),
                    ffi::LUA_TNUMBER => Returned::Number(ffi::lua_tonumber(l, -1)),
                    ffi::LUA_TNIL => Returned::Nil,
                    t => Returned::Other(type_name(t)),
                })),
                _ => Err(message(l)),
            };
            ffi::lua_settop(l, top);
            r
        }
    }
}

fn type_name(t: c_int) -> &'static str {
    match t {
        ffi::LUA_TBOOLEAN => "boolean",
        ffi::LUA_TTABLE => "table",
        ffi::LUA_TFUNCTION => "function",
        ffi::LUA_TUSERDATA | ffi::LUA_TLIGHTUSERDATA => "userdata",
        ffi::LUA_TTHREAD => "thread",
        _ => "value",
    }
}

/// The registry's name of the metatable that makes a table of lower-case header names answer
/// a name in any case.
pub const FIELDS: &std::ffi::CStr = c"spate.fields";

/// That metatable's source: the lookup is the name in lower case, with the `lower` of the
/// state's start (a script that replaces `string.lower` does not change it).
pub const FIELDS_SOURCE: &str = "local lower = string.lower\n\
    return { __index = function(t, k) if type(k) == 'string' then return rawget(t, lower(k)) end end }";

/// Pushes a call's arguments.
pub struct Pusher(*mut lua_State);

impl Pusher {
    pub fn integer(&self, n: i64) {
        // SAFETY: `Calls::call` checked the stack has room for its arguments.
        unsafe { ffi::lua_pushinteger(self.0, n as ffi::lua_Integer) }
    }

    pub fn bytes(&self, b: &[u8]) {
        // SAFETY: as `integer`; Lua copies the bytes.
        unsafe { ffi::lua_pushlstring_(self.0, b.as_ptr().cast(), b.len()) }
    }

    /// A table of the header fields of the response head `head`, name to value (a repeated
    /// name keeps its last value). HTTP/2 and HTTP/3 send names in lower case: their table
    /// finds a name in any case (`FIELDS`, which the state's setup made).
    pub fn header_table(&self, head: &[u8]) {
        let l = self.0;
        // SAFETY: as `integer`: the table, then a name and a value at a time; the metatable
        // is pushed and taken off again by `lua_setmetatable`, or popped when it is missing.
        unsafe {
            ffi::lua_createtable(l, 0, 8);
            if head.starts_with(b"HTTP/2 ") || head.starts_with(b"HTTP/3 ") {
                ffi::lua_getfield_(l, ffi::LUA_REGISTRYINDEX, FIELDS.as_ptr());
                match ffi::lua_istable(l, -1) != 0 {
                    true => {
                        ffi::lua_setmetatable(l, -2);
                    }
                    false => ffi::lua_pop(l, 1),
                }
            }
            for line in head.split(|&b| b == b'\n').skip(1) {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                let Some(colon) = line.iter().position(|&b| b == b':') else {
                    continue;
                };
                let name = &line[..colon];
                if name.is_empty() {
                    continue;
                }
                let value = line[colon + 1..].trim_ascii();
                ffi::lua_pushlstring_(l, name.as_ptr().cast(), name.len());
                ffi::lua_pushlstring_(l, value.as_ptr().cast(), value.len());
                ffi::lua_rawset(l, -3);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_decimal() {
        for n in [0, 7, 10, 12345, usize::MAX] {
            assert_eq!(itoa(n).as_bytes_mut(), n.to_string().as_bytes());
        }
    }

    #[test]
    fn header_tables_of_http2_and_http3_answer_a_name_in_any_case() {
        let lua = Lua::new();
        let fields: mlua::Table = lua.load(FIELDS_SOURCE).eval().unwrap();
        lua.set_named_registry_value(FIELDS.to_str().unwrap(), fields)
            .unwrap();
        // A script that replaces `string.lower` does not change the lookup.
        lua.load("string.lower = function() return 'nothing' end")
            .exec()
            .unwrap();
        let f: Function = lua
            .load("return function(h) return tostring(h['X-Token']) .. ',' .. tostring(h['x-token']) .. ',' .. tostring(h[1]) end")
            .eval()
            .unwrap();
        let key = lua.create_registry_value(f).unwrap();
        let calls = Calls::of(&lua);
        let look = |head: &'static [u8]| {
            calls
                .call(
                    key.id(),
                    |p| {
                        p.header_table(head);
                        1
                    },
                    |r| match r {
                        Returned::Text(b) => String::from_utf8_lossy(b).into_owned(),
                        _ => String::new(),
                    },
                )
                .unwrap()
        };
        for head in [
            &b"HTTP/2 200\r\nx-token: t\r\n\r\n"[..],
            b"HTTP/3 200\r\nx-token: t\r\n\r\n",
        ] {
            assert_eq!(look(head), "t,t,nil");
        }
        // HTTP/1.1's names are as the server wrote them, as in wrk.
        assert_eq!(look(b"HTTP/1.1 200 OK\r\nx-token: t\r\n\r\n"), "nil,t,nil");
    }

    #[test]
    fn calls_return_what_the_function_returned_and_errors_their_message() {
        let lua = Lua::new();
        let f: Function = lua
            .load("return function(a, b) if a == 0 then error('zero') end return b .. a end")
            .set_name("@t.lua")
            .eval()
            .unwrap();
        let key = lua.create_registry_value(f).unwrap();
        let calls = Calls::of(&lua);
        let push = |n: i64| {
            move |p: &Pusher| {
                p.integer(n);
                p.bytes(b"x");
                2
            }
        };
        let got = calls.call(key.id(), push(5), |r| match r {
            Returned::Text(b) => b.to_vec(),
            _ => Vec::new(),
        });
        assert_eq!(got.unwrap(), b"x5");
        let e = calls.call(key.id(), push(0), |_| ()).unwrap_err();
        assert_eq!(e, "t.lua:1: zero");
        // The stack is as it was, call after call.
        let top = unsafe { ffi::lua_gettop(calls.state) };
        for _ in 0..100 {
            let _ = calls.call(key.id(), push(0), |_| ());
        }
        assert_eq!(unsafe { ffi::lua_gettop(calls.state) }, top);
    }

    #[test]
    fn response_headers_are_a_table_by_name() {
        let lua = Lua::new();
        let f: Function = lua
            .load("return function(h) return h['X-A'] .. '|' .. h['b'] .. '|' .. tostring(h[''] ) end")
            .eval()
            .unwrap();
        let key = lua.create_registry_value(f).unwrap();
        let got = Calls::of(&lua).call(
            key.id(),
            |p| {
                p.header_table(b"HTTP/1.1 200 OK\r\nX-A:  1 \r\nb: 2\r\nb: 3\r\n: x\r\n\r\n");
                1
            },
            |r| match r {
                Returned::Text(b) => String::from_utf8_lossy(b).into_owned(),
                _ => String::new(),
            },
        );
        assert_eq!(got.unwrap(), "1|3|nil");
    }
}
