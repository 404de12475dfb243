//! `-s FILE [-- ARGS]`: wrk's Lua scripting API, run by LuaJIT. `Script::load` reads the
//! script and runs its body (and `init`, when no `setup` gives threads values) once in a state
//! of its own, to learn what it defines and the request its `wrk` table shapes: a script that
//! only shapes the request becomes the run's pre-built request, with no Lua per request. The
//! rest runs where wrk runs it: `setup`/`done` in the main thread's state (`stage`), and a state
//! per load thread (`worker`) for `init`, `delay`, `request` and `response`. Must not be on
//! the static path's requests.

mod batch;
mod echo;
pub mod interrupt;
mod look;
mod raw;
mod stage;
mod values;
mod worker;
mod wrk;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use mlua::{Function, Lua, Table, Value};

pub use crate::plan::Defines;
use crate::plan::{Plan, ScriptPlan};
pub use batch::{Batch, check_batch};
pub use echo::{Echo, Sink};
pub use look::first_request;
pub use stage::{Stage, ThreadEnd};
pub use values::Copied;
pub use worker::{MAX_HEARD_BODY, Made, Seed, Worker};
pub use wrk::Base;

/// The request a script made of the run's: what it left in the `wrk` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shaped {
    pub method: String,
    /// Path and query, as sent in the request line.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Shaped {
    /// `plan` with this request.
    pub fn apply(&self, plan: &mut Plan) {
        plan.method.clone_from(&self.method);
        plan.target.path.clone_from(&self.path);
        plan.headers.clone_from(&self.headers);
        plan.body.clone_from(&self.body);
    }
}

/// Why a script cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read, or is larger than spate reads.
    #[error("{0}")]
    File(String),
    /// Lua's own message, with the file and line it names.
    #[error("--script: {0}")]
    Lua(String),
    #[error("--script {0}: wrk.{1} must be a string")]
    NotText(String, &'static str),
}

/// A script, read and checked, with what a run needs to start its states.
#[derive(Debug)]
pub struct Script {
    pub name: String,
    file: std::path::PathBuf,
    source: Vec<u8>,
    /// The words after `--`: `args[1]` on.
    pub args: Vec<String>,
    pub base: Base,
    /// Where `print` and `io.write` go, from every state.
    pub echo: Arc<Echo>,
    pub defines: Defines,
    /// The request the `wrk` table holds after the body (and `init`, without `setup`).
    pub shaped: Shaped,
}

impl Script {
    /// Reads `file` and runs it once, as wrk's threads would before their first request, to
    /// learn what it defines and the request it shapes from `plan`'s. What it prints here is
    /// not shown: each thread's state prints it again.
    pub fn load(file: &Path, args: &[String], plan: &Plan) -> Result<Script, ScriptError> {
        let name = file.display().to_string();
        let source = crate::files::read("--script", file, crate::files::SCRIPT_LIMIT)
            .map_err(ScriptError::File)?;
        let base = Base::of(plan);
        let lua = Lua::new();
        guard(&lua).map_err(lua_error)?;
        let quiet = Echo::new(Sink::Held);
        quiet.install(&lua).map_err(lua_error)?;
        let wrk = wrk::table(&lua, &base, true).map_err(lua_error)?;
        let me = worker::Me {
            addr: None,
            stopped: Default::default(),
        };
        wrk.set("thread", me).map_err(lua_error)?;
        lua.globals().set("wrk", wrk.clone()).map_err(lua_error)?;
        lua.load(&source[..])
            .set_name(format!("@{name}"))
            .exec()
            .map_err(lua_error)?;
        let globals = lua.globals();
        let has = |g: &str| matches!(globals.get::<Value>(g), Ok(Value::Function(_)));
        let mut defines = Defines {
            setup: has("setup"),
            init: has("init"),
            delay: has("delay"),
            request: has("request"),
            response: has("response"),
            done: has("done"),
        };
        // With setup(), init may read what setup gives each thread, which this state lacks.
        if let (Ok(Value::Function(init)), false) = (globals.get::<Value>("init"), defines.setup) {
            let argv = lua.create_table().map_err(lua_error)?;
            argv.raw_set(0, base.url.as_str()).map_err(lua_error)?;
            for (i, a) in args.iter().enumerate() {
                argv.raw_set(i + 1, a.as_str()).map_err(lua_error)?;
            }
            init.call::<()>(argv).map_err(lua_error)?;
            // wrk looks for these after init: init may define them.
            defines.delay = has("delay");
            defines.request = has("request");
            defines.response = has("response");
        }
        let shaped = read_back(&name, &wrk, &base)?;
        let per_thread = defines.per_thread();
        Ok(Script {
            name,
            file: file.to_path_buf(),
            source,
            args: args.to_vec(),
            base,
            // A state per thread prints what its body prints again; without one this run of the
            // body is the only one, and what it printed is written when the run's output is set.
            echo: match per_thread {
                true => Echo::new(Sink::Stdout),
                false => quiet,
            },
            defines,
            shaped,
        })
    }

    /// Reads `file` and compiles it, running nothing: its syntax is checked for a run made
    /// elsewhere (`spate k8s-job`'s pods), where what only running it can show is checked.
    pub fn compile(file: &Path) -> Result<(), ScriptError> {
        let name = file.display().to_string();
        let source = crate::files::read("--script", file, crate::files::SCRIPT_LIMIT)
            .map_err(ScriptError::File)?;
        Lua::new()
            .load(&source[..])
            .set_name(format!("@{name}"))
            .into_function()
            .map(drop)
            .map_err(lua_error)
    }

    /// Lua runs around requests: the connections go through the scripted lane.
    pub fn per_request(&self) -> bool {
        self.defines.per_request()
    }

    /// Each load thread needs a state of its own (to run `init`, or what `setup` gave it).
    pub fn per_thread(&self) -> bool {
        self.defines.per_thread()
    }

    /// The script as a plan names it.
    pub fn planned(&self) -> ScriptPlan {
        ScriptPlan {
            file: self.file.clone(),
            args: self.args.clone(),
            defines: self.defines,
        }
    }
}

/// A loaded script, shared by the run's threads and passed beside the plan that names it
/// (`Plan::script`): two compare equal when they are the same load.
#[derive(Debug, Clone)]
pub struct Loaded(pub Arc<Script>);

impl Loaded {
    /// Reads and runs `file` once for `plan` (`Script::load`), shapes `plan`'s request as the
    /// script's `wrk` table leaves it, and names the script in `plan`.
    pub fn load(file: &Path, args: &[String], plan: &mut Plan) -> Result<Loaded, ScriptError> {
        let script = Script::load(file, args, plan)?;
        script.shaped.apply(plan);
        plan.script = Some(script.planned());
        Ok(Loaded(Arc::new(script)))
    }
}

impl PartialEq for Loaded {
    fn eq(&self, other: &Loaded) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Loaded {}

impl std::ops::Deref for Loaded {
    type Target = Script;

    fn deref(&self) -> &Script {
        &self.0
    }
}

/// Most memory one Lua state may hold (the setup state and each load thread's): past it the
/// script gets Lua's "not enough memory" error, which ends the run with its report, instead of
/// spate running out of memory.
pub const LUA_MEMORY: usize = 512 << 20;

/// What every state a script runs in gets before the script: the memory limit, and an
/// `os.exit` that ends the run (with its report) rather than spate, as a Lua error at the
/// caller's line.
fn guard(lua: &Lua) -> mlua::Result<()> {
    // Unavailable only where Lua keeps its own allocator; the state then has no limit.
    let _ = lua.set_memory_limit(LUA_MEMORY);
    lua.load(
        "local error, tostring = error, tostring \
         if os then os.exit = function(code) \
           error('os.exit(' .. tostring(code) .. ') called: a script cannot end spate; \
the run stops here, with its report (wrk.thread:stop() stops one thread)', 2) \
         end end",
    )
    .set_name("=spate")
    .exec()
}

/// A function the script defines, if it is one.
fn function(globals: &Table, name: &str) -> Option<Function> {
    match globals.get::<Value>(name) {
        Ok(Value::Function(f)) => Some(f),
        _ => None,
    }
}

/// The request the `wrk` table holds once the script has run. Headers keep the flags' order;
/// those the script added follow, by name.
pub(crate) fn read_back(name: &str, wrk: &Table, base: &Base) -> Result<Shaped, ScriptError> {
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
    // The Host the URL implies is wrk's, not the script's.
    if set.get("Host") == Some(&base.authority) {
        set.remove("Host");
    }
    let mut headers: Vec<(String, String)> = Vec::new();
    for (n, _) in &base.headers {
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
    ScriptError::Lua(out_of_memory(first.trim_start_matches("runtime error: ")))
}

/// Lua's message, with the limit named when it is Lua's "not enough memory".
fn out_of_memory(message: &str) -> String {
    match message.ends_with("not enough memory") {
        true => format!(
            "{message}: a script's Lua state may hold {} MiB",
            LUA_MEMORY >> 20
        ),
        false => message.to_string(),
    }
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

    fn shape(f: &Path, args: &[String], plan: &Plan) -> Result<Shaped, ScriptError> {
        Script::load(f, args, plan).map(|s| s.shaped)
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
        // The flags' headers keep their order; the script's own follow; the URL's Host is not
        // the script's.
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
    fn what_a_script_defines_decides_where_it_runs() {
        for (text, per_request, per_thread) in [
            ("wrk.method = 'PUT'", false, false),
            ("function init() end", false, true),
            ("function setup() end function done() end", false, true),
            ("function request() return wrk.format() end", true, true),
            ("function init() function response() end end", true, true),
            ("function delay() return 1 end", true, true),
        ] {
            let f = script("d.lua", text);
            let s = Script::load(&f, &[], &plan()).unwrap();
            assert_eq!(s.per_request(), per_request, "{text}");
            assert_eq!(s.per_thread(), per_thread, "{text}");
        }
    }

    #[test]
    fn script_errors_are_one_line_with_the_file_and_line() {
        for (text, want) in [
            ("wrk.method = ", "bad.lua:1:"),
            ("local x = nil\nx.y = 1", "bad.lua:2: attempt to index"),
            ("function init() error('no') end", "bad.lua:1: no"),
            ("wrk.method = {}", "wrk.method must be a string"),
        ] {
            let f = script("bad.lua", text);
            let e = shape(&f, &[], &plan()).unwrap_err().to_string();
            assert!(e.contains(want) && !e.contains('\n'), "{text:?}: {e}");
        }
    }
}
