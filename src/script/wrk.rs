//! The `wrk` table a script sees, in each of its states: the URL's parts and the request the
//! flags made (`Base`), and `wrk.format` (`raw`), `wrk.lookup`, `wrk.connect`. Addresses are
//! userdata (`Addr`) that print as `ip:port`, as wrk's do. Must not run anything per request.

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use mlua::{Lua, MetaMethod, Table, UserData, UserDataMethods, Value};

use crate::plan::Plan;

/// How long `wrk.connect` tries an address.
const CONNECT_TRY: Duration = Duration::from_secs(2);

/// What the `wrk` table starts as, from the URL and the flags: plain data that every state
/// (the setup state and each load thread's) builds its table from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    pub scheme: &'static str,
    pub host: String,
    /// As wrk gives it: the URL's port as text; `None` for the scheme's default port.
    pub port: Option<String>,
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The `-H` headers, in order.
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    /// The URL as given, `args[0]` of `init`.
    pub url: String,
    /// The Host header the URL implies.
    pub authority: String,
}

impl Base {
    pub fn of(plan: &Plan) -> Base {
        let t = &plan.target;
        Base {
            scheme: if t.tls { "https" } else { "http" },
            host: t.host.clone(),
            port: (t.port != if t.tls { 443 } else { 80 }).then(|| t.port.to_string()),
            method: plan.method.clone(),
            path: t.path.clone(),
            headers: plan.headers.clone(),
            body: (!plan.body.is_empty()).then(|| plan.body.clone()),
            url: t.url.to_string(),
            authority: t.authority(),
        }
    }
}

/// The `wrk` table of one state. `with_host`: `wrk.headers.Host` is set, as it is in a load
/// thread's state before `init` (the setup state has none, as in wrk).
pub fn table(lua: &Lua, base: &Base, with_host: bool) -> mlua::Result<Table> {
    let wrk = lua.create_table()?;
    wrk.set("scheme", base.scheme)?;
    wrk.set("host", base.host.as_str())?;
    wrk.set("port", base.port.as_deref())?;
    wrk.set("method", base.method.as_str())?;
    wrk.set("path", base.path.as_str())?;
    let headers = lua.create_table()?;
    if with_host
        && !base
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("host"))
    {
        headers.set("Host", base.authority.as_str())?;
    }
    for (n, v) in &base.headers {
        headers.set(n.as_str(), v.as_str())?;
    }
    wrk.set("headers", headers)?;
    match &base.body {
        None => wrk.set("body", Value::Nil)?,
        Some(b) => wrk.set("body", lua.create_string(b)?)?,
    }
    super::raw::install_format(lua, &wrk)?;
    wrk.set("lookup", lua.create_function(lookup)?)?;
    wrk.set(
        "connect",
        lua.create_function(|_, addr: mlua::UserDataRef<Addr>| {
            Ok(TcpStream::connect_timeout(&addr.0, CONNECT_TRY).is_ok())
        })?,
    )?;
    Ok(wrk)
}

/// A server address, as `wrk.lookup` returns them and `thread.addr` holds one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addr(pub SocketAddr);

impl UserData for Addr {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, a, ()| Ok(a.0.to_string()));
        m.add_meta_method(MetaMethod::Eq, |_, a, b: mlua::UserDataRef<Addr>| {
            Ok(a.0 == b.0)
        });
    }
}

/// `wrk.lookup(host, service)`: every address of `host`; `service` is a port number or one of
/// the names http and https.
fn lookup(lua: &Lua, (host, service): (String, Value)) -> mlua::Result<Table> {
    let port = match &service {
        Value::Integer(p) => u16::try_from(*p).ok(),
        Value::Number(p) if p.fract() == 0.0 && (0.0..=65535.0).contains(p) => Some(*p as u16),
        Value::String(s) => match &*s.to_str()? {
            "http" => Some(80),
            "https" => Some(443),
            other => other.parse().ok(),
        },
        _ => None,
    };
    let Some(port) = port else {
        return Err(mlua::Error::runtime(format!(
            "wrk.lookup: service {service:?} is not a port number, http or https"
        )));
    };
    let found = (host.as_str(), port).to_socket_addrs().map_err(|e| {
        mlua::Error::runtime(format!("wrk.lookup: cannot resolve {host}:{port}: {e}"))
    })?;
    let out = lua.create_table()?;
    for (i, a) in found.enumerate() {
        out.raw_set(i + 1, Addr(a))?;
    }
    Ok(out)
}

/// A number as Lua prints it (`%.14g`): integers without a fraction.
pub fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{}", x as i64);
    }
    let s = format!("{x:.14e}");
    // %g: the shorter of fixed and exponent form, without trailing zeros.
    let exp: i32 = s
        .split('e')
        .nth(1)
        .and_then(|e| e.parse().ok())
        .unwrap_or(0);
    if (-5..14).contains(&exp) {
        let fixed = format!("{:.*}", (13 - exp).max(0) as usize, x);
        let fixed = fixed.trim_end_matches('0').trim_end_matches('.');
        return fixed.to_string();
    }
    let (mant, _) = s.split_once('e').unwrap_or((&s, ""));
    let mant = mant.trim_end_matches('0').trim_end_matches('.');
    format!("{mant}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Base {
        let mut p = Plan::new(crate::target::Target::parse("http://h:8080/a?b=1").unwrap());
        p.headers = vec![("X-Keep".into(), "1".into())];
        Base::of(&p)
    }

    fn eval(with_host: bool, code: &str) -> String {
        let lua = Lua::new();
        let wrk = table(&lua, &base(), with_host).unwrap();
        lua.globals().set("wrk", wrk).unwrap();
        let s: String = lua.load(code).eval().unwrap();
        s.replace("\r\n", "|")
    }

    #[test]
    fn format_fills_in_from_the_table_as_wrk_does() {
        // The forms Debian's wrk 4.1 gives for the same calls (see tests/it/script.rs).
        assert_eq!(
            eval(true, "return wrk.format()"),
            "GET /a?b=1 HTTP/1.1|Host: h:8080|X-Keep: 1||"
        );
        assert_eq!(
            eval(true, "return wrk.format(nil, '/f', {['X-B'] = '2'})"),
            "GET /f HTTP/1.1|Host: h:8080|X-B: 2||"
        );
        assert_eq!(
            eval(true, "return wrk.format('POST', nil, {Host = 'x'}, 'abc')"),
            "POST /a?b=1 HTTP/1.1|Host: x|Content-Length: 3||abc"
        );
        // A stale Content-Length is not sent; a number is written as Lua prints it.
        assert_eq!(
            eval(
                true,
                "wrk.headers['Content-Length'] = '7' wrk.headers['X-Keep'] = 41 + 1 \
                 return wrk.format()"
            ),
            "GET /a?b=1 HTTP/1.1|Host: h:8080|X-Keep: 42||"
        );
        // The setup state has no Host of its own.
        assert_eq!(
            eval(false, "return wrk.format()"),
            "GET /a?b=1 HTTP/1.1|X-Keep: 1||"
        );
    }

    #[test]
    fn the_table_has_the_urls_parts_as_wrk_gives_them() {
        assert_eq!(
            eval(
                true,
                "return wrk.scheme .. ' ' .. wrk.host .. ' ' .. wrk.port .. ' ' .. type(wrk.port) \
                 .. ' ' .. tostring(wrk.body)"
            ),
            "http h 8080 string nil"
        );
        let lua = Lua::new();
        let plain = Base::of(&Plan::new(
            crate::target::Target::parse("https://h/").unwrap(),
        ));
        lua.globals()
            .set("wrk", table(&lua, &plain, true).unwrap())
            .unwrap();
        let s: String = lua.load("return tostring(wrk.port)").eval().unwrap();
        assert_eq!(s, "nil");
    }

    #[test]
    fn lookup_and_connect_work_on_loopback() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let got = eval(
            true,
            &format!(
                "local a = wrk.lookup('127.0.0.1', '{port}') \
                 return #a .. ' ' .. tostring(a[1]) .. ' ' .. tostring(wrk.connect(a[1]))"
            ),
        );
        assert_eq!(got, format!("1 127.0.0.1:{port} true"));
        drop(listener);
        let lua = Lua::new();
        lua.globals()
            .set("wrk", table(&lua, &base(), true).unwrap())
            .unwrap();
        let e = lua
            .load("wrk.lookup('127.0.0.1', 'gopher')")
            .exec()
            .unwrap_err();
        assert!(e.to_string().contains("not a port number"), "{e}");
    }

    #[test]
    fn numbers_print_as_lua_prints_them() {
        for (x, want) in [
            (5.0, "5"),
            (-3.0, "-3"),
            (2.5, "2.5"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.33333333333333"),
            (1e20, "1e+20"),
            (1.5e-7, "1.5e-07"),
        ] {
            assert_eq!(number(x), want, "{x}");
        }
    }
}
