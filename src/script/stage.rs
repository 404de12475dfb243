//! The script's setup state, on the main thread, as wrk has it: the body runs once, `setup(thread)`
//! once per load thread before any starts (what it sets with `thread:set` and `thread.addr`
//! goes to that thread as a `Seed`), and `done(summary, latency, requests)` once after the run,
//! when `thread:get` reads what each thread's state left. Must not run during the load.

use std::net::SocketAddr;
use std::sync::Arc;

use hdrhistogram::Histogram;
use mlua::{AnyUserData, Lua, MetaMethod, UserData, UserDataFields, UserDataMethods, Value};

use super::values::Copied;
use super::worker::Seed;
use super::wrk::Addr;
use super::{Script, ScriptError, function, lua_error};
use crate::stats::RunOutput;

/// What one load thread's state left when the run ended: its globals, for `thread:get`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadEnd {
    pub globals: Vec<(String, Copied)>,
}

/// A load thread as `setup` and `done` see it.
struct Thread {
    /// Where the run connects without `thread.addr`.
    resolved: Option<SocketAddr>,
    addr: Option<SocketAddr>,
    vars: Vec<(String, Copied)>,
    /// After the run: the thread state's globals.
    ended: Option<ThreadEnd>,
}

impl UserData for Thread {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_field_method_get("addr", |_, t| Ok(t.addr.or(t.resolved).map(Addr)));
        f.add_field_method_set("addr", |_, t, v: Value| {
            t.addr = match &v {
                Value::Nil => None,
                Value::UserData(ud) => Some(ud.borrow::<Addr>()?.0),
                Value::String(s) => Some(s.to_str()?.parse().map_err(|_| {
                    mlua::Error::runtime(format!(
                        "thread.addr: {:?} is not an address (ip:port)",
                        s.to_string_lossy()
                    ))
                })?),
                other => {
                    return Err(mlua::Error::runtime(format!(
                        "thread.addr must be an address from wrk.lookup, not a {}",
                        other.type_name()
                    )));
                }
            };
            Ok(())
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("get", |lua, t, name: String| {
            let found = match &t.ended {
                Some(end) => end.globals.iter().find(|(k, _)| *k == name).map(|(_, v)| v),
                None => t
                    .vars
                    .iter()
                    .rev()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v),
            };
            match found {
                Some(v) => v.to_lua(lua),
                // Before the run, the thread's state holds what the body set, as this one does.
                None if t.ended.is_none() => {
                    let v = lua.globals().get::<Value>(name.as_str())?;
                    Copied::of(&v)
                        .map_err(|e| mlua::Error::runtime(format!("thread:get({name:?}): {e}")))?
                        .to_lua(lua)
                }
                None => Ok(Value::Nil),
            }
        });
        m.add_method_mut("set", |_, t, (name, v): (String, Value)| {
            let copied = Copied::of(&v)
                .map_err(|e| mlua::Error::runtime(format!("thread:set({name:?}): {e}")))?;
            t.vars.push((name, copied));
            Ok(())
        });
        m.add_method("stop", |_, _, ()| -> mlua::Result<()> {
            Err(mlua::Error::runtime(
                "thread:stop() can only be called while the thread is running (from its own state)",
            ))
        });
    }
}

/// The setup state.
pub struct Stage {
    lua: Lua,
    threads: Vec<AnyUserData>,
}

impl Stage {
    /// The state, with the script's body run.
    pub fn new(script: Arc<Script>) -> Result<Stage, ScriptError> {
        // SAFETY: as for a load thread's state (`Worker::new`): the user's own script.
        let lua = unsafe { Lua::unsafe_new() };
        super::guard(&lua).map_err(lua_error)?;
        script.echo.install(&lua).map_err(lua_error)?;
        let wrk = super::wrk::table(&lua, &script.base, false).map_err(lua_error)?;
        lua.globals().set("wrk", wrk).map_err(lua_error)?;
        lua.load(&script.source[..])
            .set_name(format!("@{}", script.name))
            .exec()
            .map_err(lua_error)?;
        Ok(Stage {
            lua,
            threads: Vec::new(),
        })
    }

    /// Calls `setup(thread)` for each of `threads` load threads, which connect to `resolved`
    /// unless the script says otherwise, and returns what each thread gets.
    pub fn seeds(
        &mut self,
        threads: usize,
        resolved: Option<SocketAddr>,
    ) -> Result<Vec<Seed>, ScriptError> {
        let setup = function(&self.lua.globals(), "setup");
        self.threads.clear();
        for _ in 0..threads {
            let t = self
                .lua
                .create_userdata(Thread {
                    resolved,
                    addr: None,
                    vars: Vec::new(),
                    ended: None,
                })
                .map_err(lua_error)?;
            if let Some(f) = &setup {
                f.call::<()>(t.clone()).map_err(lua_error)?;
            }
            self.threads.push(t);
        }
        self.threads
            .iter()
            .map(|t| {
                let t = t.borrow::<Thread>().map_err(lua_error)?;
                Ok(Seed {
                    vars: t.vars.clone(),
                    addr: t.addr,
                })
            })
            .collect()
    }

    /// Calls `done(summary, latency, requests)` with what `out` measured, after giving each
    /// thread what its state left (`ends`, in thread order).
    pub fn done(&self, out: &RunOutput, ends: &[ThreadEnd]) -> Result<(), ScriptError> {
        for (t, end) in self.threads.iter().zip(ends) {
            t.borrow_mut::<Thread>().map_err(lua_error)?.ended = Some(end.clone());
        }
        let Some(done) = function(&self.lua.globals(), "done") else {
            return Ok(());
        };
        let lua = &self.lua;
        let s = &out.stats;
        let summary = lua.create_table().map_err(lua_error)?;
        let errors = lua.create_table().map_err(lua_error)?;
        let set = |t: &mlua::Table, k: &str, v: u64| t.set(k, v).map_err(lua_error);
        let [connect, read, write, timeout] = s.wrk_errors();
        set(&errors, "connect", connect)?;
        set(&errors, "read", read)?;
        set(&errors, "write", write)?;
        set(&errors, "timeout", timeout)?;
        set(&errors, "status", s.completed - s.successful())?;
        set(&summary, "duration", out.elapsed.as_micros() as u64)?;
        set(&summary, "requests", s.completed)?;
        set(&summary, "bytes", s.bytes_in)?;
        summary.set("errors", errors).map_err(lua_error)?;
        let latency = Stats::Latency(s.latency.hdr());
        // Each thread's rate every 100 ms, as wrk samples it; a run too short for one sample
        // has each thread's rate over the run.
        let elapsed = out.elapsed.as_secs_f64();
        let over_run = |&n: &u64| {
            if elapsed > 0.0 {
                n as f64 / elapsed
            } else {
                0.0
            }
        };
        let rates = match s.rate_samples.is_empty() {
            false => s.rate_samples.clone(),
            true => s.per_thread.iter().map(over_run).collect(),
        };
        let requests = Stats::samples(rates);
        done.call::<()>((summary, latency, requests))
            .map_err(lua_error)
    }
}

/// A statistics object of `done()`: latency in microseconds from the run's histogram, or
/// samples (each thread's requests per second).
enum Stats {
    Latency(Histogram<u64>),
    /// Sorted.
    Samples(Vec<f64>),
}

impl Stats {
    fn samples(mut v: Vec<f64>) -> Stats {
        v.sort_by(f64::total_cmp);
        Stats::Samples(v)
    }

    fn field(&self, name: &str) -> Option<f64> {
        let us = |ns: u64| (ns / 1000) as f64;
        Some(match (self, name) {
            (Stats::Latency(h), _) if h.is_empty() => 0.0,
            (Stats::Latency(h), "min") => us(h.min()),
            (Stats::Latency(h), "max") => us(h.max()),
            (Stats::Latency(h), "mean") => h.mean() / 1e3,
            (Stats::Latency(h), "stdev") => h.stdev() / 1e3,
            (Stats::Samples(v), _) if v.is_empty() => 0.0,
            (Stats::Samples(v), "min") => v[0],
            (Stats::Samples(v), "max") => v[v.len() - 1],
            (Stats::Samples(v), "mean") => v.iter().sum::<f64>() / v.len() as f64,
            (Stats::Samples(v), "stdev") => {
                let mean = v.iter().sum::<f64>() / v.len() as f64;
                (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt()
            }
            _ => return None,
        })
    }

    /// The value below which `p` percent of the values lie: for latency, the report's own
    /// percentile, in whole microseconds.
    fn percentile(&self, p: f64) -> f64 {
        let q = (p / 100.0).clamp(0.0, 1.0);
        match self {
            Stats::Latency(h) if h.is_empty() => 0.0,
            Stats::Latency(h) => (h.value_at_quantile(q) / 1000) as f64,
            Stats::Samples(v) if v.is_empty() => 0.0,
            Stats::Samples(v) => {
                let rank = (q * v.len() as f64).ceil() as usize;
                v[rank.clamp(1, v.len()) - 1]
            }
        }
    }

    /// The distinct values, lowest first, with how often each was seen.
    fn values(&self) -> Vec<(f64, u64)> {
        match self {
            Stats::Latency(h) => h
                .iter_recorded()
                .map(|v| ((v.value_iterated_to() / 1000) as f64, v.count_at_value()))
                .collect(),
            Stats::Samples(v) => {
                let mut out: Vec<(f64, u64)> = Vec::new();
                for &x in v {
                    match out.last_mut() {
                        Some((y, n)) if *y == x => *n += 1,
                        _ => out.push((x, 1)),
                    }
                }
                out
            }
        }
    }
}

impl UserData for Stats {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("percentile", |_, s, p: f64| Ok(s.percentile(p)));
        m.add_meta_method(MetaMethod::Index, |lua, s, key: String| {
            match s.field(&key) {
                Some(x) => Ok(Value::Number(x)),
                None => match key.as_str() {
                    "percentile" => lua
                        .create_function(|_, (s, p): (mlua::UserDataRef<Stats>, f64)| {
                            Ok(s.percentile(p))
                        })
                        .map(Value::Function),
                    _ => Ok(Value::Nil),
                },
            }
        });
        m.add_meta_method(MetaMethod::Len, |_, s, ()| Ok(s.values().len()));
        // stats(i): the i-th distinct value, lowest first, and its count.
        m.add_meta_method(MetaMethod::Call, |_, s, i: usize| {
            Ok(i.checked_sub(1)
                .and_then(|k| s.values().get(k).copied())
                .map_or((Value::Nil, Value::Nil), |(v, n)| {
                    (Value::Number(v), Value::Number(n as f64))
                }))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Plan;

    fn stage(text: &str) -> (crate::scratch::ScratchFile, Stage) {
        let f = crate::scratch::ScratchFile::new("s.lua", text);
        let plan = Plan::new(crate::target::Target::parse("http://h:8080/a").unwrap());
        let s = Script::load(&f, &[], &plan).unwrap();
        s.echo.hold();
        (f, Stage::new(Arc::new(s)).unwrap())
    }

    #[test]
    fn setup_gives_each_thread_its_values_and_address() {
        let (_f, mut st) = stage(
            "local n = 0 b = 'body' \
             function setup(t) n = n + 1 t:set('id', n) t:set('tbl', {k = n}) \
             got = t:get('b') .. ' ' .. tostring(t:get('id')) .. ' ' .. tostring(t.addr) \
             if n == 2 then t.addr = '127.0.0.2:81' end end",
        );
        let resolved = Some("127.0.0.1:8080".parse().unwrap());
        let seeds = st.seeds(2, resolved).unwrap();
        let lua = Lua::new();
        let value = |v: &Copied| v.to_lua(&lua).unwrap();
        assert_eq!(seeds[0].vars[0].0, "id");
        assert_eq!(value(&seeds[0].vars[0].1), Value::Integer(1));
        assert_eq!(seeds[1].vars[1].0, "tbl");
        let Value::Table(t) = value(&seeds[1].vars[1].1) else {
            panic!("not a table");
        };
        assert_eq!(t.get::<i64>("k").unwrap(), 2);
        assert_eq!(seeds[0].addr, None);
        assert_eq!(seeds[1].addr, Some("127.0.0.2:81".parse().unwrap()));
        let got: String = st.lua.globals().get("got").unwrap();
        assert_eq!(got, "body 2 127.0.0.1:8080");
    }

    #[test]
    fn stop_in_setup_is_refused_with_a_reason() {
        let (_f, mut st) = stage("function setup(t) t:stop() end");
        let e = st.seeds(1, None).unwrap_err().to_string();
        assert!(
            e.contains("only be called while the thread is running"),
            "{e}"
        );
    }

    #[test]
    fn latency_statistics_are_in_microseconds_and_match_the_histogram() {
        let mut h = crate::stats::Hist::new();
        for us in [100u64, 200, 200, 300, 10_000] {
            h.record(us * 1000);
        }
        let s = Stats::Latency(h.hdr());
        // As the report's: the histogram's own minimum, in whole microseconds.
        assert_eq!(s.field("min"), Some((h.hdr().min() / 1000) as f64));
        assert_eq!(s.field("max"), Some((h.hdr().max() / 1000) as f64));
        assert_eq!(s.percentile(50.0), 200.0);
        assert_eq!(
            s.percentile(99.0),
            (h.hdr().value_at_quantile(0.99) / 1000) as f64
        );
        assert_eq!(s.values().len(), 4);
        assert_eq!(s.values()[1], (200.0, 2));
        let r = Stats::samples(vec![3.0, 1.0, 2.0, 2.0]);
        assert_eq!(r.field("mean"), Some(2.0));
        assert_eq!(r.percentile(50.0), 2.0);
        assert_eq!(r.percentile(100.0), 3.0);
        assert_eq!(r.values(), [(1.0, 1), (2.0, 2), (3.0, 1)]);
    }

    #[test]
    fn statistics_objects_answer_as_wrk_documents() {
        let lua = Lua::new();
        lua.globals()
            .set("r", Stats::samples(vec![10.0, 30.0]))
            .unwrap();
        let got: String = lua
            .load(
                "local v, n = r(2) return r.min .. ' ' .. r.max .. ' ' .. r.mean .. ' ' \
                 .. r:percentile(50) .. ' ' .. #r .. ' ' .. v .. ' ' .. n .. ' ' .. tostring(r.nope)",
            )
            .eval()
            .unwrap();
        assert_eq!(got, "10 30 20 10 2 30 1 nil");
    }
}
