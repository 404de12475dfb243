//! `-s FILE [-- ARGS]`: wrk's Lua scripting API, run by LuaJIT. What a script does to the `wrk`
//! table (method, path, headers, body), in its body or in `init(args)`, becomes the run's
//! request, built once: no Lua runs per request. Scripts that need Lua per request or around
//! the run (`request`, `response`, `delay`, `setup`, `done`) are refused with one line until
//! the engine runs them. Must not be on the request path, or print.

use std::collections::BTreeMap;
use std::path::Path;

use mlua::{Function, Lua, Table, Value};

use crate::plan::Plan;

/// The request a script made of the run's: what it left in the `wrk` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shaped {
    pub method: String,
    /// Path and query, as sent in the request line.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Why a script cannot shape the run.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("--script {0}: {1}")]
    Read(String, String),
    /// Lua's own message, with the file and line it names.
    #[error("--script: {0}")]
    Lua(String),
    #[error(
        "--script {0}: not supported yet: {1}; spate runs scripts that set wrk.method, wrk.path, wrk.headers and wrk.body (in the script or in init)"
    )]
    Unsupported(String, String),
    #[error("--script {0}: wrk.{1} must be a string")]
    NotText(String, &'static str),
}

/// The globals wrk calls per request or around the run, which this step does not run.
const PER_REQUEST: [&str; 5] = ["request", "response", "delay", "setup", "done"];

/// Runs the script `file` as wrk's threads would before their first request (its body, then
/// `init(args)` with the URL as `args[0]`), against a `wrk` table made from `plan`, and returns
/// the request it leaves there.
pub fn shape(file: &Path, args: &[String], plan: &Plan) -> Result<Shaped, ScriptError> {
    let name = file.display().to_string();
    let source = std::fs::read(file).map_err(|e| ScriptError::Read(name.clone(), e.to_string()))?;
    let lua = Lua::new();
    let wrk = wrk_table(&lua, plan).map_err(lua_error)?;
    lua.globals().set("wrk", wrk.clone()).map_err(lua_error)?;
    lua.load(&source[..])
        .set_name(format!("@{name}"))
        .exec()
        .map_err(lua_error)?;
    let globals = lua.globals();
    let defined: Vec<&str> = PER_REQUEST
        .into_iter()
        .filter(|g| matches!(globals.get::<Value>(*g), Ok(Value::Function(_))))
        .collect();
    if !defined.is_empty() {
        let list: Vec<String> = defined.iter().map(|g| format!("{g}()")).collect();
        return Err(ScriptError::Unsupported(name, list.join(", ")));
    }
    if let Ok(Value::Function(init)) = globals.get::<Value>("init") {
        let argv = lua.create_table().map_err(lua_error)?;
        argv.raw_set(0, plan.target.url.as_str())
            .map_err(lua_error)?;
        for (i, a) in args.iter().enumerate() {
            argv.raw_set(i + 1, a.as_str()).map_err(lua_error)?;
        }
        init.call::<()>(argv).map_err(lua_error)?;
    }
    read_back(&name, &wrk, plan)
}

/// `wrk` as the script sees it: the URL's parts and the request the flags made.
fn wrk_table(lua: &Lua, plan: &Plan) -> mlua::Result<Table> {
    let t = &plan.target;
    let wrk = lua.create_table()?;
    wrk.set("scheme", if t.tls { "https" } else { "http" })?;
    wrk.set("host", t.host.as_str())?;
    wrk.set("port", t.port)?;
    wrk.set("method", plan.method.as_str())?;
    wrk.set("path", t.path.as_str())?;
    let headers = lua.create_table()?;
    for (n, v) in &plan.headers {
        headers.set(n.as_str(), v.as_str())?;
    }
    wrk.set("headers", headers)?;
    match plan.body.is_empty() {
        true => wrk.set("body", Value::Nil)?,
        false => wrk.set("body", lua.create_string(&plan.body)?)?,
    }
    wrk.set("format", format_fn(lua, t.authority())?)?;
    Ok(wrk)
}

/// `wrk.format(method, path, headers, body)`: a request as bytes, each part defaulting to the
/// `wrk` table's, with the URL's Host (`authority`) unless a header names one, and
/// Content-Length when there is a body.
fn format_fn(lua: &Lua, authority: String) -> mlua::Result<Function> {
    type Args = (
        Option<String>,
        Option<String>,
        Option<Table>,
        Option<mlua::String>,
    );
    lua.create_function(move |lua, (method, path, headers, body): Args| {
        let wrk: Table = lua.globals().get("wrk")?;
        let method = method.unwrap_or(wrk.get("method")?);
        let path = path.unwrap_or(wrk.get("path")?);
        let body = match body {
            Some(b) => Some(b.as_bytes().to_vec()),
            None => wrk
                .get::<Option<mlua::String>>("body")?
                .map(|b| b.as_bytes().to_vec()),
        };
        let mut all: BTreeMap<String, String> = BTreeMap::new();
        for table in [Some(wrk.get::<Table>("headers")?), headers]
            .into_iter()
            .flatten()
        {
            for pair in table.pairs::<String, String>() {
                let (n, v) = pair?;
                all.insert(n, v);
            }
        }
        let mut out = format!("{method} {path} HTTP/1.1\r\n").into_bytes();
        if !all.keys().any(|n| n.eq_ignore_ascii_case("host")) {
            out.extend(format!("Host: {authority}\r\n").bytes());
        }
        for (n, v) in &all {
            out.extend(format!("{n}: {v}\r\n").bytes());
        }
        if let Some(b) = &body
            && !all.keys().any(|n| n.eq_ignore_ascii_case("content-length"))
        {
            out.extend(format!("Content-Length: {}\r\n", b.len()).bytes());
        }
        out.extend_from_slice(b"\r\n");
        if let Some(b) = body {
            out.extend(b);
        }
        lua.create_string(out)
    })
}

/// The request the `wrk` table holds once the script has run. Headers keep the flags' order;
/// those the script added follow, by name.
fn read_back(name: &str, wrk: &Table, plan: &Plan) -> Result<Shaped, ScriptError> {
    let text = |field: &'static str| -> Result<String, ScriptError> {
        match wrk.get::<Value>(field) {
            Ok(Value::String(s)) => Ok(s.to_string_lossy()),
            _ => Err(ScriptError::NotText(name.into(), field)),
        }
    };
    let method = text("method")?;
    let path = text("path")?;
    let body = match wrk.get::<Value>("body") {
        Ok(Value::Nil) => Vec::new(),
        Ok(Value::String(s)) => s.as_bytes().to_vec(),
        _ => return Err(ScriptError::NotText(name.into(), "body")),
    };
    let table: Table = wrk
        .get("headers")
        .map_err(|_| ScriptError::Lua(format!("{name}: wrk.headers must be a table")))?;
    let mut set: BTreeMap<String, String> = BTreeMap::new();
    for pair in table.pairs::<Value, Value>() {
        let (n, v) = pair.map_err(lua_error)?;
        let as_text = |v: &Value| match v {
            Value::String(s) => Some(s.to_string_lossy()),
            Value::Integer(i) => Some(i.to_string()),
            Value::Number(x) => Some(x.to_string()),
            _ => None,
        };
        match (as_text(&n), as_text(&v)) {
            (Some(n), Some(v)) => {
                set.insert(n, v);
            }
            _ => {
                return Err(ScriptError::Lua(format!(
                    "{name}: wrk.headers must map names to strings"
                )));
            }
        }
    }
    let mut headers: Vec<(String, String)> = Vec::new();
    for (n, _) in &plan.headers {
        if let Some(v) = set.remove(n) {
            headers.push((n.clone(), v));
        }
    }
    headers.extend(set);
    Ok(Shaped {
        method,
        path,
        headers,
        body,
    })
}

/// Lua's message on one line: the first, which names the file and line (a traceback follows).
fn lua_error(e: mlua::Error) -> ScriptError {
    let text = match &e {
        mlua::Error::CallbackError { cause, .. } => cause.to_string(),
        _ => e.to_string(),
    };
    let first = text.lines().next().unwrap_or_default();
    ScriptError::Lua(first.trim_start_matches("runtime error: ").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        let mut p = Plan::new(crate::target::Target::parse("http://h:8080/a?b=1").unwrap());
        p.headers = vec![
            ("Accept".into(), "x/y".into()),
            ("X-Keep".into(), "1".into()),
        ];
        p
    }

    fn script(name: &str, text: &str) -> crate::scratch::ScratchFile {
        crate::scratch::ScratchFile::new(name, text)
    }

    #[test]
    fn the_wrk_table_becomes_the_request() {
        let f = script(
            "post.lua",
            "wrk.method = 'POST'\nwrk.body = 'a=1'\nwrk.headers['Content-Type'] = 'f/u'\n\
             wrk.headers['Accept'] = 'z/z'\nwrk.headers['X-Keep'] = nil",
        );
        let s = shape(&f, &[], &plan()).unwrap();
        assert_eq!(s.method, "POST");
        assert_eq!(s.path, "/a?b=1");
        assert_eq!(s.body, b"a=1");
        // The flags' headers keep their order; the script's own follow.
        assert_eq!(
            s.headers,
            [
                ("Accept".into(), "z/z".into()),
                ("Content-Type".into(), "f/u".into())
            ]
        );
    }

    #[test]
    fn init_gets_the_url_and_the_words_after_the_double_dash() {
        let f = script(
            "init.lua",
            "function init(args) wrk.path = '/' .. args[1] .. '/' .. #args; \
             wrk.headers['X-Url'] = args[0] end",
        );
        let s = shape(&f, &["p".into(), "q".into()], &plan()).unwrap();
        assert_eq!(s.path, "/p/2");
        assert!(
            s.headers
                .contains(&("X-Url".into(), "http://h:8080/a?b=1".into()))
        );
    }

    #[test]
    fn wrk_format_builds_a_request_from_the_table() {
        let f = script(
            "format.lua",
            "wrk.method = 'PUT'\nwrk.body = 'xyz'\n\
             wrk.headers['X-Req'] = wrk.format(nil, '/f', {['X-B'] = '2'}):gsub('\\r\\n', '|')",
        );
        let s = shape(&f, &[], &plan()).unwrap();
        let req = &s.headers.iter().find(|(n, _)| n == "X-Req").unwrap().1;
        assert_eq!(
            req,
            "PUT /f HTTP/1.1|Host: h:8080|Accept: x/y|X-B: 2|X-Keep: 1|Content-Length: 3||xyz"
        );
    }

    #[test]
    fn script_errors_are_one_line_with_the_file_and_line() {
        for (text, want) in [
            ("wrk.method = ", "bad.lua:1:"),
            ("local x = nil\nx.y = 1", "bad.lua:2: attempt to index"),
            ("function init() error('no') end", "bad.lua:1: no"),
            ("wrk.method = {}", "wrk.method must be a string"),
            (
                "function request() return '' end",
                "not supported yet: request()",
            ),
            ("function done() end\nfunction delay() end", "done()"),
        ] {
            let f = script("bad.lua", text);
            let e = shape(&f, &[], &plan()).unwrap_err().to_string();
            assert!(e.contains(want) && !e.contains('\n'), "{text:?}: {e}");
        }
    }
}
